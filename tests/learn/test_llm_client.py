"""The OpenAI-compatible client against the test server: retries only what a retry can fix."""

from __future__ import annotations

import time

import pytest

from apps.learn.llm import LLMConfig, LLMError, LLMNotConfigured, chat
from tests.learn.llm_server import FakeLLM, start

TASK_PROMPT = "Write a reasonable task instruction\n\n[Action 0]\nls"


@pytest.fixture
def server():
    fake = FakeLLM()
    httpd = start(fake)
    yield fake
    httpd.shutdown()
    httpd.server_close()


def config(fake: FakeLLM, **overrides) -> LLMConfig:
    values = dict(
        base_url=fake.url,
        api_key="k",
        model="m",
        judge_models=["m"],
        timeout=0.5,
        max_retries=3,
        backoff=0.01,
        price_input=2.0,
        price_output=4.0,
    )
    values.update(overrides)
    return LLMConfig(**values)


def ask(fake, **overrides):
    return chat(config(fake, **overrides), [{"role": "user", "content": TASK_PROMPT}])


def test_transient_failures_are_retried_and_counted(server):
    server.script = [429, 500, 503, ("slow", 1.0)]  # the slow one times out (0.5 s)
    answer = ask(server, max_retries=4)
    assert answer.usage.retries == 4 and answer.usage.calls == 1
    time.sleep(0.8)  # the timed-out request finishes on the server side after the client left
    assert [s.status for s in server.served] == [429, 500, 503, 200, 200]
    usage = answer.usage
    assert usage.prompt_tokens == server.served[-1].prompt_tokens > 0
    assert usage.cost == pytest.approx(
        (usage.prompt_tokens * 2 + usage.completion_tokens * 4) / 1e6
    )
    assert "Do: ls" in answer.text


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_are_never_retried(server, status):
    server.script = [status, status, status]
    with pytest.raises(LLMError) as raised:
        ask(server)
    assert raised.value.status == status and not raised.value.transient
    assert len(server.served) == 1


def test_gives_up_after_max_retries(server):
    server.script = [500] * 10
    with pytest.raises(LLMError) as raised:
        ask(server, max_retries=2)
    assert raised.value.transient and raised.value.retries == 2
    assert len(server.served) == 3


def test_an_unreachable_endpoint_is_transient():
    with pytest.raises(LLMError) as raised:
        chat(
            LLMConfig(
                base_url="http://127.0.0.1:9/v1",
                api_key="",
                model="m",
                judge_models=[],
                max_retries=1,
                backoff=0.01,
            ),
            [{"role": "user", "content": "x"}],
        )
    assert raised.value.transient and "could not be reached" in str(raised.value)


def test_not_configured_never_calls():
    with pytest.raises(LLMNotConfigured, match="TRAJHUB_LLM_BASE_URL"):
        chat(LLMConfig(base_url="", api_key="", model="", judge_models=[]), [])
