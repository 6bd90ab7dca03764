"""The site's HTML views, one module per concern: site.py (home, browse, upload, unlock, dashboard,
static pages), viewer.py (the trajectory page and its fragments), health.py (/healthz) and
errors.py (the 404/500 handlers).

The handlers and /healthz are re-exported here because config/urls.py names them.
"""

from apps.trajectories.views.errors import page_not_found, server_error
from apps.trajectories.views.health import healthz

__all__ = ["healthz", "page_not_found", "server_error"]
