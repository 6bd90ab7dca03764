"""`trajhub retrieve` and cli.trajhub.retrieve() against a live server."""

from __future__ import annotations

import io

import pytest

from apps.learn.retrieval import index
from cli import trajhub
from tests.learn.factories import make_example, make_session

pytestmark = pytest.mark.usefixtures("transactional_db")


@pytest.fixture
def corpus():
    login = make_session("Fix the login bug", [("pytest", "FAILED")])
    example = make_example(login, "Fix the failing login test in the Django app")
    index.index_build()
    return login, example


def run(live_server, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = trajhub.main(["--url", live_server.url, *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_retrieve_prints_demonstrations_and_the_prompt(live_server, corpus):
    login, _ = corpus
    code, out, err = run(live_server, "retrieve", "fix the login test", "-k", "3")
    assert code == 0, err
    assert "Fix the failing login test in the Django app" in out
    assert f"/t/{login.share_id}/#step-1" in out and "instruction_bm25" in out
    code, out, _ = run(live_server, "retrieve", "fix the login test", "--prompt")
    assert out.startswith("Here are demonstrations") and "## Demonstration 1" in out


def test_client_function(live_server, corpus):
    _, example = corpus
    answer = trajhub.retrieve("fix the login test", observation="FAILED", url=live_server.url)
    assert answer["examples"][0]["id"] == example.pk
    assert answer["prompt"]


def test_errors_say_where(live_server, corpus):
    code, _, err = run(live_server, "retrieve", "fix", "-k", "0")
    assert code == 2 and "error:" in err and "(at k)" in err
    code, _, err = run(live_server, "retrieve", "fix", "--model-based")
    assert code == 2 and "token" in err
