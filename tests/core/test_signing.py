"""The one signed-link and digest module (apps/core/signing.py), and each of its callers pinned
to what it stored or mailed before it (computed with the code it replaced, under a fixed secret
key and clock): a stored digest and a link already emailed must keep working."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from types import SimpleNamespace
from unittest import mock

import pytest
from django.core import signing as django_signing
from django.utils.crypto import salted_hmac

from apps.core import signing
from apps.core.signing import BadLink, canonical_email, digest, link_payload, link_token

SECRET_KEY = "pinned-secret-key-for-the-signing-tests"
NOW = 1_800_000_000.0


@pytest.fixture(autouse=True)
def _pinned_key(settings):
    settings.SECRET_KEY = SECRET_KEY


@pytest.fixture
def clock(monkeypatch):
    """Django's signing clock, set by the test."""
    now = SimpleNamespace(value=NOW)
    monkeypatch.setattr(django_signing, "time", SimpleNamespace(time=lambda: now.value))
    return now


# --- The module ---------------------------------------------------------------------------------


def test_digest_is_the_salted_hmac_of_its_purpose():
    assert digest("p", "v") == salted_hmac("p", "v", algorithm="sha256").hexdigest()
    assert digest("p", "v", algorithm="sha1") == salted_hmac("p", "v").hexdigest()
    assert digest("p", "v") != digest("q", "v")


def test_canonical_email():
    assert canonical_email("  Someone@Example.ORG \n") == "someone@example.org"


def test_a_link_carries_its_payload_for_its_purpose_only(clock):
    token = link_token("p", {"a": 1})
    assert token == django_signing.dumps({"a": 1}, salt="p")
    assert link_payload("p", token) == {"a": 1}
    assert link_payload("p", token, expect=dict) == {"a": 1}
    for bad in ("q", "p-other"):
        with pytest.raises(BadLink):
            link_payload(bad, token)
    with pytest.raises(BadLink):
        link_payload("p", token[:-2] + "xx")
    with pytest.raises(BadLink):
        link_payload("p", "not a token")


def test_a_link_of_another_type_is_refused(clock):
    with pytest.raises(BadLink):
        link_payload("p", link_token("p", "7"), expect=int)
    assert link_payload("p", link_token("p", 7), expect=int) == 7


def test_a_link_expires_after_max_age(clock):
    token = link_token("p", 7)
    clock.value = NOW + 100
    assert link_payload("p", token, max_age=100) == 7
    assert link_payload("p", token, max_age=timedelta(seconds=100)) == 7
    assert link_payload("p", token) == 7  # no max_age: never expires
    clock.value = NOW + 101
    with pytest.raises(BadLink):
        link_payload("p", token, max_age=100)


# --- Each caller, pinned to its output before issue 21 ----------------------------------------

NOTICE_ADDRESS = "ee18882c2473c809217a183208e72ae79b9ba675"
NOTICE_UNSUBSCRIBE = (
    "eyJhIjoiZWUxODg4MmMyNDczYzgwOTIxN2ExODMyMDhlNzJhZTc5YjliYTY3NSIsImsiOiJyZWplY3RlZCJ9"
    ":1xocE4:mhYAPdBFw1W8Ekd-myOZ8p8-CV8a7uV0W31Lazk8OpQ"
)
OPTOUT_DIGEST = "941494f43b142ef9a64484920e10e5a6ab239bac"
OPTOUT_TOKEN = (
    "eyJyIjozLCJlIjoiOTQxNDk0ZjQzYjE0MmVmOWE2NDQ4NDkyMGUxMGU1YTZhYjIzOWJhYyJ9"
    ":1xocE4:FX_d2jn-DVCb4pH7gIlcHhjvGCVr72B6e8VA72AQfKo"
)
SESSION_DIGEST = "4b3ffc35904f6e16717150695b4bb17944924dac5874b256c5f56490e8b17a58"
REPORTER_DIGEST = "3ed6b6fc127089346bd34b9e5370245b016a058c"
REPORTER_DIGEST_NO_ADDRESS = "115f4d48fc35b3e1f488b75ea558bfb1236e5a61"
TAKEDOWN_TOKEN = "Nw:1xocE4:S_GU0TXEgAasvIzcGD1ioPp8WDRhQx-ncGCSJq6L-QM"
APPEAL_TOKEN = (
    "ImFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWIi"
    ":1xocE4:07DUoKHGRXcx66wHh77BQMVnHoAdzazlZ0e25Mt65wE"
)
ERASURE_TOKEN = "InMzY3JldCI:1xocE4:rkiutwtHvL4AVEbA3GjmVlmRJiAqhayESYsjBAkc18g"


def test_notices_address_hash_and_unsubscribe_link(clock):
    from apps.accounts import notices

    assert notices.address_hash(" A@B.c ") == NOTICE_ADDRESS
    assert NOTICE_ADDRESS == salted_hmac("trajhub.notices.address", "a@b.c").hexdigest()
    assert notices.unsubscribe_token(email="a@b.c", kind="rejected") == NOTICE_UNSUBSCRIBE
    clock.value = NOW + 10 * 365 * 24 * 3600  # an unsubscribe link never expires
    assert notices.unsubscribe_read(NOTICE_UNSUBSCRIBE) == (NOTICE_ADDRESS, "rejected")
    assert notices.unsubscribe_read(OPTOUT_TOKEN) is None  # another purpose's link


@pytest.mark.django_db
def test_datasets_optout_digest_and_link(clock):
    from apps.datasets import optout_links as optout
    from apps.datasets.models import Release, ReleaseStatus

    assert optout.email_digest(" A@B.c ") == OPTOUT_DIGEST
    assert optout.optout_token(release=SimpleNamespace(pk=3), email="a@b.c") == OPTOUT_TOKEN
    release = Release.objects.create(version=3, status=ReleaseStatus.ANNOUNCED)
    token = django_signing.dumps({"r": release.pk, "e": OPTOUT_DIGEST}, salt=optout.LINK_SALT)
    assert optout.LINK_SALT == "trajhub.datasets.optout-link"
    assert optout.optout_token_read(token) == (release, OPTOUT_DIGEST)
    assert optout.optout_token_read(NOTICE_UNSUBSCRIBE) is None


def test_trajectories_session_digest():
    from apps.trajectories.services.dedup import session_digest

    assert session_digest("session-42") == SESSION_DIGEST
    assert (
        SESSION_DIGEST
        == salted_hmac("trajhub.client-session-id", "session-42", algorithm="sha256").hexdigest()
    )
    assert session_digest("") == ""


@pytest.mark.django_db
def test_moderation_reporter_digest_as_stored():
    from apps.moderation.services import reports
    from apps.trajectories.models import Trajectory

    trajectory = Trajectory.objects.create(
        title="t", source_format="openhands_v0", visibility="public", review_state="approved"
    )
    report = reports.report_submit(trajectory=trajectory, reason="other", client_ip="203.0.113.9")
    assert (report.address_key, report.reporter_key) == (
        REPORTER_DIGEST,
        f"addr:{REPORTER_DIGEST}",
    )
    anonymous = reports.report_submit(trajectory=trajectory, reason="spam", client_ip="")
    assert anonymous.address_key == REPORTER_DIGEST_NO_ADDRESS


@pytest.mark.django_db
def test_moderation_takedown_link(clock, settings):
    from apps.moderation.models import TakedownRequest
    from apps.moderation.services import links as reports
    from apps.trajectories.models import Trajectory

    assert reports.takedown_token(SimpleNamespace(pk=7)) == TAKEDOWN_TOKEN
    trajectory = Trajectory.objects.create(title="t", source_format="openhands_v0")
    request = TakedownRequest.objects.create(trajectory=trajectory, email="a@b.c", text="mine")
    old = django_signing.dumps(request.pk, salt="trajhub.moderation.takedown")
    clock.value = NOW + settings.TRAJHUB_TAKEDOWN_LINK_SECONDS
    assert reports.takedown_from_token(old) == request
    clock.value += 1
    assert reports.takedown_from_token(old) is None


@pytest.mark.django_db
def test_moderation_appeal_link(clock, settings):
    from apps.moderation.services import links as reports
    from apps.trajectories.models import Trajectory

    assert reports.appeal_url(SimpleNamespace(share_id="ab" * 32)).endswith(f"/{APPEAL_TOKEN}")
    trajectory = Trajectory.objects.create(title="t", source_format="openhands_v0")
    old = django_signing.dumps(trajectory.share_id, salt="trajhub.moderation.appeal")
    clock.value = NOW + settings.TRAJHUB_APPEAL_LINK_SECONDS
    assert reports.appeal_trajectory(old) == trajectory
    assert reports.appeal_trajectory(TAKEDOWN_TOKEN) is None  # another purpose's link
    clock.value += 1
    assert reports.appeal_trajectory(old) is None


@pytest.mark.django_db
def test_accounts_email_deletion_link(clock, settings, django_capture_on_commit_callbacks):
    from apps.accounts.models import EmailDeletionRequest
    from apps.owners.services import erasure

    assert erasure.LINK_SALT == "trajhub.accounts.email-deletion"
    assert signing.link_token(erasure.LINK_SALT, "s3cret") == ERASURE_TOKEN
    with django_capture_on_commit_callbacks() as callbacks:
        erasure.email_deletion_request(email="someone@example.org", client="203.0.113.9")
    request = EmailDeletionRequest.objects.get()
    with mock.patch.object(erasure, "_queue_link_email") as queue:
        for callback in callbacks:
            callback()
    mailed = queue.call_args.args[1]
    assert erasure.email_deletion_open(mailed) == request
    # A link mailed by the code before issue 21 opens its request too, until it expires.
    EmailDeletionRequest.objects.filter(pk=request.pk).update(
        secret_hash=hashlib.sha256(b"s3cret").hexdigest()
    )
    assert erasure.email_deletion_open(ERASURE_TOKEN) == request
    assert erasure.email_deletion_open(TAKEDOWN_TOKEN) is None
    clock.value = NOW + settings.TRAJHUB_EMAIL_DELETION_HOURS * 3600 + 1
    assert erasure.email_deletion_open(ERASURE_TOKEN) is None
