"""The site-wide views: health.py (/healthz) and errors.py (the 404/500 handlers, the CSRF
failure page and the error answer the middleware gives before any view runs)."""
