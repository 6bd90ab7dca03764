"""Test settings: the real settings, with tasks run inline and fast password hashing.

Tests talk to whatever DATABASE_URL / REDIS_URL say (CI: PostgreSQL and Redis).
"""

import os
import tempfile

os.environ.setdefault("TRAJHUB_VAR_DIR", tempfile.mkdtemp(prefix="trajhub-test-"))

from config.settings import *  # noqa: E402,F403
from config.settings import BASE_DIR, CACHES, REDIS_URL  # noqa: E402

# OCR costs about a second per image: off here, on in the tests of OCR itself.
TRAJHUB_OCR = False
# The same under SQLite and PostgreSQL (its default follows DATABASE_URL): images unread are
# published, as before the rule; tests/moderation/test_image_rule.py turns it off.
TRAJHUB_IMAGES_PUBLISH_UNREAD = True
# The scanner's compiled rules outlive the test run's temporary var/: compiling them takes
# seconds, loading them well under one (once per process either way).
TRAJHUB_SCAN_RULE_CACHE = os.environ.get(
    "TRAJHUB_SCAN_RULE_CACHE", str(BASE_DIR / "var" / "cache" / "kingfisher-rules")
)

CELERY_TASK_ALWAYS_EAGER = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
if REDIS_URL:
    CACHES["default"]["KEY_PREFIX"] = f"test-{os.getpid()}"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405
# WhiteNoise serves collected files from here and warns on every request if the folder is missing.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
