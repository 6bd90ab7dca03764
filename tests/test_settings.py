"""Settings read from the environment: what production gets behind HTTPS."""

import json
import os
import subprocess
import sys

from django.conf import settings


def _settings_with(env: dict[str, str]) -> dict:
    code = (
        "import json, config.settings as s; print(json.dumps({k: getattr(s, k, None) for k in "
        "['SECURE_SSL_REDIRECT', 'SECURE_HSTS_SECONDS', 'SECURE_PROXY_SSL_HEADER', "
        "'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE']}))"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TRAJHUB_", "DJANGO_", "DATABASE_", "REDIS_", "STORAGE_"))
    }
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "TRAJHUB_VAR_DIR": str(settings.VAR_DIR), **env},
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_https_site_redirects_sets_hsts_and_secure_cookies():
    values = _settings_with({"TRAJHUB_SITE_URL": "https://trajhub.example.org"})
    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SECURE_HSTS_SECONDS"] == 31536000
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["SESSION_COOKIE_SECURE"] is True and values["CSRF_COOKIE_SECURE"] is True


def test_plain_http_laptop_gets_none_of_that():
    values = _settings_with({"TRAJHUB_SITE_URL": "http://127.0.0.1:8000"})
    assert not values["SECURE_SSL_REDIRECT"]
    assert not values["SECURE_HSTS_SECONDS"]
    assert values["SESSION_COOKIE_SECURE"] is False
