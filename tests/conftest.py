"""Shared fixtures: the five kinds of caller every endpoint is tested as, and the real files."""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

FIXTURES_DIR = Path(
    os.environ.get("TRAJHUB_FIXTURES_DIR", settings.BASE_DIR.parent / "shared" / "fixtures")
)
# The suite's own small trajectories, one per format (tests/samples/make_samples.py writes them):
# present on every machine, so import, page and upload tests never depend on the shared files.
SAMPLES_DIR = Path(__file__).parent / "samples"
SAMPLE_FILES = sorted(path.name for path in SAMPLES_DIR.glob("*") if path.suffix != ".py")
# Real sessions of the agents issue 22 brings in (Claude Code, Codex CLI, ATIF, ADP, Inspect),
# added to the shared fixtures ahead of their importers. Until those land each is refused with a
# clear 400 naming the formats known (test_importers.py says so of each), and the tests that
# import every real file leave them out; issue 22 moves each into their expectations.
AWAITING_IMPORTERS = frozenset(
    {
        "adp_std_v1_3_1_agenttuning_os_tool_call_ids.json",
        "inspect_eval_zip_made_mockllm_addition_tool.eval",
        "inspect_log_v2_made_mockllm_addition_tool.json",
    }
)
REQUIRE_SERVICES = os.environ.get("TRAJHUB_REQUIRE_SERVICES") == "1"
# Fixtures of the ingest and API tests (private_storage), usable from any test folder.
pytest_plugins = ["tests.ingest_helpers"]


def skip_or_fail(reason: str):
    """Skip on a laptop that lacks a service; in CI (TRAJHUB_REQUIRE_SERVICES=1) fail instead."""
    if REQUIRE_SERVICES:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture
def fixtures_dir() -> Path:
    if not (FIXTURES_DIR / "real").is_dir():
        skip_or_fail(f"the shared fixtures are not at {FIXTURES_DIR} (set TRAJHUB_FIXTURES_DIR)")
    return FIXTURES_DIR


@pytest.fixture
def real_fixture(fixtures_dir):
    def read(name: str) -> bytes:
        return (fixtures_dir / "real" / name).read_bytes()

    return read


@pytest.fixture
def made_fixture(fixtures_dir):
    def read(name: str) -> bytes:
        return (fixtures_dir / "made" / name).read_bytes()

    return read


@pytest.fixture
def sample():
    def read(name: str) -> bytes:
        return (SAMPLES_DIR / name).read_bytes()

    return read


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("owner", password="pw-owner")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("other", password="pw-other")


@pytest.fixture
def moderator(django_user_model):
    user = django_user_model.objects.create_user("moderator", password="pw-moderator")
    group, _ = Group.objects.get_or_create(name="moderators")
    user.groups.add(group)
    return user


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("staff", password="pw-staff", is_staff=True)


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def client_as(api_client):
    """An API client logged in as the given user (None: anonymous)."""

    def make(user):
        client = APIClient()
        if user is not None:
            client.force_authenticate(user=user)
        return client

    return make


@pytest.fixture(autouse=True)
def _clear_cache():
    from django.core.cache import cache

    cache.clear()
    yield


def pytest_sessionfinish(session, exitstatus):
    """A run that collected no tests fails (exit 1), never exit 5: `make test` and CI must not
    report a selection that matched nothing as anything but a failure."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.config.get_terminal_writer().line(
            "no tests were collected: failing the run", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
