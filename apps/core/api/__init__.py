"""The base of every app's REST API: the one error type and its handler (errors.py), the JSON-only
base view (views.py), content negotiation (negotiation.py), checked cursor pagination
(pagination.py) and the parser that declares a JSON body a view reads itself (parsers.py)."""
