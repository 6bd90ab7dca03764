"""The session builder: appends events with increasing ids and timestamps and running LLM
metrics, and holds the files the agent works on.

Every value comes from the builder's random.Random, so a seed gives the same events.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

import orjson

from apps.demo.vocabulary import (
    CODE,
    NOUNS,
    SYSTEM_PROMPT,
    Project,
)


class Builder:
    """Appends events with increasing ids and timestamps and running LLM metrics."""

    def __init__(
        self,
        rng: random.Random,
        *,
        model: str,
        prices: tuple[float, float],
        project: Project,
        start: datetime,
        screenshot_bytes: int,
    ) -> None:
        self.rng = rng
        self.model = model
        self.prices = prices
        self.project = project
        self.clock = start
        self.next_id = 0
        self.events: list[dict] = []
        self.cost = 0.0
        self.prompt = 0
        self.completion = 0
        self.context_chars = len(SYSTEM_PROMPT) + 4000
        self.screenshot_bytes = screenshot_bytes
        self.files: dict[str, list[str]] = {}
        self.workdir = f"/workspace/{project.name}"

    # time and ids
    def _stamp(self, seconds: tuple[float, float]) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(*seconds))
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.%f")

    def _id(self) -> int:
        if not self.events:
            return self.next_id
        # Hidden events leave gaps in real conversations.
        self.next_id += 1 if self.rng.random() < 0.9 else self.rng.randint(2, 4)
        return self.next_id

    def _metrics(self, completion: int) -> dict:
        prompt = self.context_chars // 4
        self.prompt += prompt
        self.completion += completion
        self.cost += (prompt * self.prices[0] + completion * self.prices[1]) / 1e6
        usage = {
            "model": self.model,
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "context_window": 200000,
            "per_turn_token": completion,
            "response_id": "",
        }
        return {
            "accumulated_cost": round(self.cost, 6),
            "max_budget_per_task": None,
            "accumulated_token_usage": usage,
            "costs": [
                {
                    "model": self.model,
                    "cost": round(self.cost, 6),
                    "timestamp": self.clock.timestamp(),
                }
            ],
            "response_latencies": [
                {
                    "model": self.model,
                    "latency": round(self.rng.uniform(0.8, 9.0), 3),
                    "response_id": f"chatcmpl-{self.rng.getrandbits(64):016x}",
                }
            ],
            "token_usages": [],
        }

    def _tool_call(self, function: str, arguments: dict, thought: str, completion: int) -> dict:
        call_id = f"toolu_{self.rng.getrandbits(96):024x}"
        return {
            "function_name": function,
            "tool_call_id": call_id,
            "model_response": {
                "id": f"chatcmpl-{self.rng.getrandbits(64):016x}",
                "created": int(self.clock.timestamp()),
                "model": self.model,
                "object": "chat.completion",
                "system_fingerprint": None,
                "choices": [
                    {
                        "finish_reason": "tool_calls",
                        "index": 0,
                        "message": {
                            "content": thought,
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "index": 1,
                                    "function": {
                                        "arguments": orjson.dumps(arguments).decode(),
                                        "name": function,
                                    },
                                    "id": call_id,
                                    "type": "function",
                                }
                            ],
                            "function_call": None,
                        },
                    }
                ],
                "usage": {
                    "completion_tokens": completion,
                    "prompt_tokens": self.context_chars // 4,
                    "total_tokens": completion + self.context_chars // 4,
                },
                "service_tier": None,
            },
            "total_calls_in_response": 1,
        }

    def emit(self, event: dict) -> dict:
        self.events.append(event)
        self.context_chars += len(event.get("message", "")) + len(str(event.get("content", "")))
        return event

    def action(
        self,
        action: str,
        message: str,
        args: dict,
        *,
        tool: str | None = None,
        tool_args: dict | None = None,
        source: str = "agent",
    ) -> dict:
        event: dict[str, Any] = {
            "id": self._id(),
            "timestamp": self._stamp((1.5, 25.0)),
            "source": source,
            "message": message,
            "action": action,
            "args": args,
        }
        if source == "agent" and tool is not None:
            completion = self.rng.randint(40, 600)
            event["tool_call_metadata"] = self._tool_call(
                tool, tool_args or {}, args.get("thought", ""), completion
            )
            event["llm_metrics"] = self._metrics(completion)
        return self.emit(event)

    def observation(
        self,
        cause: dict,
        observation: str,
        message: str,
        content: str,
        extras: dict,
        *,
        success: bool | None = None,
        source: str = "agent",
    ) -> dict:
        event: dict[str, Any] = {
            "id": self._id(),
            "timestamp": self._stamp((0.05, 12.0)),
            "source": source,
            "message": message,
            "cause": cause["id"],
            "observation": observation,
            "content": content,
            "extras": extras,
        }
        if success is not None:
            event["success"] = success
        if "tool_call_metadata" in cause:
            # OpenHands repeats the model response on the observation that answers the call.
            event["tool_call_metadata"] = cause["tool_call_metadata"]
        return self.emit(event)

    # files the agent works on
    def file(self, path: str | None = None) -> tuple[str, list[str]]:
        if path is None:
            if self.files and self.rng.random() < 0.6:
                path = self.rng.choice(sorted(self.files))
            else:
                make, ext = CODE[self.project.language]
                path = f"{self.workdir}/{self.project.package}/{self.rng.choice(NOUNS)}s.{ext}"
        if path not in self.files:
            make, _ = CODE[self.project.language]
            self.files[path] = make(self.rng, self.project.package, self.rng.randint(25, 90))
        return path, self.files[path]
