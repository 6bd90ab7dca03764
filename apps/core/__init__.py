"""The ground floor: what every app uses and no app owns.

Owns the HTTP helpers (client address, body reading), the middleware, the API base view, its
error type, handler and pagination, the read-only admin, the health and error views, the
context processor, and the cross-cutting mechanisms: one lock (`locks`), one rate limiter
(`ratelimit`), one signed-link and digest module (`signing`) and one way for a service to
queue a task by its name (`queueing`).

May import: Django, the standard library and third-party libraries only; never another app.

Also here: the pagination partial several apps' pages include (templates/core/) and instants
in UTC (`dates`). Other apps' exception types reach the API's one error handler through
`api.errors.register_error`, called from their AppConfig.ready().
"""
