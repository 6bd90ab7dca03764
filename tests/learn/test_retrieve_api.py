"""POST /api/v1/retrieve: shape, validation, rate limit, tokens, and only public() ever."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from apps.accounts.services import api_token_create
from apps.learn import services
from apps.learn.models import Example, Window
from apps.learn.retrieval import index
from apps.trajectories.models import Trajectory
from apps.trajectories.services import trajectory_delete
from apps.trajectories.services.redaction_index import trajectory_redaction_index_refresh
from tests.learn.factories import make_example, make_session

pytestmark = pytest.mark.django_db
URL = "/api/v1/retrieve"


def post(client, body, **kwargs):
    return client.post(URL, body, format="json", **kwargs)


@pytest.fixture
def corpus(owner):
    login = make_session(
        "Fix the login bug", [("pytest tests/test_login.py", "FAILED test_login")], owner=owner
    )
    pages = make_session(
        "Paginate the API", [("grep -rn paginate api/", "api/views.py")], owner=owner
    )
    examples = {
        "login": make_example(
            login,
            "Fix the failing login test in the Django app",
            steps=[
                {"role": "observation", "text": "Fix the login bug", "first": 0, "last": 0},
                {"role": "action", "text": "pytest tests/test_login.py", "first": 1, "last": 1},
                {
                    "role": "observation",
                    "text": "FAILED test_login AssertionError csrf token",
                    "first": 2,
                    "last": 2,
                },
            ],
        ),
        "pages": make_example(
            pages, "Add cursor pagination to the list API endpoint", start=0, end=1
        ),
    }
    hidden = {}
    for state, (visibility, review) in {
        "private": ("private", "approved"),
        "held": ("public", "held"),
        "hidden": ("public", "hidden"),
        "rejected": ("public", "rejected"),
        "pending": ("public", "pending"),
    }.items():
        trajectory = make_session(
            f"{state} login work",
            [("ls", "a")],
            owner=owner,
            visibility=visibility,
            review_state=review,
        )
        hidden[state] = make_example(trajectory, f"Fix the login bug quux{state} secretly")
    index.index_build()
    return {"examples": examples, "hidden": hidden, "login": login, "pages": pages}


def test_anonymous_gets_examples_in_the_fixed_shape(corpus):
    response = post(APIClient(), {"instruction": "fix the login test", "k": 5})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"examples", "prompt"}
    first = body["examples"][0]
    assert set(first) == {
        "id",
        "instruction",
        "trajectory_id",
        "url",
        "window",
        "score",
        "retriever",
        "steps",
        "corrections",
    }
    assert first["corrections"] == []
    assert first["instruction"] == "Fix the failing login test in the Django app"
    assert first["trajectory_id"] == corpus["login"].share_id
    assert first["window"] == [0, 2]
    assert first["url"].endswith(f"/t/{corpus['login'].share_id}/#step-1")
    assert first["retriever"] == "instruction_bm25" and first["score"] > 0
    assert [s["role"] for s in first["steps"]] == ["observation", "action", "observation"]
    assert "Demonstration 1" in body["prompt"] and "pytest tests/test_login.py" in body["prompt"]


@pytest.mark.parametrize("caller", ["anonymous", "owner", "other", "moderator", "staff"])
def test_only_public_examples_ever_whoever_asks(
    corpus, caller, owner, other_user, moderator, staff, client_as
):
    user = {
        "anonymous": None,
        "owner": owner,
        "other": other_user,
        "moderator": moderator,
        "staff": staff,
    }[caller]
    response = post(
        client_as(user),
        {
            "instruction": "fix the login bug secretly quuxprivate quuxheld quuxhidden quuxrejected quuxpending",
            "k": 20,
        },
    )
    assert response.status_code == 200
    text = str(response.json())
    assert "quux" not in text
    ids = {e["id"] for e in response.json()["examples"]}
    assert ids <= {corpus["examples"]["login"].pk, corpus["examples"]["pages"].pk}


def test_observation_retrieval_finds_the_window_by_what_the_agent_saw(corpus):
    body = post(
        APIClient(), {"instruction": "zzz", "observation": "AssertionError: csrf token missing"}
    ).json()
    assert body["examples"][0]["id"] == corpus["examples"]["login"].pk
    assert body["examples"][0]["retriever"] == "observation_bm25"


def test_formats(corpus):
    body = post(APIClient(), {"instruction": "login test", "format": "openai"}).json()
    messages = body["examples"][0]["steps"]
    assert messages[0] == {
        "role": "user",
        "content": "Fix the failing login test in the Django app",
    }
    assert messages[2] == {"role": "assistant", "content": "pytest tests/test_login.py"}
    turns = post(APIClient(), {"instruction": "login test", "format": "sharegpt"}).json()[
        "examples"
    ][0]["steps"]
    assert [t["from"] for t in turns] == ["human", "human", "gpt", "observation"]


def test_a_trajectory_leaving_public_is_never_served_even_before_the_index_is_rebuilt(corpus):
    # No signal, no rebuild: the query-time check alone keeps it out.
    Trajectory.objects.filter(pk=corpus["login"].pk).update(visibility="private")
    ids = [
        e["id"]
        for e in post(APIClient(), {"instruction": "fix the login test", "k": 20}).json()[
            "examples"
        ]
    ]
    assert corpus["examples"]["login"].pk not in ids
    Trajectory.objects.filter(pk=corpus["login"].pk).update(
        visibility="public", review_state="hidden"
    )
    ids = [
        e["id"]
        for e in post(APIClient(), {"instruction": "fix the login test", "k": 20}).json()[
            "examples"
        ]
    ]
    assert corpus["examples"]["login"].pk not in ids


def test_new_redactions_take_the_example_out_and_derived_delete_removes_it(corpus):
    login = corpus["login"]
    Trajectory.objects.filter(pk=login.pk).update(redactions={"csrf": "<SECRET_1>"})
    ids = [
        e["id"]
        for e in post(APIClient(), {"instruction": "fix the login test", "k": 20}).json()[
            "examples"
        ]
    ]
    assert corpus["examples"]["login"].pk not in ids
    assert services.derived_delete(trajectory_ids=[login.pk, corpus["pages"].pk]) == 1
    assert not Window.objects.filter(trajectory=login).exists()
    assert Window.objects.filter(trajectory=corpus["pages"]).exists()


def test_an_indexed_source_is_checked_by_its_index_digest_not_its_whole_map(corpus):
    """Where the source's redaction index is current, the hit check compares the window's
    digest with the index's "map" digest (a 300,000-redaction source costs no 12 MB read per
    request); when the map changes, the trigger clears the index and the whole map decides."""
    login, example = corpus["login"], corpus["examples"]["login"]

    def served() -> bool:
        body = {"instruction": "fix the login test", "k": 20}
        return example.pk in [e["id"] for e in post(APIClient(), body).json()["examples"]]

    assert trajectory_redaction_index_refresh(trajectory_id=login.pk)
    login.refresh_from_db()
    assert login.indexed_at is not None and login.redaction_index["map"]
    assert served()
    # The index is what is read: a digest that no longer matches takes the example out.
    index_value = {**login.redaction_index, "map": "0" * 64}
    Trajectory.objects.filter(pk=login.pk).update(redaction_index=index_value)
    assert not served()
    Trajectory.objects.filter(pk=login.pk).update(indexed_at=None)
    assert trajectory_redaction_index_refresh(trajectory_id=login.pk) and served()
    # Redacted again: the trigger clears the index, the whole map no longer matches the cut.
    Trajectory.objects.filter(pk=login.pk).update(redactions={"csrf": "<SECRET_1>"})
    login.refresh_from_db()
    assert login.indexed_at is None
    assert not served()


def test_leaving_public_deletes_derived_rows(corpus):
    Trajectory.objects.filter(pk=corpus["pages"].pk).update(review_state="hidden")
    services.derived_delete(trajectory_ids=[corpus["pages"].pk])
    assert not Example.objects.filter(trajectory=corpus["pages"]).exists()


def test_deletion_takes_examples_at_once(corpus):
    login = corpus["login"]
    trajectory_delete(trajectory=login)
    assert not Example.objects.filter(pk=corpus["examples"]["login"].pk).exists()
    ids = [
        e["id"]
        for e in post(APIClient(), {"instruction": "fix the login test", "k": 20}).json()[
            "examples"
        ]
    ]
    assert corpus["examples"]["login"].pk not in ids


def test_query_count_is_fixed(corpus, django_assert_num_queries):
    # One query checks every candidate against public() and the redactions and reads what the
    # answer shows (the steps of the first candidates only): whatever k and the candidates;
    # it also says whether a reader may have corrected a served window's step: no window has a
    # correction here, so there is no second query (tests/learn/test_retrieve_corrections.py).
    for corrections in (True, False):
        body = {"instruction": "login pagination API test", "k": 5, "corrections": corrections}
        with django_assert_num_queries(1):
            response = post(APIClient(), body)
        assert len(response.json()["examples"]) == 2
        assert all(example["steps"] for example in response.json()["examples"])


def test_a_hit_far_down_the_candidates_is_served_with_its_steps(
    corpus, owner, django_assert_num_queries
):
    """When more than the first 2k candidates are filtered out (here: redacted again since they
    were cut), the hit served from further down gets its steps in a second query, which checks
    public() again."""
    stale = make_session("Fix the login bug again", [("pytest", "FAILED")], owner=owner)
    # k = 1: three candidates asked of BM25, steps read for the first two, both stale.
    for number in range(2):
        make_example(
            stale, "Fix the failing login test after the upgrade", start=number, end=number + 1
        )
    index.index_build()
    Trajectory.objects.filter(pk=stale.pk).update(redactions={"FAILED": "<SECRET_1>"})
    body = {"instruction": "Fix the failing login test after the upgrade", "k": 1}
    with django_assert_num_queries(2):
        (served,) = post(APIClient(), body).json()["examples"]
    assert served["id"] == corpus["examples"]["login"].pk
    assert served["steps"][2]["text"] == "FAILED test_login AssertionError csrf token"


def test_no_index_yet_answers_empty(db, settings, tmp_path):
    settings.TRAJHUB_RETRIEVE_DIR = tmp_path / "none"
    index._current = None
    assert post(APIClient(), {"instruction": "anything"}).json() == {"examples": [], "prompt": ""}


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({}, "instruction"),
        ({"instruction": ""}, "instruction"),
        ({"instruction": "x", "k": 0}, "k"),
        ({"instruction": "x", "k": 1000}, "k"),
        ({"instruction": "x", "format": "yaml"}, "format"),
        ({"instruction": "x", "history": "not a list"}, "history"),
        ({"instruction": "x", "surprise": 1}, "surprise"),
        (["instruction"], "body"),
    ],
)
def test_bad_input_says_what_and_where(db, body, where):
    response = post(APIClient(), body)
    assert response.status_code == 400
    assert response.json()["error"]["where"] == where


def test_not_json_is_refused(db):
    response = APIClient().post(
        URL, "instruction=x", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 415
    response = APIClient().post(URL, "{not json", content_type="application/json")
    assert response.status_code == 400


def test_anonymous_is_rate_limited(db, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "retrieve": "3/minute",
        },
    }
    from rest_framework.throttling import SimpleRateThrottle

    rates = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {**rates, "retrieve": "3/minute"}
    try:
        cache.clear()
        client = APIClient()
        codes = [post(client, {"instruction": "x"}).status_code for _ in range(4)]
    finally:
        SimpleRateThrottle.THROTTLE_RATES = rates
    assert codes == [200, 200, 200, 429]


def test_model_based_needs_a_token(corpus, fake_llm, owner, client_as):
    response = post(APIClient(), {"instruction": "fix login", "model_based": True})
    assert response.status_code == 401 and "token" in response.json()["error"]["message"]
    # A browser session is not a token either.
    assert (
        post(client_as(owner), {"instruction": "fix login", "model_based": True}).status_code == 401
    )
    assert fake_llm.served == []


def test_model_based_with_a_token_asks_the_llm_for_a_query(corpus, fake_llm, owner):
    _, secret = api_token_create(user=owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    response = post(
        client, {"instruction": "cursor pagination list endpoint", "model_based": True, "k": 5}
    )
    assert response.status_code == 200, response.json()
    assert [s.kind for s in fake_llm.ok()] == ["query"]
    retrievers = [e["retriever"] for e in response.json()["examples"]]
    assert len(set(e["id"] for e in response.json()["examples"])) == len(retrievers)
    assert "instruction_bm25" in retrievers


def test_model_based_without_an_endpoint_says_so(corpus, no_llm, owner):
    _, secret = api_token_create(user=owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    response = post(client, {"instruction": "fix login", "model_based": True})
    assert response.status_code == 503
    assert "No LLM endpoint is configured" in response.json()["error"]["message"]


def test_derived_data_follows_its_source_through_the_real_services(
    corpus, owner, moderator, django_capture_on_commit_callbacks
):
    """public_set_changed (sent after commit by trajectories and moderation) removes examples at
    once: the owner making one private, a moderator hiding one."""
    from apps.moderation.services.decisions import trajectory_hide
    from apps.trajectories.services import trajectory_update

    login, pages = corpus["login"], corpus["pages"]
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_update(trajectory=login, visibility="private")
    assert not Example.objects.filter(trajectory=login).exists()
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_hide(trajectory=pages, moderator=moderator, note="test")
    assert not Example.objects.filter(trajectory=pages).exists()
    # The index was rebuilt without them (eager Celery in the tests).
    assert len(index.current()) == 0
