"""The session builder and the steps an agent takes: each appends an action and its observation.

Every value comes from the builder's random.Random, so a seed gives the same events.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import orjson

from apps.trajectories.demo import images
from apps.trajectories.demo.vocabulary import (
    CODE,
    NOUNS,
    PAGE_WORDS,
    SYSTEM_PROMPT,
    VERBS,
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


def _rel(builder: Builder, path: str) -> str:
    return path.removeprefix(builder.workdir + "/")


def _cat_n(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{number:6}\t{line}" for number, line in enumerate(lines, start=start))


# --- steps: each appends an action and its observation ------------------------------------------


def _run(b: Builder, command: str, output: str, exit_code: int, thought: str = "") -> None:
    args = {
        "command": command,
        "is_input": False,
        "thought": thought,
        "blocking": False,
        "is_static": False,
        "cwd": None,
        "hidden": False,
        "confirmation_state": "confirmed",
        "security_risk": -1,
    }
    action = b.action(
        "run",
        f"Running command: {command}",
        args,
        tool="execute_bash",
        tool_args={"command": command},
    )
    metadata = {
        "exit_code": exit_code,
        "pid": -1,
        "username": "openhands",
        "hostname": f"runtime-{b.rng.getrandbits(24):06x}",
        "working_dir": b.workdir,
        "py_interpreter_path": "/openhands/poetry/openhands-ai-5O4_aCHf-py3.12/bin/python",
        "prefix": "",
        "suffix": f"\n[The command completed with exit code {exit_code}.]",
    }
    b.observation(
        action,
        "run",
        f"Command `{command}` executed with exit code {exit_code}.",
        output,
        {"command": command, "metadata": metadata, "hidden": False},
        success=exit_code == 0,
    )


def _ls_output(b: Builder) -> str:
    rows = ["total " + str(b.rng.randint(40, 300))]
    names = [
        ".git",
        ".github",
        "README.md",
        "pyproject.toml",
        b.project.package,
        "tests",
        "docs",
        "Makefile",
        ".gitignore",
        "LICENSE",
        "data",
    ]
    for name in names:
        is_dir = "." not in name[1:] and name not in ("Makefile", "LICENSE")
        rows.append(
            f"{'d' if is_dir else '-'}rw-r--r-- 1 openhands openhands "
            f"{b.rng.randint(96, 24000):>6} {b.clock:%b %d %H:%M} {name}"
        )
    return "\n".join(rows)


def step_explore(b: Builder) -> None:
    choice = b.rng.randrange(4)
    if choice == 0:
        _run(b, "ls -la", _ls_output(b), 0, "Let me look at the repository layout first.")
    elif choice == 1:
        path, lines = b.file()
        needle = b.rng.choice(VERBS)
        hits = [
            f"{_rel(b, path)}:{n}:{line.strip()}"
            for n, line in enumerate(lines, 1)
            if needle in line
        ][:12]
        _run(
            b,
            f'grep -rn "{needle}" {b.project.package}/ | head -20',
            "\n".join(hits),
            0 if hits else 1,
            f"Where is `{needle}` used?",
        )
    elif choice == 2:
        log = "\n".join(
            f"{b.rng.getrandbits(28):07x} {b.rng.choice(VERBS).title()} "
            f"{b.rng.choice(NOUNS)} {b.rng.choice(['handling', 'tests', 'docs', 'API'])}"
            for _ in range(b.rng.randint(5, 12))
        )
        _run(b, "git log --oneline -n 12", log, 0, "Recent history might explain the change.")
    else:
        found = "\n".join(sorted({f"./{_rel(b, b.file()[0])}" for _ in range(b.rng.randint(2, 6))}))
        ext = CODE[b.project.language][1]
        _run(b, f"find . -name '*.{ext}' -not -path './node_modules/*' | head -30", found, 0)


def _test_output(b: Builder, passed: bool) -> tuple[str, int]:
    n = b.rng.randint(12, 140)
    lang = b.project.language
    if lang == "python":
        if passed:
            return ("." * min(n, 70) + f"\n{n} passed in {b.rng.uniform(0.3, 9):.2f}s", 0)
        noun = b.rng.choice(NOUNS)
        return (
            f"{'.' * (n // 2)}F{'.' * (n // 3)}\n"
            "=================================== FAILURES ===================================\n"
            f"____________________________ test_{noun}_pagination ____________________________\n\n"
            f"    def test_{noun}_pagination(client):\n"
            f"        resp = client.get('/{noun}s?page=2')\n"
            f">       assert [x['id'] for x in resp.json()] == [11, 12, 13]\n"
            f"E       AssertionError: assert [10, 11, 12] == [11, 12, 13]\n\n"
            f"tests/test_{noun}s.py:{b.rng.randint(10, 200)}: AssertionError\n"
            "=========================== short test summary info ============================\n"
            f"FAILED tests/test_{noun}s.py::test_{noun}_pagination - AssertionError\n"
            f"1 failed, {n - 1} passed in {b.rng.uniform(0.3, 9):.2f}s",
            1,
        )
    if lang == "go":
        if passed:
            return (
                f"ok  \tgithub.com/acme/{b.project.name}/server\t{b.rng.uniform(0.01, 2):.3f}s",
                0,
            )
        return (
            f"--- FAIL: TestHandler (0.00s)\n    handler_test.go:{b.rng.randint(10, 90)}: "
            "got 500, want 200\nFAIL\nFAIL\tgithub.com/acme/server\t0.012s\nFAIL",
            1,
        )
    if lang == "rust":
        if passed:
            return (
                f"running {n} tests\n" + "test result: ok. "
                f"{n} passed; 0 failed; 0 ignored; finished in {b.rng.uniform(0, 3):.2f}s",
                0,
            )
        return (
            f"running {n} tests\nthread 'tests::evicts_oldest' panicked at src/lib.rs:"
            f"{b.rng.randint(10, 300)}:9:\nassertion `left == right` failed\n  left: 3\n right: 2\n"
            f"test result: FAILED. {n - 1} passed; 1 failed",
            101,
        )
    if passed:
        return (
            f" PASS  src/__tests__/app.test.ts\n\nTests:       {n} passed, {n} total\n"
            f"Time:        {b.rng.uniform(1, 9):.3f} s",
            0,
        )
    return (
        " FAIL  src/__tests__/app.test.ts\n  ● renders page 2\n\n    expect(received).toEqual"
        f"(expected)\n\nTests:       1 failed, {n - 1} passed, {n} total",
        1,
    )


def step_test(b: Builder, passed: bool | None = None) -> None:
    passed = b.rng.random() < 0.5 if passed is None else passed
    output, code = _test_output(b, passed)
    thought = "Run the tests to confirm the fix." if passed else "Reproduce the failure first."
    _run(b, b.project.test_command, output, code, thought)


def step_install(b: Builder) -> None:
    if b.project.language == "python":
        packages = b.rng.sample(["requests", "pytest", "freezegun", "pandas", "httpx", "rich"], 3)
        lines = [
            f"Collecting {p}\n  Downloading {p}-{b.rng.randint(1, 9)}.{b.rng.randint(0, 30)}.0"
            f"-py3-none-any.whl ({b.rng.randint(20, 900)} kB)"
            for p in packages
        ]
        _run(
            b,
            f"pip install {' '.join(packages)}",
            "\n".join(lines) + f"\nSuccessfully installed {' '.join(packages)}",
            0,
        )
    elif b.project.language == "typescript":
        _run(
            b,
            "npm ci",
            f"added {b.rng.randint(200, 1400)} packages, and audited "
            f"{b.rng.randint(1400, 1600)} packages in {b.rng.randint(4, 40)}s\n\nfound 0 vulnerabilities",
            0,
        )
    else:
        _run(b, "which make gcc", "/usr/bin/make\n/usr/bin/gcc", 0)


def step_command_error(b: Builder) -> None:
    if b.rng.random() < 0.5:
        tool = b.rng.choice(["rg", "jq", "tree", "http"])
        _run(b, f"{tool} --version", f"bash: {tool}: command not found", 127)
    else:
        path = f"{b.project.package}/{b.rng.choice(NOUNS)}_settings.py"
        _run(b, f"cat {path}", f"cat: {path}: No such file or directory", 1)


def step_read(b: Builder) -> None:
    path, lines = b.file()
    args = {
        "path": path,
        "start": 0,
        "end": -1,
        "thought": "",
        "security_risk": -1,
        "impl_source": "oh_aci",
        "view_range": None,
    }
    action = b.action(
        "read",
        f"Reading file: {path}",
        args,
        tool="str_replace_editor",
        tool_args={"command": "view", "path": path},
    )
    content = f"Here's the result of running `cat -n` on {path}:\n{_cat_n(lines)}\n"
    b.observation(
        action, "read", f"I read the file {path}.", content, {"path": path, "impl_source": "oh_aci"}
    )


def step_edit(b: Builder, *, miss: bool = False) -> None:
    path, lines = b.file()
    index = b.rng.randrange(len(lines))
    while not lines[index].strip() and index < len(lines) - 1:
        index += 1
    old = lines[index]
    new = old.replace("limit", "page_size") if "limit" in old else old.rstrip() + "  # fixed"
    if miss:
        old_str = old.strip() + " "
        args = _edit_args(path, old_str, new, "Tighten this line.")
        action = b.action(
            "edit",
            f"Editing {path}",
            args,
            tool="str_replace_editor",
            tool_args={"command": "str_replace", "path": path, "old_str": old_str, "new_str": new},
        )
        b.observation(
            action,
            "error",
            f"ERROR:\nNo replacement was performed, old_str `{old_str}` "
            f"did not appear verbatim in {path}.",
            f"ERROR:\nNo replacement was performed, old_str `{old_str}` did not appear "
            f"verbatim in {path}.",
            {"error_id": ""},
        )
        return
    args = _edit_args(
        path,
        old,
        new,
        b.rng.choice(
            ["Fix the boundary.", "Handle the empty case.", "Use the new name.", "Apply the fix."]
        ),
    )
    action = b.action(
        "edit",
        f"Editing {path}",
        args,
        tool="str_replace_editor",
        tool_args={"command": "str_replace", "path": path, "old_str": old, "new_str": new},
    )
    before = "\n".join(lines) + "\n"
    lines[index] = new
    after = "\n".join(lines) + "\n"
    rel = _rel(b, path)
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}", n=1
        )
    )
    low = max(0, index - 4)
    snippet = _cat_n(lines[low : index + 5], start=low + 1)
    content = (
        f"The file {path} has been edited. Here's the result of running `cat -n` on a "
        f"snippet of {path}:\n{snippet}\nReview the changes and make sure they are as "
        "expected. Edit the file again if necessary."
    )
    b.observation(
        action,
        "edit",
        f"I edited the file {path}.",
        content,
        {
            "path": path,
            "prev_exist": True,
            "old_content": before,
            "new_content": after,
            "impl_source": "oh_aci",
            "diff": diff,
        },
    )


def _edit_args(path: str, old: str, new: str, thought: str) -> dict:
    return {
        "path": path,
        "command": "str_replace",
        "file_text": None,
        "old_str": old,
        "new_str": new,
        "insert_line": None,
        "content": "",
        "start": 1,
        "end": -1,
        "thought": thought,
        "security_risk": -1,
        "impl_source": "oh_aci",
    }


def _page(b: Builder, url: str) -> tuple[str, list[str]]:
    title = b.rng.choice(PAGE_WORDS)
    noun = b.rng.choice(NOUNS)
    lines = [f"# {title} - {b.project.name}"]
    for _ in range(b.rng.randint(3, 9)):
        kind = b.rng.random()
        if kind < 0.2:
            lines.append(f"[button] {b.rng.choice(VERBS).title()} {noun}")
        elif kind < 0.35:
            lines.append(f"## {b.rng.choice(VERBS).title()} {noun}s")
        else:
            lines.append(
                f"{b.rng.choice(NOUNS).title()} #{b.rng.randint(1, 999)}: "
                f"{b.rng.choice(VERBS)} {noun} {b.rng.choice(['failed', 'ok', 'queued', 'open'])}"
            )
    return title, lines


def step_browse(b: Builder, *, interactive: bool | None = None) -> None:
    interactive = b.rng.random() < 0.4 if interactive is None else interactive
    url = f"http://{b.project.host}/{b.rng.choice(NOUNS)}s/{b.rng.randint(1, 99)}"
    if interactive:
        bid = b.rng.randint(10, 300)
        code = b.rng.choice(
            [
                f"click('{bid}')",
                f"fill('{bid}', 'test@example.com')",
                "scroll(0, 400)",
                f"goto('{url}')",
            ]
        )
        args = {
            "browser_actions": code,
            "thought": "Check what the page shows now.",
            "browsergym_send_msg_to_user": "",
            "security_risk": -1,
            "return_axtree": False,
        }
        action = b.action(
            "browse_interactive",
            f"I am interacting with the browser:\n```\n{code}\n```",
            args,
            tool="browser",
            tool_args={"code": code},
        )
    else:
        args = {
            "url": url,
            "thought": "Let me open the page.",
            "security_risk": -1,
            "return_axtree": False,
        }
        action = b.action(
            "browse",
            f"I am browsing the URL: {url}",
            args,
            tool="browser",
            tool_args={"code": f"goto('{url}')"},
        )
    title, lines = _page(b, url)
    screenshot, marks = images.browser_page(
        b.rng, url=url, title=title, lines=lines, extra_bytes=b.screenshot_bytes
    )
    extras = {
        "url": url,
        "trigger_by_action": action["action"],
        "screenshot": images.data_url(screenshot),
        "screenshot_path": None,
        "set_of_marks": images.data_url(marks),
        "error": False,
        "goal_image_urls": [],
        "open_pages_urls": [url],
        "active_page_index": 0,
        "dom_object": {},
        "axtree_object": {},
        "extra_element_properties": {},
        "last_browser_action": "",
        "last_browser_action_error": "",
        "focused_element_bid": "",
        "filter_visible_only": False,
    }
    b.observation(
        action, "browse", f"Visited {url}", "\n".join(lines), extras, source="environment"
    )


def _ipython(b: Builder, code: str, thought: str, content: str, images: list[str]) -> None:
    args = {
        "code": code,
        "thought": thought,
        "include_extra": True,
        "confirmation_state": "confirmed",
        "security_risk": -1,
        "kernel_init_code": "",
    }
    action = b.action(
        "run_ipython",
        f"Running Python code interactively: {code}",
        args,
        tool="execute_ipython_cell",
        tool_args={"code": code},
    )
    b.observation(
        action,
        "run_ipython",
        "Code executed in IPython cell.",
        content,
        {"code": code, "image_urls": images},
    )


def step_plot(b: Builder) -> None:
    noun = b.rng.choice(NOUNS)
    kind = b.rng.choice(["bar", "line"])
    values = [round(b.rng.uniform(1, 60), 1) for _ in range(b.rng.randint(4, 12))]
    code = (
        f"import pandas as pd\nimport matplotlib.pyplot as plt\n"
        f"df = pd.read_csv('data/{noun}s.csv', parse_dates=['day'])\n"
        f"df.groupby(df.day.dt.dayofweek).size().plot(kind='{kind}')\n"
        f"plt.title('{noun.title()}s per weekday'); plt.show()"
    )
    png = images.plot(b.rng, title=f"{noun.title()}s per weekday", values=values, kind=kind)
    _ipython(
        b,
        code,
        "Plot it to see the pattern.",
        "<Figure size 640x480 with 1 Axes>\n![image](data:image/png;base64,...)",
        [images.data_url(png)],
    )


def step_dataframe(b: Builder) -> None:
    noun = b.rng.choice(NOUNS)
    rows = [
        f"{i:<4}{b.clock.date() - timedelta(days=i)}  {b.rng.randint(0, 500):>6}  "
        f"{b.rng.uniform(0, 1):.3f}"
        for i in range(b.rng.randint(5, 10))
    ]
    _ipython(
        b,
        f"df = pd.read_csv('data/{noun}s.csv')\ndf.head(10)",
        "Look at the data first.",
        "    day         count   ratio\n" + "\n".join(rows),
        [],
    )


def step_think(b: Builder) -> None:
    thought = b.rng.choice(
        [
            "The failure only happens on the second page, so the offset must be computed from the "
            "page number before the limit is applied.",
            "There are two callers of this helper; changing its signature would break the CLI, so I "
            "will keep the old parameter and add a new keyword argument.",
            "The screenshot shows the error banner only after submitting the form; the request "
            "itself is fine, the template escapes the title twice.",
            "Before editing, list what could explain the stale value: the cache key, the TTL, or "
            "the write path not invalidating.",
        ]
    )
    action = b.action(
        "think",
        f"I am thinking...: {thought}",
        {"thought": thought},
        tool="think",
        tool_args={"thought": thought},
    )
    b.observation(
        action, "think", "Your thought has been logged.", "Your thought has been logged.", {}
    )


def step_agent_message(b: Builder) -> None:
    text = b.rng.choice(
        [
            "I found the cause; I'm applying a fix and will run the test suite next.",
            "The tests pass locally. Should I also update the changelog?",
            "Quick status: reproduced the bug, now narrowing it down to the query.",
        ]
    )
    b.action(
        "message",
        text,
        {
            "content": text,
            "file_urls": [],
            "image_urls": [],
            "wait_for_response": False,
            "security_risk": -1,
        },
    )


STEPS: list[tuple[Callable[[Builder], None], float]] = [
    (step_explore, 3.0),
    (step_read, 3.0),
    (step_edit, 2.5),
    (step_test, 2.0),
    (step_think, 1.0),
    (step_install, 0.6),
    (step_command_error, 0.6),
    (lambda b: step_edit(b, miss=True), 0.4),
    (step_dataframe, 0.5),
]
