"""TrajHub settings.

The only module that reads the environment. With nothing set, TrajHub runs embedded: SQLite and
files under var/, Celery on a broker that needs no server. DATABASE_URL, REDIS_URL and
STORAGE_BACKEND=s3 switch to PostgreSQL, Redis and S3 for production.
"""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("TRAJHUB_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value)


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value in (None, "") else float(value)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", False)
# Production must set its own key; the embedded default (no DATABASE_URL) may use a local one.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if os.environ.get("DATABASE_URL"):
        raise RuntimeError("DJANGO_SECRET_KEY must be set when DATABASE_URL is set (production).")
    SECRET_KEY = "embedded-only-insecure-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "apps.core.views.errors.csrf_failure"
# Links in mails, feeds and the API. `make run` also writes the address it serves on to
# var/site_url, so that a command run beside it (build_release, a notice sent from the shell)
# links to that port too, not to 8000.
SITE_URL_FILE = VAR_DIR / "site_url"


def _site_url() -> str:
    if os.environ.get("TRAJHUB_SITE_URL"):
        return os.environ["TRAJHUB_SITE_URL"]
    if not os.environ.get("DATABASE_URL"):
        try:
            return SITE_URL_FILE.read_text(encoding="utf-8").strip() or "http://127.0.0.1:8000"
        except OSError:
            pass
    return "http://127.0.0.1:8000"


SITE_URL = _site_url().rstrip("/")
SITE_NAME = "TrajHub"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.sitemaps",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    "apps.core",
    "apps.accounts",
    "apps.trajectories",
    "apps.moderation",
    "apps.owners",
    "apps.stars",
    "apps.feedback",
    "apps.datasets",
    "apps.learn",
    "apps.stats",
    "apps.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "apps.core.middleware.ContentSecurityPolicyMiddleware",
    "apps.core.middleware.RequestLimitsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.core.context_processors.site",
                "apps.trajectories.context_processors.ocr_notice",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # WAL lets the web process read while the worker writes.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

# --- Cache, broker, tasks -----------------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
    CELERY_BROKER_URL = REDIS_URL
    # A message a worker took but never acknowledged (the whole worker was killed) goes back to
    # the queue after this long. Longer than a task may run (else a slow task runs twice), and
    # not Redis' default hour.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int(
            "CELERY_BROKER_VISIBILITY_TIMEOUT", env_int("CELERY_TASK_TIME_LIMIT", 900) + 60
        )
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
    # Kombu's filesystem transport: a real broker that needs no server, shared by web, worker and beat.
    # "localhost" only keeps kombu from warning that no hostname was given.
    CELERY_BROKER_URL = "filesystem://localhost//"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(VAR_DIR / "celery" / "queue"),
        "data_folder_out": str(VAR_DIR / "celery" / "queue"),
        "processed_folder": str(VAR_DIR / "celery" / "processed"),
        "store_processed": False,
        # Exchange tables for fanout (worker remote control); kombu's default is ./control.
        "control_folder": str(VAR_DIR / "celery" / "control"),
    }
    # Kombu does not create these folders, and the first process to enqueue may be the web one.
    for _folder in ("queue", "processed", "control"):
        (VAR_DIR / "celery" / _folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
# A pool process killed in the middle of a task (OOM, kill -9): the message goes back to the
# queue at once instead of being acknowledged as failed (and the trajectory left unscanned).
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A worker keeps retrying the broker while it starts (Redis may come up after it in compose).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 600)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 900)
CELERY_TASK_IGNORE_RESULT = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE: dict = {
    "scan-sweep": {
        "task": "apps.moderation.tasks.scan_sweep",
        "schedule": float(env_int("TRAJHUB_SCAN_SWEEP_SECONDS", 300)),
    },
    # Public trajectories scanned by older rules, newest first, TRAJHUB_SCAN_SWEEP_BATCH a time.
    "rescan-sweep": {
        "task": "apps.moderation.tasks.rescan_sweep",
        "schedule": float(env_int("TRAJHUB_RESCAN_SWEEP_SECONDS", 600)),
    },
    # Checks often; the service builds only when TRAJHUB_RELEASE_EVERY_DAYS have passed, and
    # publishes an announced release as soon as its opt-out window ends.
    "release-run": {
        "task": "apps.datasets.tasks.release_run",
        "schedule": env_float("TRAJHUB_RELEASE_CHECK_SECONDS", 3600.0),
    },
    # Data export archives past TRAJHUB_EXPORT_KEEP_DAYS are deleted (manage.py export_sweep).
    "export-expired-sweep": {
        "task": "apps.accounts.tasks.export_expired_sweep",
        "schedule": 3600.0,
    },
    "orphan-sweep": {
        "task": "apps.trajectories.tasks.orphan_sweep",
        "schedule": float(env_int("TRAJHUB_ORPHAN_SWEEP_SECONDS", 3600)),
    },
    # Redaction indexes not current (stored before the index, or a lost refresh), public first.
    "redaction-index-sweep": {
        "task": "apps.trajectories.tasks.redaction_index_sweep",
        "schedule": float(env_int("TRAJHUB_REDACTION_INDEX_SWEEP_SECONDS", 300)),
    },
}

# --- Storage ------------------------------------------------------------------------------------
# Aliases: "default" holds private files (raw uploads, images); "releases" holds public releases.
STORAGE_BACKEND = os.environ.get("STORAGE_BACKEND", "local")
MEDIA_ROOT = VAR_DIR / "media"
MEDIA_URL = "/media/"  # never served directly: files are streamed by views that check access
STATIC_ROOT = VAR_DIR / "static"
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]


def s3_storages(
    *,
    bucket: str,
    endpoint_url: str | None = None,
    region: str | None = None,
    access_key: str | None = None,
    secret_key: str | None = None,
) -> dict:
    """The "default" and "releases" storages on one S3 bucket (also used by tests/infra)."""
    options = {
        "bucket_name": bucket,
        "endpoint_url": endpoint_url or None,
        "region_name": region or None,
        "access_key": access_key,
        "secret_key": secret_key,
        "default_acl": None,
        "querystring_auth": True,
        "file_overwrite": True,
    }
    backend = "storages.backends.s3.S3Storage"
    return {
        "default": {"BACKEND": backend, "OPTIONS": {**options, "location": "private"}},
        "releases": {"BACKEND": backend, "OPTIONS": {**options, "location": "releases"}},
    }


if STORAGE_BACKEND == "s3":
    STORAGES = s3_storages(
        bucket=os.environ["AWS_STORAGE_BUCKET_NAME"],
        endpoint_url=os.environ.get("AWS_S3_ENDPOINT_URL"),
        region=os.environ.get("AWS_S3_REGION_NAME"),
        access_key=os.environ.get("AWS_ACCESS_KEY_ID"),
        secret_key=os.environ.get("AWS_SECRET_ACCESS_KEY"),
    )
else:
    STORAGES = {
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(MEDIA_ROOT / "private")},
        },
        "releases": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(MEDIA_ROOT / "releases"), "base_url": "/releases/files/"},
        },
    }
STORAGES["staticfiles"] = {
    "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
    if not DEBUG
    else "django.contrib.staticfiles.storage.StaticFilesStorage"
}

# --- Auth ---------------------------------------------------------------------------------------
SITE_ID = 1
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/me/"
# Sign-up takes an email (password reset and notices go there); sign in with either.
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
# Whether a new address must be confirmed before it signs in: on a public site (PostgreSQL),
# yes; on a laptop, the link is in var/mail/ and need not be followed.
ACCOUNT_EMAIL_VERIFICATION = os.environ.get(
    "TRAJHUB_EMAIL_VERIFICATION", "mandatory" if os.environ.get("DATABASE_URL") else "optional"
)
if ACCOUNT_EMAIL_VERIFICATION not in ("mandatory", "optional", "none"):
    raise RuntimeError("TRAJHUB_EMAIL_VERIFICATION must be mandatory, optional or none")
# Forms answer the same whether or not an address has an account (reset, sign-up).
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = True
# Usernames are public ("shared by …", the API's owner field): they may not be email addresses.
ACCOUNT_USERNAME_VALIDATORS = "apps.accounts.validators.username_validators"
SOCIALACCOUNT_LOGIN_ON_GET = False
# A GitHub sign-in never signs into, nor attaches itself to, an existing local account because
# an email matches: the local address may be unverified (anyone could have typed it), so that
# would be an account takeover. A GitHub user whose address is taken is asked for another one;
# the account's owner connects GitHub from their account instead.
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = False
SOCIALACCOUNT_AUTO_SIGNUP = True
SOCIALACCOUNT_QUERY_EMAIL = True
SOCIALACCOUNT_PROVIDERS = {
    "github": {
        # user:email: GitHub's /user/emails, which says which addresses GitHub has verified
        # (the profile's email is empty when the user keeps theirs private).
        "SCOPE": ["read:user", "user:email"],
        "APP": {
            "client_id": os.environ.get("GITHUB_CLIENT_ID", ""),
            "secret": os.environ.get("GITHUB_CLIENT_SECRET", ""),
        },
    }
}

# --- Email --------------------------------------------------------------------------------------
# Real mail when EMAIL_HOST is set (Django's SMTP backend); otherwise each message is a file in
# var/mail/ (the embedded default: a laptop has no mail server). Tests use Django's outbox.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env_int("EMAIL_PORT", 587)
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", EMAIL_PORT == 587)
    EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 20)
else:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = str(VAR_DIR / "mail")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "TrajHub <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[TrajHub] "

SESSION_COOKIE_HTTPONLY = True
# Secure cookies whenever the site is served over HTTPS, unless the operator says otherwise.
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", SITE_URL.startswith("https://"))
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Behind a TLS-terminating proxy (TRAJHUB_SITE_URL is https): trust its X-Forwarded-Proto,
# send HTTP to HTTPS, and tell browsers to stay on HTTPS.
if SITE_URL.startswith("https://"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 60 * 60 * 24 * 365)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
X_FRAME_OPTIONS = "DENY"

# --- API ----------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    # Every JSON body is read with the nesting guard of uploads (TRAJHUB_MAX_JSON_DEPTH): DRF's
    # own JSONParser let a few thousand levels raise RecursionError, a 500.
    "DEFAULT_PARSER_CLASSES": [
        "apps.trajectories.api.parsers.DepthCheckedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.core.api.errors.exception_handler",
    "NUM_PROXIES": env_int("TRAJHUB_TRUSTED_PROXIES", 0) or None,
    "DEFAULT_THROTTLE_RATES": {
        "anon_share": os.environ.get("TRAJHUB_ANON_SHARE_RATE", "60/hour"),
        "retrieve": os.environ.get("TRAJHUB_RETRIEVE_RATE", "60/minute"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "TrajHub API",
    # Swagger UI renders the description as Markdown: the way back to the site from the docs.
    "DESCRIPTION": (
        "Share, fetch and download AI agent trajectories.\n\n"
        "[← Back to the site](/) · [Browse](/browse/) · [Stats](/stats/) · "
        "[Releases](/releases/)"
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from our own static files: the docs work offline and under our CSP.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        # The OpenHands drop-in is a plain Django view: the schema names it by hand.
        "apps.trajectories.api.schema.add_openhands_drop_in",
    ],
    # Two choice sets share the name "outcome": what is stored (three states) and what the
    # owner may set (two, or empty to clear).
    "ENUM_NAME_OVERRIDES": {
        "OutcomeEnum": "apps.trajectories.models.Outcome",
        "OwnerOutcomeEnum": "apps.trajectories.api.serializers.OWNER_OUTCOME_CHOICES",
    },
}

# --- TrajHub ------------------------------------------------------------------------------------
TRAJHUB_ANONYMOUS_SHARING = env_bool("TRAJHUB_ANONYMOUS_SHARING", True)
TRAJHUB_MAX_BODY_BYTES = env_int("TRAJHUB_MAX_BODY_BYTES", 50 * 1024 * 1024)
TRAJHUB_MAX_DECOMPRESSED_BYTES = env_int("TRAJHUB_MAX_DECOMPRESSED_BYTES", 200 * 1024 * 1024)
# Zip uploads (an Inspect .eval log, a Claude Code session folder): entries, one entry's
# decompressed size, and its compression ratio; the total is TRAJHUB_MAX_DECOMPRESSED_BYTES.
TRAJHUB_MAX_ZIP_ENTRIES = env_int("TRAJHUB_MAX_ZIP_ENTRIES", 1000)
TRAJHUB_MAX_ZIP_ENTRY_BYTES = env_int("TRAJHUB_MAX_ZIP_ENTRY_BYTES", 100 * 1024 * 1024)
TRAJHUB_MAX_ZIP_RATIO = env_int("TRAJHUB_MAX_ZIP_RATIO", 200)
TRAJHUB_MAX_EVENTS = env_int("TRAJHUB_MAX_EVENTS", 50_000)
TRAJHUB_MAX_FIELD_BYTES = env_int("TRAJHUB_MAX_FIELD_BYTES", 10 * 1024 * 1024)
TRAJHUB_MAX_JSON_DEPTH = env_int("TRAJHUB_MAX_JSON_DEPTH", 200)
# A longer query string is a 414 JSON error; docker/nginx.conf lets lines this long through.
TRAJHUB_MAX_QUERY_BYTES = env_int("TRAJHUB_MAX_QUERY_BYTES", 32 * 1024)
TRAJHUB_ANON_SHARES_PER_HOUR = env_int("TRAJHUB_ANON_SHARES_PER_HOUR", 60)
# Reverse proxies in front of the site (0: clients connect directly). Rate limits count the
# address the outermost trusted proxy saw, from X-Forwarded-For.
TRAJHUB_TRUSTED_PROXIES = env_int("TRAJHUB_TRUSTED_PROXIES", 0)
TRAJHUB_LICENSE = os.environ.get("TRAJHUB_LICENSE", "MIT")
# Where the removal page tells people to write to the moderators (empty: not published).
TRAJHUB_CONTACT_EMAIL = os.environ.get("TRAJHUB_CONTACT_EMAIL", "")
TRAJHUB_PREMODERATION = env_bool("TRAJHUB_PREMODERATION", False)
# Deletion by email (accounts): how long the emailed link works, and how many links an hour one
# client address and one email address may ask for.
TRAJHUB_EMAIL_DELETION_HOURS = env_int("TRAJHUB_EMAIL_DELETION_HOURS", 24)
TRAJHUB_EMAIL_DELETION_PER_HOUR = env_int("TRAJHUB_EMAIL_DELETION_PER_HOUR", 5)
# Data export (accounts): how long a built archive stays downloadable.
TRAJHUB_EXPORT_KEEP_DAYS = env_int("TRAJHUB_EXPORT_KEEP_DAYS", 7)
# Where a GitHub avatar may be fetched from (scheme://host prefixes): nothing else is requested.
TRAJHUB_AVATAR_SOURCES = env_list(
    "TRAJHUB_AVATAR_SOURCES", ["https://avatars.githubusercontent.com/"]
)
TRAJHUB_AUTO_REDACT_KINDS = env_list(
    "TRAJHUB_AUTO_REDACT_KINDS", ["email", "phone", "ip_address", "user_name", "host"]
)
# Added to apps.moderation.scanning.allowlist.DEFAULT_ALLOWLIST (reserved example domains,
# loopback/private/documentation networks, placeholders). Keys: domains, networks, values,
# patterns, phones; "use_defaults": False replaces the defaults instead.
TRAJHUB_SCAN_ALLOWLIST: dict = {
    "domains": env_list("TRAJHUB_SCAN_ALLOWLIST_DOMAINS", []),
    "values": env_list("TRAJHUB_SCAN_ALLOWLIST_VALUES", []),
}
# The sweep's lock expires this long after its holder stops renewing it (a killed worker), so
# the next sweep runs within about this interval of a crash, not after the whole sweep's bound.
TRAJHUB_SCAN_SWEEP_LOCK_SECONDS = env_int("TRAJHUB_SCAN_SWEEP_LOCK_SECONDS", 30)
TRAJHUB_SCAN_SWEEP_BATCH = env_int("TRAJHUB_SCAN_SWEEP_BATCH", 200)
TRAJHUB_SCAN_MAX_FINDINGS = env_int("TRAJHUB_SCAN_MAX_FINDINGS", 1000)  # rows kept per trajectory
# Find indexes kept in each web process between keystrokes (selectors/find_store.py).
TRAJHUB_FIND_CACHE_MB = env_int("TRAJHUB_FIND_CACHE_MB", 128)
# A trajectory with more distinct found values than this (emails, keys, ...) is held for a
# moderator instead of approved with its personal data redacted.
TRAJHUB_SCAN_MAX_DISTINCT = env_int("TRAJHUB_SCAN_MAX_DISTINCT", 500)
# Text in images (screenshots) read by OCR (tesseract) and scanned; a finding there holds the
# trajectory. Seconds per image before OCR gives up on it.
TRAJHUB_OCR = env_bool("TRAJHUB_OCR", True)
TRAJHUB_OCR_TIMEOUT = env_int("TRAJHUB_OCR_TIMEOUT", 60)
# Images that OCR did not read (off, or tesseract missing) are public on the site and in releases
# only once a moderator clears them (apps/trajectories/image_rule.py); on, they are published
# unread, only the text around them scanned. On under the embedded default (`make run`: no
# DATABASE_URL) and DEBUG, where the demo data has no one to clear it; off in production.
TRAJHUB_IMAGES_PUBLISH_UNREAD = env_bool(
    "TRAJHUB_IMAGES_PUBLISH_UNREAD", DEBUG or not os.environ.get("DATABASE_URL")
)
# The review queue: how long a moderator's claim on an item lasts.
TRAJHUB_CLAIM_SECONDS = env_int("TRAJHUB_CLAIM_SECONDS", 15 * 60)
# Readers' reports: this many from distinct accounts or client addresses within the window hold
# an approved trajectory for a moderator; each client may send so many reports per hour.
TRAJHUB_REPORT_HOLD_COUNT = env_int("TRAJHUB_REPORT_HOLD_COUNT", 3)
TRAJHUB_REPORT_WINDOW_SECONDS = env_int("TRAJHUB_REPORT_WINDOW_SECONDS", 7 * 24 * 3600)
TRAJHUB_REPORTS_PER_HOUR = env_int("TRAJHUB_REPORTS_PER_HOUR", 10)
# Step feedback (issue 23): writes per account and per client address an hour; distinct
# reporters that hold a correction or comment for a moderator; and how young an account's
# corrections and comments wait for a moderator before anyone else reads them (0: none do).
TRAJHUB_FEEDBACK_PER_HOUR = env_int("TRAJHUB_FEEDBACK_PER_HOUR", 120)
TRAJHUB_FEEDBACK_PER_HOUR_PER_ADDRESS = env_int("TRAJHUB_FEEDBACK_PER_HOUR_PER_ADDRESS", 300)
TRAJHUB_FEEDBACK_REPORT_HOLD_COUNT = env_int("TRAJHUB_FEEDBACK_REPORT_HOLD_COUNT", 2)
TRAJHUB_FEEDBACK_HOLD_NEW_ACCOUNTS_DAYS = env_int("TRAJHUB_FEEDBACK_HOLD_NEW_ACCOUNTS_DAYS", 0)
# A trajectory goes into a release's `stepwise` config (TRL's stepwise supervision) when every
# agent step has at least this many current ratings and none is tied.
TRAJHUB_STEPWISE_MIN_RATINGS = env_int("TRAJHUB_STEPWISE_MIN_RATINGS", 2)
# How long the link of a takedown request's confirmation email (and an appeal link) is valid.
TRAJHUB_TAKEDOWN_LINK_SECONDS = env_int("TRAJHUB_TAKEDOWN_LINK_SECONDS", 3 * 24 * 3600)
TRAJHUB_APPEAL_LINK_SECONDS = env_int("TRAJHUB_APPEAL_LINK_SECONDS", 30 * 24 * 3600)
# Dataset releases (apps/datasets).
TRAJHUB_RELEASE_NAME = os.environ.get("TRAJHUB_RELEASE_NAME", "TrajHub trajectories")
TRAJHUB_RELEASE_EVERY_DAYS = env_float("TRAJHUB_RELEASE_EVERY_DAYS", 7.0)
# The embedded default (`make run`: no DATABASE_URL) and DEBUG have nobody to wait for: 0 days,
# so `build_release --now` publishes at once there. Production waits a week.
TRAJHUB_RELEASE_OPT_OUT_DAYS = env_float(
    "TRAJHUB_RELEASE_OPT_OUT_DAYS", 0.0 if DEBUG or not os.environ.get("DATABASE_URL") else 7.0
)
TRAJHUB_RELEASE_SHARD_BYTES = env_int("TRAJHUB_RELEASE_SHARD_BYTES", 500 * 1000 * 1000)
# Row groups the Hugging Face viewer can page through: <= 100 MB in memory each.
TRAJHUB_RELEASE_ROW_GROUP_BYTES = env_int("TRAJHUB_RELEASE_ROW_GROUP_BYTES", 64 * 1024 * 1024)
TRAJHUB_RELEASE_ROW_GROUP_ROWS = env_int("TRAJHUB_RELEASE_ROW_GROUP_ROWS", 1000)
# Quality gate: each rule on or off, with its thresholds.
TRAJHUB_RELEASE_GATE_EMPTY = env_bool("TRAJHUB_RELEASE_GATE_EMPTY", True)
TRAJHUB_RELEASE_MIN_EVENTS = env_int("TRAJHUB_RELEASE_MIN_EVENTS", 2)
TRAJHUB_RELEASE_MIN_TEXT_CHARS = env_int("TRAJHUB_RELEASE_MIN_TEXT_CHARS", 20)
TRAJHUB_RELEASE_GATE_DUPLICATES = env_bool("TRAJHUB_RELEASE_GATE_DUPLICATES", True)
TRAJHUB_RELEASE_GATE_BROKEN = env_bool("TRAJHUB_RELEASE_GATE_BROKEN", True)
TRAJHUB_RELEASE_GATE_STALE_SCAN = env_bool("TRAJHUB_RELEASE_GATE_STALE_SCAN", True)
# On by default: the delete pages promise that only a tombstone stays, so a superseded release's
# files (which still hold what was deleted) go once a later release leaves it out.
TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED = env_bool("TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED", True)
# A trajectory of a published release deleted or made private: the removal-only build starts this
# long after the first such change, so that many changes make one build (under the broker's
# visibility timeout, which redelivers a delayed task held longer).
TRAJHUB_RELEASE_REMOVAL_DELAY_SECONDS = env_int("TRAJHUB_RELEASE_REMOVAL_DELAY_SECONDS", 300)
# 0: one task builds the whole release; N: one Celery task per N trajectories (a shard).
TRAJHUB_RELEASE_SHARD_TASK_ROWS = env_int("TRAJHUB_RELEASE_SHARD_TASK_ROWS", 0)
# A build split into shard tasks that has not moved for this long is taken for dead.
TRAJHUB_RELEASE_STALE_SECONDS = env_int("TRAJHUB_RELEASE_STALE_SECONDS", 1800)
TRAJHUB_RELEASE_TIME_LIMIT = env_int("TRAJHUB_RELEASE_TIME_LIMIT", 6 * 3600)
TRAJHUB_RELEASE_URL_SECONDS = env_int("TRAJHUB_RELEASE_URL_SECONDS", 3600)
TRAJHUB_RELEASE_BUILD_DIR = os.environ.get(
    "TRAJHUB_RELEASE_BUILD_DIR", str(VAR_DIR / "release-build")
)
# --- Learn-by-interact (apps.learn) -------------------------------------------------------------
# Any OpenAI-compatible chat endpoint ("https://host/v1"). Without a base URL and a model nothing
# is synthesized, and the admin, the API and `manage.py synthesize` say so.
TRAJHUB_LLM_BASE_URL = os.environ.get("TRAJHUB_LLM_BASE_URL", "").rstrip("/")
TRAJHUB_LLM_API_KEY = os.environ.get("TRAJHUB_LLM_API_KEY", "")
TRAJHUB_LLM_MODEL = os.environ.get("TRAJHUB_LLM_MODEL", "")
TRAJHUB_LLM_JUDGE_MODELS = env_list(
    "TRAJHUB_LLM_JUDGE_MODELS", [TRAJHUB_LLM_MODEL] if TRAJHUB_LLM_MODEL else []
)
TRAJHUB_LLM_CONCURRENCY = env_int("TRAJHUB_LLM_CONCURRENCY", 4)  # requests in flight, all processes
TRAJHUB_LLM_TIMEOUT = env_float("TRAJHUB_LLM_TIMEOUT", 60.0)  # seconds per request
TRAJHUB_LLM_MAX_RETRIES = env_int("TRAJHUB_LLM_MAX_RETRIES", 4)  # transient failures only
TRAJHUB_LLM_BACKOFF = env_float("TRAJHUB_LLM_BACKOFF", 1.0)  # seconds before the first retry
# A worker's hold on one of the concurrency slots lasts this long unless renewed (it renews it
# while its call runs): a killed worker's slots come free within this, not after the call's
# timeout and retries.
TRAJHUB_LLM_SLOT_SECONDS = env_float("TRAJHUB_LLM_SLOT_SECONDS", 10.0)
# Prices per million tokens, for the cost each run reports (0: cost not counted).
TRAJHUB_LLM_PRICE_INPUT = env_float("TRAJHUB_LLM_PRICE_INPUT", 0.0)
TRAJHUB_LLM_PRICE_OUTPUT = env_float("TRAJHUB_LLM_PRICE_OUTPUT", 0.0)
# Windows per trajectory, and the sampling policy: short windows (<= SHORT_STEPS actions) make
# up SHORT_SHARE of them; some of every length range are always kept.
TRAJHUB_SYNTH_MAX_WINDOWS = env_int("TRAJHUB_SYNTH_MAX_WINDOWS", 20)
TRAJHUB_SYNTH_SHORT_STEPS = env_int("TRAJHUB_SYNTH_SHORT_STEPS", 4)
TRAJHUB_SYNTH_SHORT_SHARE = env_float("TRAJHUB_SYNTH_SHORT_SHARE", 0.6)
TRAJHUB_SYNTH_OBSERVATION_CHARS = env_int("TRAJHUB_SYNTH_OBSERVATION_CHARS", 2000)
# A window claimed longer ago than this was lost with its worker and is taken up again.
TRAJHUB_SYNTH_CLAIM_SECONDS = env_int("TRAJHUB_SYNTH_CLAIM_SECONDS", 900)
# How long "this trajectory of this run is counted as done" is remembered (a redelivered task
# is not counted twice); longer than any run.
TRAJHUB_SYNTH_DONE_MARK_SECONDS = env_int("TRAJHUB_SYNTH_DONE_MARK_SECONDS", 7 * 24 * 3600)
# A run stops when the first this-many answers of a model could not be read (no fenced block,
# a judge's answer not the JSON the committee reads): apps/learn/guard.py. 0: never stops.
TRAJHUB_SYNTH_STOP_UNREADABLE = env_int("TRAJHUB_SYNTH_STOP_UNREADABLE", 10)
TRAJHUB_FILTER_MIN_ACTIONS = env_int("TRAJHUB_FILTER_MIN_ACTIONS", 1)
TRAJHUB_FILTER_MAX_ACTIONS = env_int("TRAJHUB_FILTER_MAX_ACTIONS", 30)
TRAJHUB_FILTER_MIN_INSTRUCTION_CHARS = env_int("TRAJHUB_FILTER_MIN_INSTRUCTION_CHARS", 15)
TRAJHUB_FILTER_MAX_INSTRUCTION_CHARS = env_int("TRAJHUB_FILTER_MAX_INSTRUCTION_CHARS", 3000)
TRAJHUB_FILTER_NEAR_DUPLICATE = env_float("TRAJHUB_FILTER_NEAR_DUPLICATE", 0.8)  # word Jaccard
# The retrieval index (memory-mapped files shared by every web process on the host).
TRAJHUB_RETRIEVE_DIR = Path(os.environ.get("TRAJHUB_RETRIEVE_DIR", VAR_DIR / "retrieval"))
TRAJHUB_RETRIEVE_MAX_K = env_int("TRAJHUB_RETRIEVE_MAX_K", 20)
# Dense retrieval: "auto" uses it when the `dense` extra is installed; "off" never loads it.
TRAJHUB_RETRIEVE_DENSE = os.environ.get("TRAJHUB_RETRIEVE_DENSE", "auto").strip().lower()
# From this many examples on, the dense index is partitioned (faiss' inverted file, IndexIVFFlat:
# about 2 * sqrt(n) k-means cells = nlist, searched in the TRAJHUB_RETRIEVE_DENSE_PROBES = nprobe
# nearest cells): a full scan reads every embedding (150 MB at 100,000 examples) per query,
# tens of milliseconds on a busy machine.
TRAJHUB_RETRIEVE_DENSE_CELLS_FROM = env_int("TRAJHUB_RETRIEVE_DENSE_CELLS_FROM", 20_000)
TRAJHUB_RETRIEVE_DENSE_PROBES = env_int("TRAJHUB_RETRIEVE_DENSE_PROBES", 32)
# Where the secret scanner (Kingfisher) keeps its compiled rules, so a new process loads them
# in under a second instead of compiling them for several; "": the user's cache directory.
TRAJHUB_SCAN_RULE_CACHE = os.environ.get(
    "TRAJHUB_SCAN_RULE_CACHE", str(VAR_DIR / "cache" / "kingfisher-rules")
)
# Files no row refers to (a killed ingest's) are deleted once this old: longer than any ingest.
TRAJHUB_ORPHAN_GRACE_SECONDS = env_int("TRAJHUB_ORPHAN_GRACE_SECONDS", 3600)
TRAJHUB_ORPHAN_SWEEP_BATCH = env_int("TRAJHUB_ORPHAN_SWEEP_BATCH", 10_000)
TRAJHUB_REDACTION_INDEX_SWEEP_BATCH = env_int("TRAJHUB_REDACTION_INDEX_SWEEP_BATCH", 200)
# Django reads whole bodies into memory up to this size; the share API streams larger ones itself.
DATA_UPLOAD_MAX_MEMORY_SIZE = TRAJHUB_MAX_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # bm25s logs every index build at DEBUG/INFO; our own line says what was built.
        "bm25s": {"level": "WARNING"},
    },
}
