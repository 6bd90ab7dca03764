"""Releases, for every state and caller: only public trajectories reach a release file, the
release pages and the release API; no redacted value, contact email or deleted id reaches any
file; the "in the next release" list shows each caller only their own public ones."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from apps.datasets import services
from tests.security.world import (
    CALLERS,
    CONTACT_EMAIL,
    SECRET_EMAIL,
    SECRET_KEY,
    STATES,
    World,
    marker,
    world_fixture,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with world_fixture(django_db_blocker) as built:
        yield built


@pytest.fixture
def release(world: World, settings, tmp_path):
    root = tmp_path / "releases"
    settings.STORAGES = {
        **settings.STORAGES,
        "releases": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(root)},
        },
    }
    settings.TRAJHUB_RELEASE_BUILD_DIR = str(tmp_path / "build")
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 0
    settings.TRAJHUB_RELEASE_GATE_DUPLICATES = False  # the world's sessions share their shape
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    return result.release, root / result.release.prefix


def _markers(text: str) -> set[str]:
    return {name for name in STATES if marker(name) in text}


def test_release_files_hold_public_trajectories_only_and_nothing_redacted(world: World, release):
    _, folder = release
    values = ""
    raw = b""
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        raw += path.read_bytes()
        if path.suffix == ".parquet":
            values += repr(pq.read_table(path).to_pylist())
        else:
            values += path.read_text()
    assert _markers(values) == {"public"}
    assert world.trajectories["public"].share_id in values
    for name, trajectory in world.trajectories.items():
        if name != "public":
            assert trajectory.share_id not in values, name
    assert world.deleted_id not in values
    for needle in (SECRET_EMAIL, SECRET_KEY, CONTACT_EMAIL):
        assert needle not in values and needle.encode() not in raw


@pytest.mark.parametrize("caller", CALLERS)
def test_release_pages_and_api_show_the_public_id_only(world: World, release, caller):
    published, _ = release
    client = world.client(caller)
    hidden = [t.share_id for n, t in world.trajectories.items() if n != "public"]
    for url in (
        "/releases/",
        f"/releases/{published.version}/",
        "/api/v1/releases",
        f"/api/v1/releases/{published.version}",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert not [sid for sid in [*hidden, world.deleted_id] if sid in text], url
        assert SECRET_EMAIL not in text and CONTACT_EMAIL not in text, url
    detail = client.get(f"/api/v1/releases/{published.version}").json()
    assert detail["added_ids"] == [world.trajectories["public"].share_id]


@pytest.mark.parametrize("caller", CALLERS)
def test_next_release_list_is_the_callers_own_public_ones(world: World, caller):
    client = world.client(caller)
    response = client.get("/me/releases/")
    if caller == "anonymous":
        assert response.status_code == 302
        return
    text = response.content.decode()
    public = world.trajectories["public"]
    owns_public = public.owner_id is not None and public.owner == world.users[caller]
    assert (public.share_id in text) == owns_public
    for name, trajectory in world.trajectories.items():
        if name != "public":
            assert trajectory.share_id not in text, name
    # Nobody can take out what is not theirs.
    if not owns_public:
        assert client.post("/me/releases/", {"id": public.share_id}).status_code == 404
