"""The steps an agent takes in a terminal and an editor (explore, read, edit, test, install, a
failing command), each appending an action and its observation; `STEPS` weighs every kind of
step a session draws from (the browser, IPython and thought steps are in steps_browse.py).

Every value comes from the builder's random.Random, so a seed gives the same events.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from apps.demo.builder import Builder
from apps.demo.steps_browse import step_dataframe, step_think
from apps.demo.vocabulary import (
    CODE,
    NOUNS,
    VERBS,
)


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
