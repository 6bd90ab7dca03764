"""The site's HTML views, one module per concern: site.py (home, browse, upload, unlock, dashboard,
static pages), viewer.py (the trajectory page and its fragments) and compare.py. /healthz and the
error handlers are apps.core.views.
"""
