"""STORAGE_BACKEND=s3, for real: a real S3-compatible server on loopback (moto's server mode).

The storages are built by config.settings.s3_storages, the function production settings use, so
this proves the ingest's raw upload and images, the owner's original download, image serving,
deletion and the /healthz storage probe all go through S3 with an endpoint_url.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import random
import socket

import boto3
import orjson
import pytest

from apps.demo import generator as demo
from apps.trajectories.models import Image, Trajectory
from config.settings import s3_storages

pytestmark = pytest.mark.django_db

BUCKET = "trajhub-test"
CREDENTIALS = {"access_key": "testing-key", "secret_key": "testing-secret"}


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture(scope="module")
def s3_endpoint():
    from moto.server import ThreadedMotoServer

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per S3 request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_endpoint, settings):
    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["access_key"],
        aws_secret_access_key=CREDENTIALS["secret_key"],
    )
    client.create_bucket(Bucket=BUCKET)
    settings.STORAGES = {
        **s3_storages(bucket=BUCKET, endpoint_url=s3_endpoint, region="us-east-1", **CREDENTIALS),
        "staticfiles": settings.STORAGES["staticfiles"],
    }

    def keys() -> list[str]:
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    yield keys
    for key in keys():
        client.delete_object(Bucket=BUCKET, Key=key)
    client.delete_bucket(Bucket=BUCKET)


def test_storages_are_s3_with_the_endpoint(bucket, s3_endpoint):
    from django.core.files.storage import storages
    from storages.backends.s3 import S3Storage

    storage = storages["default"]
    assert isinstance(storage, S3Storage)
    assert storage.endpoint_url == s3_endpoint
    assert storage.location == "private"
    assert storages["releases"].location == "releases"


def test_ingest_upload_images_download_and_delete_go_through_s3(
    bucket, client_as, owner, django_capture_on_commit_callbacks
):
    session = demo.generate_session(random.Random(3), events=20, screenshots=2, plots=1)
    original = demo.v0_array(session, include_screenshots=True)
    api = client_as(owner)
    response = api.post(
        "/api/v1/trajectories?title=s3", data=original, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    share_id = response.json()["trajectories"][0]["id"]
    trajectory = Trajectory.objects.get(share_id=share_id)

    keys = bucket()
    raw_keys = [key for key in keys if key.startswith(f"private/raw/{share_id[:2]}/{share_id}/")]
    assert len(raw_keys) == 1 and raw_keys[0].endswith(".zst")
    images = list(Image.objects.filter(trajectory_links__trajectory=trajectory))
    assert len(images) == 5  # two screenshots, two set-of-marks, one plot
    assert {f"private/{image.path}" for image in images} <= set(keys)

    # The owner's lossless download is read back from S3, byte for byte.
    download = api.get(f"/api/v1/trajectories/{share_id}/download?format=original")
    assert download.status_code == 200
    assert body_of(download) == original

    # A screenshot served to the owner is the PNG that was embedded in the event.
    shot = session["events"][[e.get("observation") for e in session["events"]].index("browse")]
    png = base64.b64decode(shot["extras"]["screenshot"].split(",", 1)[1])
    sha = hashlib.sha256(png).hexdigest()
    served = api.get(f"/api/v1/trajectories/{share_id}/images/{sha}")
    assert served.status_code == 200
    assert body_of(served) == png

    # Files go once the deletion commits.
    with django_capture_on_commit_callbacks(execute=True):
        deleted = api.delete(f"/api/v1/trajectories/{share_id}")
    assert deleted.status_code == 204
    assert bucket() == []


def test_share_payload_raw_copy_in_s3_leaves_out_the_email(bucket, client_as, owner):
    session = demo.generate_session(random.Random(4), events=9, screenshots=1)
    payload = demo.share_payload(session, email="someone@example.org")
    response = client_as(None).post(
        "/share_od_trajectory", data=payload, content_type="application/json"
    )
    assert response.status_code == 200
    share_id = response.json()["body"]["feedback_id"]
    from apps.trajectories.services import raw_read

    raw = orjson.loads(raw_read(Trajectory.objects.get(share_id=share_id)))
    assert raw["trajectory"] == orjson.loads(payload)["trajectory"]
    assert "someone@example.org" not in orjson.dumps(raw).decode()
    assert any(key.startswith("private/raw/") for key in bucket())


def test_healthz_probes_s3(bucket, client, settings, s3_endpoint):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["storage"] == "ok"
    assert bucket() == []  # the probe object was written, read back and deleted

    settings.STORAGES = {
        **s3_storages(bucket="no-such-bucket", endpoint_url=s3_endpoint, **CREDENTIALS),
        "staticfiles": settings.STORAGES["staticfiles"],
    }
    response = client.get("/healthz")
    assert response.status_code == 503
    assert "NoSuchBucket" in response.json()["storage"]


def test_release_files_go_to_s3_and_download_through_signed_urls(
    bucket, client, owner, settings, tmp_path
):
    import requests

    from apps.datasets import services
    from apps.trajectories.services import trajectory_delete
    from tests.datasets.conftest import share

    settings.TRAJHUB_RELEASE_BUILD_DIR = str(tmp_path / "build")
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 0
    first = share(user=owner, seed=71, screenshots=1)
    share(user=owner, seed=72)
    release = services.release_run(force=True).release
    keys = [key for key in bucket() if key.startswith("releases/")]
    assert "releases/v1/manifest.json" in keys and "releases/v1/README.md" in keys
    assert "releases/v1/data/train-00000-of-00001.parquet" in keys

    detail = client.get("/api/v1/releases/1").json()
    for item in detail["files"]:
        redirect = client.get(item["url"].removeprefix(settings.SITE_URL))
        assert redirect.status_code == 302
        signed = redirect["Location"]
        assert "Signature=" in signed and "Expires=" in signed  # query-string auth
        body = requests.get(signed, timeout=10).content
        assert hashlib.sha256(body).hexdigest() == item["sha256"]
        # Without the signature the store refuses it.
        assert requests.get(signed.split("?", 1)[0], timeout=10).status_code == 403

    # Superseded files are taken down from S3 when the setting says so.
    settings.TRAJHUB_RELEASE_TAKE_DOWN_SUPERSEDED = True
    trajectory_delete(trajectory=first)
    services.release_run(force=True)
    release.refresh_from_db()
    assert release.files_deleted
    keys = bucket()
    assert not any(key.startswith("releases/v1/") for key in keys)
    assert "releases/v2/manifest.json" in keys
    assert client.get("/releases/1/files/manifest.json").status_code == 404


def test_a_failed_release_build_leaves_nothing_in_s3(
    bucket, owner, settings, tmp_path, monkeypatch
):
    from apps.datasets import services
    from apps.datasets.services import storage as release_storage
    from tests.datasets.conftest import share

    settings.TRAJHUB_RELEASE_BUILD_DIR = str(tmp_path / "build")
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 0
    share(user=owner, seed=73)
    upload = release_storage.upload

    def failing(prefix, path, local):
        if path == "README.md":
            raise OSError("connection reset")
        upload(prefix, path, local)

    monkeypatch.setattr(release_storage, "upload", failing)
    result = services.release_run(force=True)
    assert result.action == "failed"
    assert not any(key.startswith("releases/") for key in bucket())


def test_a_release_built_in_shard_tasks_names_its_parts_in_s3(
    bucket, owner, settings, tmp_path, django_capture_on_commit_callbacks
):
    """Shard tasks upload parts; the last one names them train-i-of-N with a copy inside the
    bucket (nothing downloaded again) and leaves no part behind."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from apps.datasets import services
    from apps.datasets.services import storage as release_storage
    from tests.datasets.conftest import share

    settings.TRAJHUB_RELEASE_BUILD_DIR = str(tmp_path / "build")
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 0
    settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS = 1  # one trajectory per task (run eagerly here)
    shared = [share(user=owner, seed=seed) for seed in (74, 75)]
    with django_capture_on_commit_callbacks(execute=True):
        assert services.release_run(force=True).action == "sharded"
    keys = [key for key in bucket() if key.startswith("releases/v1/")]
    assert "releases/v1/manifest.json" in keys
    assert not [key for key in keys if "/part-" in key], keys
    names = [key for key in keys if key.startswith("releases/v1/no_images/")]
    assert names == [f"releases/v1/no_images/train-{i:05d}-of-00002.parquet" for i in range(2)]
    ids = []
    for name in names:
        with release_storage.open_file("v1", name.removeprefix("releases/v1/")) as handle:
            ids += pq.read_table(pa.BufferReader(handle.read())).column("id").to_pylist()
    assert ids == [t.share_id for t in shared]
