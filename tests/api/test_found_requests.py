"""Requests an attack on a production-like instance found answering 500 or the wrong thing (issue 8):
each is now a clear 4xx in the caller's shape, or works."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.trajectories.models import Trajectory
from tests.api.test_openhands_dropin import openhands_body
from tests.ingest_helpers import dumps, make_trajectory, share_payload, v0_events

pytestmark = pytest.mark.django_db
URL = "/api/v1/trajectories"


def cursor(query: str) -> str:
    return base64.b64encode(query.encode()).decode()


@pytest.fixture
def listed(owner):
    """Two public trajectories: enough for a cursor to be meaningful."""
    return [make_trajectory(owner=owner, task=f"task {index}") for index in range(2)]


def answer_500_free(client, path):
    client.raise_request_exception = False
    return client.get(path)


@pytest.mark.parametrize(
    "path",
    [
        f"{URL}?cursor=cD1hYmM=",  # "p=abc": the position is not a date
        f"{URL}?cursor=cD1hYmM=&ordering=-events",  # nor a number of events
        f"{URL}?cursor=cD1hYmM=&ordering=events",
        f"{URL}?cursor={cursor('p=2020-01-01 00:00:00+20:00')}",  # PostgreSQL refuses +20:00
        f"{URL}?cursor={cursor('p=9999-12-31 23:59:59-10:00')}",  # not a year in UTC
        f"{URL}?cursor={cursor('o=5&r=1&p=')}",
        f"{URL}?cursor=%%%not-base64",
        f"{URL}?cursor={cursor('o=-1')}",
    ],
)
def test_a_forged_cursor_on_the_list_is_a_400(client_as, listed, path):
    response = answer_500_free(client_as(None), path)
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["where"] == "cursor" and "cursor" in error["message"]


@pytest.mark.parametrize("forged", ["cD1hYmM=", cursor("p=1.5"), cursor("p=-")])
def test_a_forged_cursor_on_events_is_a_400(client_as, listed, forged):
    response = answer_500_free(
        client_as(None), f"{URL}/{listed[0].share_id}/events?cursor={forged}"
    )
    assert response.status_code == 400
    assert response.json()["error"]["where"] == "cursor"


def test_the_cursors_the_api_gives_out_still_walk_every_page(client_as, owner):
    made = {make_trajectory(owner=owner, task=f"t{i}", steps=1).share_id for i in range(5)}
    for ordering in ("-created", "created", "-events", "events"):
        seen, url = [], f"{URL}?limit=2&ordering={ordering}"
        while url:
            body = client_as(None).get(url).json()
            seen += [item["id"] for item in body["results"]]
            url = body["next"]
        assert sorted(seen) == sorted(made), ordering


@pytest.mark.parametrize(
    "name, value",
    [
        ("created_before", "2020-01-01T00:00:00+20:00"),
        ("created_before", "2020-01-01T00:00:00+16:00"),
        ("created_after", "2020-01-01T00:00:00-18:30"),
        ("created_before", "9999-12-31T23:00:00-05:00"),
        ("created_after", "0001-01-01T00:00:00+01:00"),
        ("created_before", "2020-01-01T00:00:00+25:00"),
    ],
)
def test_an_instant_postgres_or_utc_cannot_hold_is_a_400(client_as, listed, name, value):
    response = answer_500_free(client_as(None), f"{URL}?{name}={value.replace('+', '%2B')}")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["where"] == name


def test_a_large_utc_offset_postgres_refuses_still_filters_when_utc_can_hold_it(client_as, listed):
    # +15:00 is within PostgreSQL's range; the value is compared as the instant it names.
    later = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S")
    response = client_as(None).get(f"{URL}?created_before={later}%2B15:00")
    assert response.status_code == 200 and len(response.json()["results"]) == 2


@pytest.mark.parametrize(
    "query, message",
    [
        ("date_to=9999-12-31", "past the last day"),
        ("date_from=2020-13-01", "is not a date"),
        ("date_to=0000-01-01", "is not a date"),
    ],
)
def test_browse_dates_out_of_range_are_a_form_error(client, listed, query, message):
    client.raise_request_exception = False
    response = client.get(f"/browse/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Some filters could not be used" in html and message in html


def test_browse_date_to_the_day_before_the_last_still_works(client, listed):
    response = client.get("/browse/?date_to=9999-12-30&date_from=0001-01-01")
    assert response.status_code == 200
    assert "Some filters could not be used" not in response.content.decode()


# --- A signed-in browser posting JSON with its CSRF token -------------------------------------


@pytest.fixture
def browser(owner):
    """A signed-in browser session that checks CSRF as production does, and its token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    client.get("/upload/")  # sets the csrftoken cookie, as the page does
    return client, client.cookies["csrftoken"].value


def test_a_signed_in_browser_shares_json_with_its_csrf_token(browser, owner):
    client, token = browser
    response = client.post(
        URL, data=dumps(v0_events(2)), content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201, response.content
    (trajectory,) = Trajectory.objects.all()
    assert trajectory.owner == owner and trajectory.num_events == 5


def test_a_signed_in_browser_previews_json_with_its_csrf_token(browser):
    client, token = browser
    response = client.post(
        f"{URL}/preview",
        data=dumps(v0_events(2)),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 200, response.content
    assert response.json()["trajectories"] == 1 and response.json()["events"] == 5
    assert Trajectory.objects.count() == 0


@pytest.mark.parametrize("path", [URL, f"{URL}/preview"])
def test_json_writes_without_the_csrf_token_are_still_refused(browser, path):
    client, _ = browser
    response = client.post(path, data=dumps(v0_events(1)), content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]
    assert Trajectory.objects.count() == 0


# --- Byte-order mark, long options, Retry-After -----------------------------------------------


@pytest.mark.parametrize("path", ["/share_od_trajectory", "/api/share"])
def test_the_drop_in_accepts_a_leading_byte_order_mark(client, path):
    body = b"\xef\xbb\xbf" + openhands_body(share_payload(v0_events(1)))
    response = client.post(path, data=body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["body"]["feedback_id"]
    assert Trajectory.objects.count() == 1


def test_the_api_and_the_drop_in_agree_on_a_byte_order_mark(client):
    body = b"\xef\xbb\xbf" + dumps(v0_events(1))
    assert client.post(URL, data=body, content_type="application/json").status_code == 201


@pytest.mark.parametrize(
    "path, shape",
    [
        (f"{URL}?title=", "json"),
        (f"{URL}/preview?format=", "json"),
        ("/share_od_trajectory?x=", "envelope"),
        ("/api/share?x=", "envelope"),
        ("/browse/?q=", "page"),
    ],
)
def test_a_query_string_over_the_limit_is_a_414_in_the_callers_shape(client, settings, path, shape):
    long = path + "x" * (settings.TRAJHUB_MAX_QUERY_BYTES + 1)
    response = client.post(long, data=b"[]", content_type="application/json")
    assert response.status_code == 414
    if shape == "json":
        error = response.json()["error"]
        assert "query string" in error["message"] and error["where"] == "query"
    elif shape == "envelope":
        body = response.json()
        assert body["statusCode"] == 414 and "query string" in body["body"]["message"]
    else:
        assert "The address is too long" in response.content.decode()
    assert Trajectory.objects.count() == 0


def test_a_query_string_within_the_limit_is_served(client, settings):
    # Long, but within the limit: served (the feedback text is at most 10,000 characters).
    rest = "r" * (settings.TRAJHUB_MAX_QUERY_BYTES - 10_000 - 400)
    response = client.post(
        f"{URL}?title={'t' * 300}&feedback_text={'f' * 10_000}&unused={rest}",
        data=dumps(v0_events(1)),
        content_type="application/json",
    )
    assert response.status_code == 201


@pytest.fixture
def over_the_limit(settings, client):
    """An anonymous client that has used up its one share of the hour."""
    settings.TRAJHUB_ANON_SHARES_PER_HOUR = 1
    assert (
        client.post(URL, data=dumps(v0_events(1)), content_type="application/json").status_code
        == 201
    )
    return client


def test_every_429_of_a_share_says_when_to_come_back(over_the_limit):
    client = over_the_limit
    answers = [
        client.post(URL, data=dumps(v0_events(1, task="b")), content_type="application/json"),
        client.post(
            "/share_od_trajectory",
            data=openhands_body(share_payload(v0_events(1, task="c"))),
            content_type="application/json",
        ),
    ]
    for response in answers:
        assert response.status_code == 429
        assert 0 < int(response["Retry-After"]) <= 3600
    assert answers[0].json()["error"]["message"].startswith("too many anonymous shares")
    assert answers[1].json()["statusCode"] == 429


def test_a_429_that_names_no_time_gets_one(client, settings, owner):
    # allauth's sign-in limit answers 429 through its own handler, without Retry-After.
    settings.ACCOUNT_RATE_LIMITS = {"login": "1/m/ip"}
    for _ in range(3):
        response = client.post("/accounts/login/", {"login": "owner", "password": "wrong"})
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
