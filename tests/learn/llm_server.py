"""A small OpenAI-compatible chat server for the tests: real HTTP on a free loopback port,
deterministic answers, and scripted faults (slow answers, 429s, 500s, 4xx).

Answers depend only on the prompt: the task prompt gets "Do: <the window's actions>", the
replicate prompt a summary, the judge prompt yes to all four criteria unless the instruction
holds a word listed in `server.reject_words`, the query prompt the task's words. Every request
is recorded (prompt kind, the prompt's sha256, status sent) so tests can count what was asked.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Served:
    kind: str
    digest: str
    status: int
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt: str = ""


@dataclass
class FakeLLM:
    url: str = ""
    # Faults to answer with, in order, before normal answers: an int is an HTTP status,
    # ("slow", seconds) sleeps then answers normally.
    script: list = field(default_factory=list)
    reject_words: tuple[str, ...] = ()
    # Every answer without a fenced block (the client must not invent one).
    no_fence: bool = False
    # Judges answer in words, not the JSON the committee reads (the issue 20 endpoint).
    garbled_judges: bool = False
    served: list[Served] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Called before each normal answer (tests use it to interrupt a run mid-way).
    hook: object = None

    def ok(self, kind: str | None = None) -> list[Served]:
        return [s for s in self.served if s.status == 200 and (kind is None or s.kind == kind)]


def _kind(prompt: str) -> str:
    if "Write a reasonable task instruction" in prompt:
        return "task"
    if "Summarize the trajectory observation by observation" in prompt:
        return "replicate"
    if "Answer yes or no to each question" in prompt:
        return "judge"
    if "Write one short search query" in prompt:
        return "query"
    return "other"


def _actions(prompt: str) -> list[str]:
    return [m.strip() for m in re.findall(r"\[Action \d+\]\n(.*?)(?:\n\n|\n?$)", prompt, re.S)]


def answer_for(kind: str, prompt: str, fake: FakeLLM) -> str:
    if kind == "task":
        actions = "; ".join(_actions(prompt)) or "nothing"
        return f"Here it is.\n\n```\nDo: {actions}\n```\n"
    if kind == "replicate":
        return f"```\nThe agent took {len(_actions(prompt))} actions.\n```"
    if kind == "judge":
        instruction = prompt.split("Instruction:\n", 1)[1].split("\n\nTrajectory:", 1)[0]
        verdict = "no" if any(w in instruction for w in fake.reject_words) else "yes"
        criteria = {"aligned": verdict, "coherent": "yes", "natural": "yes", "reasonable": "yes"}
        return f"```json\n{json.dumps(criteria)}\n```"
    if kind == "query":
        task = prompt.split("Task:\n", 1)[1].split("\n\n", 1)[0]
        return f"```\n{task}\n```"
    return "```\nok\n```"


def start(fake: FakeLLM) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length))
            prompt = body["messages"][-1]["content"]
            kind = _kind(prompt)
            digest = hashlib.sha256(prompt.encode()).hexdigest()
            model = body.get("model", "")
            with fake.lock:
                step = fake.script.pop(0) if fake.script else None
            if isinstance(step, int):
                fake.served.append(Served(kind, digest, step, model, prompt=prompt))
                self.send_response(step)
                if step == 429:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error": {"message": "scripted failure"}}')
                return
            if isinstance(step, tuple) and step[0] == "slow":
                time.sleep(step[1])
            if callable(fake.hook):
                fake.hook(kind)
            text = "no block here" if fake.no_fence else answer_for(kind, prompt, fake)
            if fake.garbled_judges and kind == "judge":
                text = "Yes: aligned, coherent, natural and reasonable."
            usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4}
            fake.served.append(
                Served(
                    kind,
                    digest,
                    200,
                    model,
                    usage["prompt_tokens"],
                    usage["completion_tokens"],
                    prompt,
                )
            )
            payload = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                "usage": usage,
            }
            data = json.dumps(payload).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout): what a real server sees too

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
