"""The steps an agent takes outside the terminal: browsing (pages, screenshots, set-of-marks),
IPython plots and tables, thoughts and messages to the user; each appends an action and its
observation.

Every value comes from the builder's random.Random, so a seed gives the same events.
"""

from __future__ import annotations

from datetime import timedelta

from apps.demo import images
from apps.demo.builder import Builder
from apps.demo.vocabulary import (
    NOUNS,
    PAGE_WORDS,
    VERBS,
)


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
