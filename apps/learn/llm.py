"""A small client for any OpenAI-compatible chat endpoint (`POST {base}/chat/completions`).

Standard library HTTP (urllib): one request at a time per call, a timeout on each, retries with
exponential backoff (honouring Retry-After) on transient failures only — 429, 5xx, timeouts and
dropped connections — and never on another 4xx, which a retry cannot fix. Concurrency is bounded
per endpoint across processes by `slots` (see apps.learn.services.llm_slot). Usage (tokens) is
returned with every answer so runs can account for it.
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

NOT_CONFIGURED = (
    "No LLM endpoint is configured: set TRAJHUB_LLM_BASE_URL (an OpenAI-compatible /v1 base URL) "
    "and TRAJHUB_LLM_MODEL (and TRAJHUB_LLM_API_KEY if the endpoint needs one). "
    "Nothing is synthesized without one."
)


class LLMError(Exception):
    """The endpoint refused or kept failing; `transient` says whether a later run may succeed."""

    def __init__(self, message: str, *, status: int | None = None, transient: bool = False):
        super().__init__(message)
        self.status = status
        self.transient = transient
        self.retries = 0  # how many times the call was retried before giving up


class LLMNotConfigured(LLMError):
    def __init__(self) -> None:
        super().__init__(NOT_CONFIGURED)


@dataclass
class LLMConfig:
    base_url: str
    api_key: str
    model: str
    judge_models: list[str]
    concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 1.0  # seconds before the first retry; doubles each time
    max_backoff: float = 30.0
    price_input: float = 0.0  # per million prompt tokens
    price_output: float = 0.0  # per million completion tokens

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


@dataclass
class Usage:
    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.retries += other.retries
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost += other.cost


@dataclass
class Answer:
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)


TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    value = error.headers.get("Retry-After") if error.headers else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def chat(
    config: LLMConfig,
    messages: list[dict],
    *,
    model: str | None = None,
    max_tokens: int = 512,
    sleep: Callable[[float], None] = time.sleep,
) -> Answer:
    """One chat completion, with retries on transient failures. Raises LLMError."""
    if not config.configured:
        raise LLMNotConfigured()
    model = model or config.model
    url = config.base_url.rstrip("/") + "/chat/completions"
    body = json.dumps(
        {"model": model, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
    ).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    usage = Usage()
    attempt = 0
    while True:
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        wait: float | None = None
        try:
            with urllib.request.urlopen(request, timeout=config.timeout) as response:
                payload = json.loads(response.read())
            break
        except urllib.error.HTTPError as error:
            if error.code not in TRANSIENT_STATUS:
                detail = error.read()[:300].decode("utf-8", "replace")
                raise LLMError(
                    f"the LLM endpoint answered HTTP {error.code}: {detail}", status=error.code
                ) from None
            failure = LLMError(
                f"the LLM endpoint answered HTTP {error.code}", status=error.code, transient=True
            )
            wait = _retry_after(error)
        except TimeoutError:
            failure = LLMError("the LLM endpoint timed out", transient=True)
        except (urllib.error.URLError, ConnectionError, OSError) as error:
            reason = getattr(error, "reason", error)
            failure = LLMError(f"the LLM endpoint could not be reached: {reason}", transient=True)
        except ValueError:
            failure = LLMError(
                "the LLM endpoint answered something that is not JSON", transient=True
            )
        if attempt >= config.max_retries:
            failure.retries = usage.retries
            raise failure
        attempt += 1
        usage.retries += 1
        backoff = min(config.max_backoff, config.backoff * 2 ** (attempt - 1))
        sleep(
            min(config.max_backoff, wait)
            if wait is not None
            else backoff * (0.5 + random.random() / 2)
        )
    try:
        text = payload["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise LLMError("the LLM endpoint's answer has no choices[0].message.content") from None
    counted = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    usage.calls = 1
    usage.prompt_tokens = int(counted.get("prompt_tokens") or 0)
    usage.completion_tokens = int(counted.get("completion_tokens") or 0)
    usage.cost = (
        usage.prompt_tokens * config.price_input + usage.completion_tokens * config.price_output
    ) / 1_000_000
    return Answer(text=str(text), model=str(payload.get("model") or model), usage=usage)
