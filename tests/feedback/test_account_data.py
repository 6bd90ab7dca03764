"""An account's feedback in "download all my data", and gone with the account: its corrections
and comments deleted, its ratings and marks out of the counts (issue 23)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from apps.accounts.models import DataExport
from apps.feedback.models import FirstWrongMark, StepNote, StepRating
from apps.feedback.selectors import reader_for, trajectory_summary
from apps.feedback.services import Author, step_feedback_give
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db


def test_download_all_my_data_includes_feedback(
    client, owner, other_user, private_storage, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner, steps=2)
    step_feedback_give(
        trajectory=trajectory,
        step=2,
        author=Author(user=other_user),
        rating="bad",
        first_wrong=True,
        correction="pytest -x",
        mode="action",
        comment="see the log",
    )
    step_feedback_give(trajectory=trajectory, step=4, author=Author(user=owner), rating="good")
    client.force_login(other_user)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/me/export/")
    export = DataExport.objects.get(user=other_user)
    archive = zipfile.ZipFile(
        io.BytesIO(b"".join(client.get(f"/me/export/{export.pk}/download").streaming_content))
    )
    rows = json.loads(archive.read("feedback.json"))
    assert sorted(row["kind"] for row in rows) == ["comment", "correction", "first_wrong", "rating"]
    assert {row["trajectory"] for row in rows} == {trajectory.share_id}
    correction = next(row for row in rows if row["kind"] == "correction")
    assert correction["text"] == "pytest -x" and correction["original"] == "ls 0"
    assert all(row.get("value") != "good" for row in rows)  # the owner's rating is not theirs
    assert b"feedback.json:" in archive.read("README.txt")


def test_deleting_the_account_deletes_its_feedback(
    client, owner, other_user, django_capture_on_commit_callbacks
):
    trajectory = make_trajectory(owner=owner, steps=2)
    step_feedback_give(
        trajectory=trajectory,
        step=2,
        author=Author(user=other_user),
        rating="bad",
        first_wrong=True,
        correction="run it",
        comment="hmm",
    )
    step_feedback_give(trajectory=trajectory, step=2, author=Author(user=owner), rating="good")
    client.force_login(other_user)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/me/delete-account/", {"username": "other"}).status_code == 200
    assert StepNote.objects.count() == 0 and FirstWrongMark.objects.count() == 0
    assert list(StepRating.objects.values_list("value", flat=True)) == ["good"]
    summary = trajectory_summary(trajectory, reader_for(trajectory, None))
    assert summary["steps"] == {"2": {"good": 1}}
