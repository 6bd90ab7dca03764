"""Realistic made-up OpenHands sessions, for `manage.py demo_data`, benchmarks and tests.

Pure Python (no Django). Everything is drawn from the random.Random the caller passes, so a seed
gives the same bytes every time. The shapes follow shared/OPENHANDS.md: a `system` action
(openhands_version, agent_class), the user's task, then agent actions (`run`, `read`, `edit`,
`browse`, `browse_interactive`, `run_ipython`, `think`, messages) each answered by its observation
(`cause` = the action's id), errors, and a `finish`; `llm_metrics` and `tool_call_metadata` name the
model. Screenshots, set-of-marks and plots are real PNG data URLs (see images.py).

    rng = random.Random(7)
    session = generate_session(rng, events=340, screenshots=3)
    body = share_payload(session)            # what OpenHands' share button POSTs
    array = v0_array(session)                # what its "export trajectory" button downloads

`sessions(seed, count)` yields independent sessions: session i is the same whatever the count.
"""

from __future__ import annotations

import random
import re
import textwrap
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import orjson

from apps.demo import images
from apps.demo.builder import Builder
from apps.demo.steps import STEPS, step_explore, step_test
from apps.demo.steps_browse import step_agent_message, step_browse, step_plot
from apps.demo.vocabulary import (
    AGENTS,
    BUGS,
    DATA_TASKS,
    EMAIL_DOMAINS,
    FEATURES,
    FIRST_NAMES,
    MODELS,
    NOUNS,
    PROJECTS,
    SYSTEM_PROMPT,
    TOOLS,
    VERBS,
    VERSIONS,
    Project,
    doer,
    gerund,
)

DOUBLED = re.compile(r"\b(\w+) \1\b")

__all__ = [
    "generate_session",
    "sessions",
    "share_payload",
    "v0_array",
    "payload_size",
]


def _task(rng: random.Random, project: Project) -> tuple[str, str, str]:
    """(kind, title, user message) for one session."""
    noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
    kind = rng.choice(["bug", "bug", "feature", "web", "data"])
    if kind == "data":
        ask, title = rng.choice(DATA_TASKS)
        return kind, title.format(noun=noun), ask.format(noun=noun).capitalize() + "."
    if kind == "feature":
        ask = rng.choice(FEATURES).format(noun=noun, gerund=gerund(verb), doer=doer(verb))
        return (
            kind,
            f"{ask[0].upper()}{ask[1:]} ({project.name})",
            (
                f"In the {project.name} repository, please {ask}. Keep the existing tests passing and "
                "add new ones for the change."
            ),
        )
    bug, symptom = rng.choice(BUGS)
    # "the cache cache", "the page page": a noun the template already names is said once.
    symptom = DOUBLED.sub(r"\1", symptom.format(noun=noun))
    title = "Fix " + DOUBLED.sub(r"\1", bug.format(noun=noun)) + f" in {project.name}"
    if kind == "web":
        return (
            kind,
            title,
            (
                DOUBLED.sub(r"\1", f"The {noun} page")
                + f" at http://{project.host}/{noun}s {symptom}. Open it "
                "in the browser, find the cause in the code and fix it."
            ),
        )
    message = f"{project.name} {symptom}. Can you find the cause and fix it? Tests are in tests/."
    if rng.random() < 0.3:
        who = rng.choice(FIRST_NAMES)
        # A contact address in the task: the scan finds it and redacts it on public pages.
        message += f" If you are unsure, the maintainer is {who}@{rng.choice(EMAIL_DOMAINS)}."
    return kind, title, message


def generate_session(
    rng: random.Random,
    *,
    events: int | None = None,
    screenshots: int | None = None,
    plots: int | None = None,
    target_bytes: int | None = None,
    screenshot_bytes: int = 0,
    start: datetime | None = None,
) -> dict:
    """One made-up OpenHands session.

    events: the exact number of events (at least 3 + 2 per screenshot and plot); chosen if None.
    screenshots: browse observations carrying a screenshot and a set-of-marks image.
    plots: run_ipython observations carrying a chart. (Both chosen by the task if None, or 0
    when target_bytes is given.)
    target_bytes: grow command output until the share payload is at least this big.
    screenshot_bytes: extra incompressible bytes in each screenshot (real ones are 50-300 KB).

    Returns {"title", "task", "kind", "agent", "model", "openhands_version", "polarity",
    "permissions", "email", "events"}; turn it into bytes with share_payload() or v0_array().
    """
    project = rng.choice(PROJECTS)
    model, prompt_price, completion_price = rng.choice(MODELS)
    agent = rng.choice(AGENTS)
    version = rng.choice(VERSIONS)
    kind, title, task = _task(rng, project)
    # With a byte target the caller sizes the session: images only when asked for.
    if screenshots is None:
        screenshots = (
            0
            if target_bytes
            else (rng.randint(1, 4) if kind == "web" else rng.choice([0, 0, 0, 1]))
        )
    if plots is None:
        plots = 0 if target_bytes else (rng.randint(1, 2) if kind == "data" else 0)
    needed = 3 + 2 * (screenshots + plots)
    if events is None:
        if target_bytes:
            events = max(needed, 5, int(target_bytes // 3000))
        else:
            events = needed + 2 * rng.randint(4, 25)
    if events < needed:
        raise ValueError(
            f"{events} events cannot hold {screenshots} screenshots and {plots} plots "
            f"(at least {needed} events)"
        )
    if start is None:
        start = datetime(2025, 1, 1) + timedelta(seconds=rng.randint(0, 330 * 86400))
    b = Builder(
        rng,
        model=model,
        prices=(prompt_price, completion_price),
        project=project,
        start=start,
        screenshot_bytes=screenshot_bytes,
    )
    _open(b, rng, kind=kind, task=task, version=version, agent=agent)
    passed = _agent_steps(b, rng, events=events, screenshots=screenshots, plots=plots)
    _finish(b, title, passed)
    session = {
        "title": title,
        "task": task,
        "kind": kind,
        "agent": agent,
        "model": model,
        "openhands_version": version,
        "polarity": "positive" if passed else "negative",
        "permissions": "public" if rng.random() < 0.7 else "private",
        "email": f"{rng.choice(FIRST_NAMES)}.{rng.randint(1, 99)}@example.com",
        "events": b.events,
    }
    if target_bytes:
        _grow(b, session, target_bytes)
    return session


def _open(
    b: Builder, rng: random.Random, *, kind: str, task: str, version: str, agent: str
) -> None:
    """The session's first two events: the system prompt and the user's task."""
    b.action(
        "system",
        SYSTEM_PROMPT,
        {
            "content": SYSTEM_PROMPT,
            "tools": TOOLS,
            "openhands_version": version,
            "agent_class": agent,
        },
    )
    attached = []
    if kind == "web" and rng.random() < 0.3:
        attached = [images.data_url(images.photo(rng))]
    b.action(
        "message",
        task,
        {
            "content": task,
            "file_urls": [],
            "image_urls": attached,
            "wait_for_response": False,
            "security_risk": -1,
        },
        source="user",
    )


def _agent_steps(
    b: Builder, rng: random.Random, *, events: int, screenshots: int, plots: int
) -> bool:
    """The agent's steps between the task and the finish; whether the last test run passed."""
    middle = events - 3
    filler = middle - 2 * (screenshots + plots)
    plan: list[Callable[[Builder], None]] = []
    functions = [step for step, _ in STEPS]
    weights = [weight for _, weight in STEPS]
    for _ in range(filler // 2):
        plan.append(rng.choices(functions, weights)[0])
    if plan:
        plan[0] = step_explore  # agents look around before anything else
    special = [step_browse] * screenshots + [step_plot] * plots
    for step in special:
        plan.insert(rng.randint(1 if plan else 0, len(plan)), step)
    passed = rng.random() < 0.75
    if plan and plan[-1] not in special:
        plan[-1] = lambda b: step_test(b, passed=passed)  # the last test run decides the outcome
    if filler % 2:
        plan.insert(rng.randint(len(plan) // 2, len(plan)), step_agent_message)
    for step in plan:
        step(b)
    return passed


def _finish(b: Builder, title: str, passed: bool) -> None:
    """The agent's `finish`, its summary saying whether the fix worked."""
    summary = (
        f"I fixed the issue: {title[0].lower()}{title[1:]}. The change is small and the tests pass."
        if passed
        else "I could not fully fix this: the failing test still fails after my change. "
        "See the last test output for details."
    )
    b.action(
        "finish",
        summary,
        {
            "final_thought": summary,
            "outputs": {},
            "thought": "",
            "task_completed": "true" if passed else "partial",
        },
        tool="finish",
        tool_args={"message": summary, "task_completed": "true"},
    )


def _grow(b: Builder, session: dict, target_bytes: int) -> None:
    """Append plausible command output until the share payload reaches target_bytes."""
    outputs = [e for e in b.events if e.get("observation") == "run"]
    while (deficit := target_bytes - payload_size(session)) > 0:
        if not outputs:
            # Nothing ran: the user pasted a long log into the task instead.
            message = b.events[1]
            chunk = _log_lines(b.rng, deficit // 2 + 1, b.project)
            message["args"]["content"] += "\n\n" + chunk
            message["message"] = message["args"]["content"]
            continue
        share = deficit // len(outputs) + 1
        for event in outputs:
            chunk = _log_lines(b.rng, min(share, deficit), b.project)
            event["content"] = f"{event['content']}\n{chunk}" if event["content"] else chunk
            deficit -= len(chunk) + 1
            if deficit <= 0:
                break


def _log_lines(rng: random.Random, nbytes: int, project: Project) -> str:
    """About nbytes of build/test/server log, the bulk of real command output."""
    lines: list[str] = []
    size = 0
    levels = ["INFO", "INFO", "INFO", "DEBUG", "WARNING", "ERROR"]
    second = rng.randint(0, 80000)
    while size < nbytes:
        second += rng.randint(0, 3)
        kind = rng.random()
        if kind < 0.5:
            line = (
                f"2025-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d} "
                f"{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d},"
                f"{rng.randint(0, 999):03d} {rng.choice(levels)} {project.package}."
                f"{rng.choice(NOUNS)}: {rng.choice(VERBS)} {rng.choice(NOUNS)} "
                f"id={rng.randint(1, 99999)} in {rng.uniform(0.1, 900):.1f}ms"
            )
        elif kind < 0.8:
            line = (
                f"tests/test_{rng.choice(NOUNS)}s.py::test_{rng.choice(VERBS)}_"
                f"{rng.choice(NOUNS)}[{rng.choice(['sqlite', 'postgres', 'empty', 'utf8'])}] "
                f"{rng.choice(['PASSED', 'PASSED', 'PASSED', 'SKIPPED', 'FAILED'])} "
                f"[{rng.randint(0, 100):3d}%]"
            )
        else:
            line = textwrap.shorten(
                f'  File "/workspace/{project.name}/{project.package}/{rng.choice(NOUNS)}s.py", '
                f"line {rng.randint(1, 400)}, in {rng.choice(VERBS)}_{rng.choice(NOUNS)}",
                120,
            )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def sessions(seed: int, count: int, **options: Any) -> Iterator[dict]:
    """`count` sessions; the i-th depends only on (seed, i), so runs of any count agree."""
    for index in range(count):
        yield generate_session(random.Random(f"trajhub-demo:{seed}:{index}"), **options)


def share_payload(
    session: dict,
    *,
    email: str | None = None,
    permissions: str | None = None,
    polarity: str | None = None,
) -> bytes:
    """The JSON body OpenHands' share button POSTs (v0.12.1+: no token)."""
    polarity = polarity or session["polarity"]
    return orjson.dumps(
        {
            "version": "1.0",
            "email": session["email"] if email is None else email,
            "polarity": polarity,
            "feedback": polarity,
            "permissions": permissions or session["permissions"],
            "trajectory": session["events"],
        }
    )


def payload_size(session: dict) -> int:
    return len(share_payload(session))


_EXPORT_DROPPED = (
    "dom_object",
    "axtree_object",
    "active_page_index",
    "last_browser_action",
    "last_browser_action_error",
    "focused_element_bid",
    "extra_element_properties",
)


def v0_array(session: dict, *, include_screenshots: bool = False, wrapped: bool = False) -> bytes:
    """The bare event array OpenHands' "export trajectory" writes (`event_to_trajectory`):
    browser DOM extras dropped, screenshots too unless include_screenshots. wrapped=True gives
    {"trajectory": [...]}, the API answer it downloads from."""
    events = []
    for event in session["events"]:
        if "extras" in event:
            extras = {k: v for k, v in event["extras"].items() if k not in _EXPORT_DROPPED}
            if not include_screenshots:
                extras.pop("screenshot", None)
                extras.pop("set_of_marks", None)
            event = {**event, "extras": extras}
        events.append(event)
    return orjson.dumps({"trajectory": events} if wrapped else events)
