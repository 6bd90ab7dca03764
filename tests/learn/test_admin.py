"""The admin pages of Learn-by-interact: examples beside their window and verdicts; runs."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.learn.models import Example, SynthesisRun
from tests.learn.factories import make_example, make_session

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def example():
    trajectory = make_session("Fix <b>it</b>", [("ls", "a")])
    example = make_example(
        trajectory,
        "Run <script>alert(1)</script> ls",
        steps=[
            {"role": "observation", "text": "Fix <b>it</b>", "first": 0, "last": 0},
            {"role": "action", "text": "<img src=x onerror=alert(1)>", "first": 1, "last": 1},
            {"role": "observation", "text": "a", "first": 2, "last": 2},
        ],
        state="dropped",
    )
    Example.objects.filter(pk=example.pk).update(
        dropped_by="committee",
        verdicts=[
            {"filter": "scan", "kept": True, "reason": ""},
            {"filter": "committee", "kept": False, "reason": "judge-a: not aligned"},
        ],
    )
    return example


def test_example_page_shows_the_window_next_to_the_verdicts_escaped(example, moderator, staff):
    moderator.is_staff = True  # Django admin admits staff only; the group makes it a moderator
    moderator.save()
    for user in (moderator, staff):
        page = logged_in(user).get(f"/admin/learn/example/{example.pk}/change/")
        assert page.status_code == 200
        html = page.content.decode()
        assert "Source window" in html and "Filter verdicts" in html
        assert "judge-a: not aligned" in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html
        assert "<script>alert(1)" not in html


def test_example_list_and_no_endpoint_warning(example, staff, no_llm):
    page = logged_in(staff).get("/admin/learn/example/")
    assert page.status_code == 200
    assert "No LLM endpoint is configured" in page.content.decode()
    assert "committee" in page.content.decode()


def test_others_cannot_see_the_admin(example, owner):
    assert Client().get("/admin/learn/example/").status_code == 302
    assert logged_in(owner).get("/admin/learn/example/").status_code == 302


def may_start(user):
    from django.contrib.auth.models import Permission

    user.user_permissions.add(Permission.objects.get(codename="add_synthesisrun"))
    return type(user).objects.get(pk=user.pk)  # a fresh permission cache


def test_staff_without_the_add_permission_cannot_start_a_run(staff, fake_llm):
    make_session("Paginate the API", [("grep -rn paginate api/", "api/views.py:10")])
    client = logged_in(staff)
    page = client.get("/admin/learn/synthesisrun/")
    assert "Start a synthesis run" not in page.content.decode()
    assert client.post("/admin/learn/synthesisrun/start/").status_code == 403
    assert not SynthesisRun.objects.exists()


def test_staff_starts_a_run_from_the_admin(staff, fake_llm, django_capture_on_commit_callbacks):
    staff = may_start(staff)
    make_session("Paginate the API", [("grep -rn paginate api/", "api/views.py:10")])
    client = logged_in(staff)
    page = client.get("/admin/learn/synthesisrun/")
    assert "Start a synthesis run" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/learn/synthesisrun/start/")
    assert response.status_code == 302
    run = SynthesisRun.objects.get()
    assert run.state == "done"  # eager Celery in the tests: the tasks ran in-process
    assert run.llm_calls > 0 and Example.objects.exists()
    detail = client.get(f"/admin/learn/synthesisrun/{run.pk}/change/").content.decode()
    assert "kept / dropped per filter" in detail.lower() and "near_duplicate" in detail
    listed = client.get("/admin/learn/synthesisrun/").content.decode()
    for page in (listed, detail):
        assert "LLM calls" in page and "LLM retries" in page and "LLM failures" in page
        # The labels, not the CSRF tokens' random letters (one held "Llm" once).
        shown = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)
        assert "Llm" not in shown


def test_starting_without_an_endpoint_says_so(staff, no_llm):
    staff = may_start(staff)
    response = logged_in(staff).post("/admin/learn/synthesisrun/start/", follow=True)
    assert "No LLM endpoint is configured" in response.content.decode()
    assert not SynthesisRun.objects.exists()
