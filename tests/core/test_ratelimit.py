"""The one rate limiter (apps/core/ratelimit.py): a fixed window per scope and key, aligned on
the clock, whose keys never carry the value counted; and every limited action goes through it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.core.cache import cache

from apps.core import ratelimit
from apps.core.ratelimit import RateLimited, Verdict, hit, peek

NOW = 1_799_971_200  # a multiple of a day (so of 3600 and 900): the start of every window


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock, set by the test."""
    now = SimpleNamespace(value=float(NOW))
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: now.value))
    return now


class _Recording:
    """The cache, noting every key asked for."""

    def __init__(self):
        self.keys: list[str] = []

    def __getattr__(self, name):
        method = getattr(cache, name)

        def call(key, *args, **kwargs):
            self.keys.append(key)
            return method(key, *args, **kwargs)

        return call


@pytest.fixture
def cache_keys(monkeypatch) -> list[str]:
    recording = _Recording()
    monkeypatch.setattr(ratelimit, "cache", recording)
    return recording.keys


def test_allows_up_to_the_limit_in_a_window_then_refuses(clock):
    verdicts = [hit("test.scope", "203.0.113.9", 3, 3600) for _ in range(4)]
    assert [verdict.allowed for verdict in verdicts] == [True, True, True, False]
    assert verdicts[-1] == Verdict(allowed=False, retry_after=3600)


def test_retry_after_is_what_is_left_of_the_window_on_the_clock(clock):
    clock.value = NOW + 1000.7
    assert hit("test.scope", "k", 1, 3600).retry_after == 2600
    assert not hit("test.scope", "k", 1, 3600).allowed


def test_the_next_window_counts_from_zero(clock):
    assert hit("test.scope", "k", 1, 900).allowed
    assert not hit("test.scope", "k", 1, 900).allowed
    clock.value = NOW + 900
    assert hit("test.scope", "k", 1, 900) == Verdict(allowed=True, retry_after=900)


def test_scopes_keys_and_windows_count_apart(clock):
    assert hit("test.a", "k", 1, 3600).allowed
    assert hit("test.b", "k", 1, 3600).allowed  # another scope
    assert hit("test.a", "other", 1, 3600).allowed  # another key
    assert hit("test.a", "k", 1, 60).allowed  # another window length
    assert not hit("test.a", "k", 1, 3600).allowed


def test_peek_counts_nothing(clock):
    assert peek("test.scope", "k", 2, 3600) == Verdict(allowed=True, retry_after=3600)
    hit("test.scope", "k", 2, 3600)
    assert peek("test.scope", "k", 2, 3600).allowed
    hit("test.scope", "k", 2, 3600)
    assert not peek("test.scope", "k", 2, 3600).allowed
    assert not peek("test.scope", "k", 2, 3600).allowed
    assert hit("test.scope", "other", 2, 3600).allowed


def test_a_count_that_expired_between_add_and_incr_starts_again(clock, monkeypatch):
    real_incr = cache.incr
    calls = []

    def incr_after_expiry(key, *args, **kwargs):
        if not calls:
            calls.append(key)
            cache.delete(key)
        return real_incr(key, *args, **kwargs)

    monkeypatch.setattr(cache, "incr", incr_after_expiry)
    assert hit("test.scope", "k", 1, 3600).allowed
    assert not hit("test.scope", "k", 1, 3600).allowed


def test_keys_carry_neither_the_value_nor_a_plain_hash_of_it(clock, cache_keys):
    import hashlib

    hit("test.scope", "203.0.113.9", 1, 3600)
    peek("test.scope", "someone@example.org", 1, 3600)
    plain = hashlib.sha256(b"203.0.113.9").hexdigest()[:32]
    assert cache_keys and all(key.startswith("trajhub:ratelimit:test.scope:") for key in cache_keys)
    assert not any("203.0.113" in key or "example.org" in key or plain in key for key in cache_keys)


def test_rate_limited_carries_its_message_and_retry_after():
    error = RateLimited("too many", retry_after=12)
    assert (str(error), error.message, error.where, error.retry_after) == (
        "too many",
        "too many",
        "",
        12,
    )
    assert error.status_code == 429
    assert RateLimited("too many").retry_after == 3600


# --- Every limited action counts through it, never with the address in a key -----------------

ADDRESS = "198.51.100.23"
EMAIL = "Someone@Example.org"


def _clear(keys: list[str]) -> list[str]:
    assert keys, "the action counted nothing through the rate limiter"
    for key in keys:
        assert ADDRESS not in key and "example.org" not in key.lower()
    return keys


def test_anonymous_shares_count_through_the_limiter(clock, cache_keys, settings):
    from apps.trajectories.services.limits import anonymous_share_check, email_share_check

    settings.TRAJHUB_ANONYMOUS_SHARING = True
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 1
    anonymous_share_check(ADDRESS)
    email_share_check(EMAIL)
    with pytest.raises(RateLimited) as by_address:
        anonymous_share_check(ADDRESS)
    with pytest.raises(RateLimited) as by_email:
        email_share_check(EMAIL.lower())  # the same address, whatever its case
    assert by_address.value.retry_after == by_email.value.retry_after == 3600
    assert "too many anonymous shares from this address" in by_address.value.message
    _clear(cache_keys)


@pytest.mark.django_db
def test_wrong_passwords_count_through_the_limiter(clock, cache_keys):
    from apps.trajectories.services.passwords import PASSWORD_ATTEMPTS, trajectory_by_password

    for _ in range(PASSWORD_ATTEMPTS):
        assert trajectory_by_password(share_id="0" * 64, password="x", client=ADDRESS) is None
    with pytest.raises(RateLimited) as refused:
        trajectory_by_password(share_id="0" * 64, password="x", client=ADDRESS)
    assert refused.value.retry_after == 15 * 60
    assert trajectory_by_password(share_id="0" * 64, password="x", client="192.0.2.1") is None
    _clear(cache_keys)


@pytest.mark.django_db
def test_email_deletion_requests_count_through_the_limiter(clock, cache_keys, settings):
    from apps.owners.services.erasure import email_deletion_request

    settings.TRAJHUB_EMAIL_DELETION_PER_HOUR = 1
    email_deletion_request(email=EMAIL, client=ADDRESS)
    with pytest.raises(RateLimited) as refused:
        email_deletion_request(email="other@example.net", client=ADDRESS)
    with pytest.raises(RateLimited):
        email_deletion_request(email=EMAIL, client="192.0.2.1")  # the same email
    assert refused.value.retry_after == 3600
    assert refused.value.message == "too many deletion links asked for; try again in an hour"
    _clear(cache_keys)


@pytest.mark.django_db
def test_reports_and_takedowns_count_through_the_limiter(clock, cache_keys, settings):
    from apps.moderation.services import limits, reports, takedowns
    from apps.trajectories.models import Trajectory

    settings.TRAJHUB_REPORTS_PER_HOUR = 1
    settings.TRAJHUB_REPORT_HOLD_COUNT = 100
    trajectory = Trajectory.objects.create(
        title="t", source_format="openhands_v0", visibility="public", review_state="approved"
    )
    reports.report_submit(trajectory=trajectory, reason="other", client_ip=ADDRESS)
    with pytest.raises(RateLimited) as refused:
        reports.report_submit(trajectory=trajectory, reason="other", client_ip=ADDRESS)
    assert "too many reports from your network" in refused.value.message
    for n in range(limits.TAKEDOWN_MAILS_PER_RECIPIENT_PER_DAY):
        takedowns.takedown_request(
            trajectory=trajectory, email=EMAIL, text="my name", client_ip=f"192.0.2.{n}"
        )
    with pytest.raises(RateLimited) as per_recipient:
        takedowns.takedown_request(
            trajectory=trajectory,
            email=f" {EMAIL.upper()} ",
            text="my name",
            client_ip="192.0.2.99",
        )
    assert "too many takedown confirmation emails" in per_recipient.value.message
    assert per_recipient.value.retry_after == 24 * 3600
    _clear(cache_keys)


def test_drf_throttles_keep_no_client_address_in_their_keys():
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from apps.learn.api.views import RetrieveThrottle
    from apps.trajectories.api.preview import PreviewThrottle

    request = Request(APIRequestFactory().post("/", REMOTE_ADDR=ADDRESS))
    keys = [
        throttle().get_cache_key(request, None) for throttle in (PreviewThrottle, RetrieveThrottle)
    ]
    assert all(key and ADDRESS not in key for key in keys)
    other = Request(APIRequestFactory().post("/", REMOTE_ADDR="192.0.2.1"))
    assert PreviewThrottle().get_cache_key(other, None) != keys[0]  # still one count per address
