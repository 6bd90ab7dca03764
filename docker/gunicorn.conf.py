"""Gunicorn settings for TrajHub's web process (docker/compose.yaml, tests/infra, bench/).

Environment: GUNICORN_BIND (default 127.0.0.1:8000, loopback: with TRAJHUB_TRUSTED_PROXIES=1 a client reaching gunicorn directly could forge X-Forwarded-For; compose sets 0.0.0.0:8000 on its private network), WEB_CONCURRENCY (worker processes, read by
gunicorn itself; default 2 x CPUs + 1 here), GUNICORN_TIMEOUT (seconds, default 120: a 50 MB
upload on a slow link must finish), GUNICORN_FORWARDED_ALLOW_IPS (proxies trusted for
X-Forwarded-*).
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# gunicorn 25+ opens a control socket at a fixed path (~/.gunicorn/gunicorn.ctl) that two
# instances on one machine would share: off unless GUNICORN_CONTROL_SOCKET names one.
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET", "") or "gunicorn.ctl"
control_socket_disable = not os.environ.get("GUNICORN_CONTROL_SOCKET")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
# Sync workers: each request holds one process; ingest is CPU and database bound, not idle I/O.
# Gunicorn's own, except that what gunicorn refuses before Django sees it (a header over the
# limit, a malformed line or chunk) is answered in the site's JSON, not an HTML page.
worker_class = "config.gunicorn_worker.SyncWorker"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a large upload's memory does not stay with the process forever.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "1000"))
max_requests_jitter = max_requests // 10
# Heartbeat files on tmpfs: a container's overlay filesystem can stall them.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
# No request-line limit of gunicorn's own: its 414 is an HTML page API clients cannot read.
# Django answers a query string over TRAJHUB_MAX_QUERY_BYTES with a JSON 414 instead (gunicorn
# still stops a line at 1 MB, and nginx in front at its large_client_header_buffers).
limit_request_line = 0
# Header lines as long as nginx in front lets through (large_client_header_buffers 64k), so a
# header nginx accepts is never refused behind it; longer ones are refused in JSON (431).
limit_request_field_size = 65536
accesslog = "-"
# The path without the query string, and no referrer: the share API takes an anonymous sharer's
# contact `email` as a query parameter, and email addresses never reach logs.
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "info")


def post_worker_init(worker):
    # Each worker loads the retrieval index and the dense encoder before its first request
    # (without it the first /api/v1/retrieve of every new worker pays the model's load).
    from apps.learn.retrieval import warm

    warm()
