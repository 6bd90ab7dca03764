"""The two lock files agree: the image (requirements-prod.txt) runs what the tests ran."""

import re

from django.conf import settings

PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;]+)", re.MULTILINE)


def _pins(name: str) -> dict[str, str]:
    text = (settings.BASE_DIR / name).read_text()
    return {package.lower(): version for package, version in PIN.findall(text)}


def test_production_pins_are_the_tested_versions_without_test_tools():
    full, prod = _pins("requirements.txt"), _pins("requirements-prod.txt")
    assert prod, "requirements-prod.txt pins nothing"
    differing = {
        name: (version, full.get(name))
        for name, version in prod.items()
        if full.get(name) != version
    }
    assert differing == {}, f"pinned differently from requirements.txt: {differing}"
    for runtime in ("django", "celery", "psycopg", "gunicorn", "django-storages"):
        assert runtime in prod, runtime
    for test_tool in ("pytest", "playwright", "moto", "hypothesis", "mypy"):
        assert test_tool not in prod, test_tool
