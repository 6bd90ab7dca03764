"""The trajectory viewer in Chromium, as a reader uses it, next to Inspect AI's log viewer on the
same 2,001-message trajectory (issue 24).

Lines, per viewer, each run in a fresh browser (alternating TrajHub and Inspect, `--runs` each):
  first paint   navigation start to the first message's text on screen (ms)
  bytes         bytes fetched until then (encoded, every request: HTML, JS, CSS, data)
  heap          JS heap used once open (MB; CDP Performance.getMetrics after a GC)
  elements      document elements once open, peak during a full scroll (mouse wheel, 1,600 px
                a turn, until the end), and at the end
  tab memory    the renderer processes' PSS growth over the full scroll (MB; /proc smaps_rollup)
  permalink     navigation start to message 1,500 on screen, opened by its permalink (ms)
  find          last keystroke of "round 777" (typed 80 ms a key) to the match on screen (ms)
Targets (DESIGN.md): <= 3,000 elements at any point of the full scroll; TrajHub ahead of Inspect
on every line; find <= 100 ms at 50,000 steps (`--long 50000` adds that line, TrajHub alone).

The trajectory: Inspect's mock model (`mockllm/model`, offline) answers 1,000 rounds of a fixed
conversation (a system message, then user / assistant turns: 2,001 messages); the log it writes
is served by `inspect view`, and the same messages go into TrajHub as an OpenAI-messages
trajectory (the Inspect importer of issue 22 was not on main when this was written), stored
through the real ingest service into PostgreSQL (trajhub_bench_viewer) and served by gunicorn.

Inspect AI is not a dependency of the site. Install it in a virtualenv of its own, so that its
pins cannot move the site's packages, and point the bench at it:
    python3 -m venv /work/inspect-venv && /work/inspect-venv/bin/pip install inspect-ai
    INSPECT_PYTHON=/work/inspect-venv/bin/python .venv/bin/python bench/bench_viewer.py --runs 3
Without it the Inspect lines are skipped (and said so). State the machine's load with the
figures: the bench prints the load average before and after.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "viewer"

# bench_list's helpers below read BENCH_DATABASE_URL too: one database for both modules.
DATABASE_URL = os.environ.setdefault(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trajhub_bench_viewer"
)
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TRAJHUB_VAR_DIR", tempfile.mkdtemp(prefix="trajhub-bench-viewer-"))
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "true")
os.environ.setdefault("TRAJHUB_OCR", "false")

from bench.bench_list import ensure_database, free_port, migrate, start_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ELEMENT_LIMIT = 3000
FIND_LIMIT_MS = 100.0
QUERY = "round 777"  # rounds go up to 1,000: steps 1,553 and 1,554 say it
DEEP = 1500

GENERATE = r"""
import sys
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import solver, system_message

ROUNDS = int(sys.argv[2])

def outputs():
    for n in range(1, ROUNDS + 1):
        output = ModelOutput.from_content(
            model="mockllm/model",
            content=(f"Round {n}: I looked at module_{n}.py and ran its tests. "
                     + "The failure comes from an off-by-one in the loop bound; " * (1 + n % 4)
                     + f"next I will fix handler_{n} and run the suite again."),
        )
        # Set, so that the mock model counts no tokens (tiktoken would download its tables).
        output.usage = ModelUsage(input_tokens=100 * n, output_tokens=40, total_tokens=100 * n + 40)
        yield output

@solver
def rounds():
    async def solve(state, generate):
        for n in range(1, ROUNDS + 1):
            state = await generate(state)
            if n < ROUNDS:
                state.messages.append(ChatMessageUser(
                    content=f"Round {n + 1}: carry on, and check test_case_{n} too."))
        return state
    return solve

task = Task(dataset=[Sample(input="Fix the failing tests in app/ and explain what was wrong.")],
            solver=[system_message("You are a careful software engineer."), rounds()],
            message_limit=ROUNDS * 2 + 10)
logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs()),
                    log_dir=sys.argv[1], log_format="json", display="none")
print(logs[0].location)
"""


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def inspect_log(inspect_python: str | None) -> Path | None:
    """The Inspect log of 1,000 mock rounds (2,001 messages), written once and kept."""
    found = sorted(glob.glob(str(RESULTS / "inspect-logs" / "*.json")))
    if found:
        return Path(found[-1])
    if not inspect_python:
        return None
    (RESULTS / "inspect-logs").mkdir(parents=True, exist_ok=True)
    script = RESULTS / "generate_inspect_log.py"
    script.write_text(GENERATE)
    print("writing the Inspect log with its mock model (about 3 minutes)...")
    subprocess.run([inspect_python, str(script), str(RESULTS / "inspect-logs"), "1000"], check=True)
    return Path(sorted(glob.glob(str(RESULTS / "inspect-logs" / "*.json")))[-1])


def messages_of(log: Path | None, rounds: int = 1000) -> list[dict]:
    """The sample's messages as OpenAI chat messages (Inspect's own when there is a log)."""
    if log is not None:
        sample = json.loads(log.read_text())["samples"][0]
        out = []
        for message in sample["messages"]:
            content = message["content"]
            if isinstance(content, list):
                content = "\n".join(part.get("text", "") for part in content)
            out.append({"role": message["role"], "content": content})
        return out
    out = [
        {"role": "system", "content": "You are a careful software engineer."},
        {"role": "user", "content": "Fix the failing tests in app/ and explain what was wrong."},
    ]
    for n in range(1, rounds + 1):
        out.append(
            {
                "role": "assistant",
                "content": f"Round {n}: I looked at module_{n}.py and ran its tests. "
                + "The failure comes from an off-by-one in the loop bound; " * (1 + n % 4)
                + f"next I will fix handler_{n} and run the suite again.",
            }
        )
        if n < rounds:
            out.append(
                {
                    "role": "user",
                    "content": f"Round {n + 1}: carry on, and check test_case_{n} too.",
                }
            )
    return out


def store(messages: list[dict], title: str) -> str:
    """The trajectory stored through the real ingest service, public and approved: its id."""
    from apps.trajectories.models import Trajectory
    from apps.trajectories.services import ShareOptions, trajectory_ingest

    found = Trajectory.objects.filter(title=title, num_events=len(messages)).first()
    if found is not None:
        return found.share_id
    body = json.dumps({"messages": messages}).encode()
    options = ShareOptions(visibility="public", license_agreed=True, title=title, format=None)
    result = trajectory_ingest(data=body, user=None, options=options)
    assert result.stored, result.errors
    trajectory = result.stored[0].trajectory
    Trajectory.objects.filter(pk=trajectory.pk).update(
        visibility="public", review_state="approved", redactions={}
    )
    return trajectory.share_id


def renderer_pss() -> float:
    """MB of PSS of the Chromium renderer processes under this process (one browser at a time:
    the tab, and its spare renderer if any)."""
    parents: dict[int, int] = {}
    renderers: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid = int(stat.parent.name)
            parents[pid] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if b"--type=renderer" in (stat.parent / "cmdline").read_bytes():
                renderers.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    me = os.getpid()
    total = 0
    for pid in renderers:
        up = pid
        for _ in range(12):
            up = parents.get(up, 0)
            if up in (me, 0, 1):
                break
        if up != me:
            continue
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


VISIBLE_TEXT = """(needle) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.nodeValue.includes(needle)) continue;
    const range = document.createRange(); range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    if (r.height > 0 && r.bottom > 0 && r.top < innerHeight) return true;
  }
  return false;
}"""


class Viewer:
    """What differs between the two viewers: addresses, and how each shows its state."""

    def __init__(self, name: str, open_url: str, deep_url: str, scroller_point=(640, 500)):
        self.name = name
        self.open_url = open_url
        self.deep_url = deep_url
        self.point = scroller_point

    def find(self, page) -> None:
        raise NotImplementedError

    def found(self, page) -> bool:
        raise NotImplementedError


class TrajHub(Viewer):
    def find(self, page) -> None:
        page.locator("#find-input").click()

    def found(self, page) -> bool:
        return page.evaluate(
            "() => { const m = document.querySelector('mark.find-hit-current'); if (!m) return false;"
            " const r = m.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight &&"
            f" m.closest('li').textContent.toLowerCase().includes('{QUERY}'); }}"
        )


class Inspect(Viewer):
    def find(self, page) -> None:
        page.mouse.click(*self.point)
        page.keyboard.press("Control+f")
        page.wait_for_selector("input[placeholder*='ind'], .findBand input, input[type=text]")

    def found(self, page) -> bool:
        return page.evaluate(
            "() => { const s = getSelection(); if (!s.rangeCount) return false;"
            f" if (!s.toString().toLowerCase().includes('{QUERY}')) return false;"
            " const r = s.getRangeAt(0).getBoundingClientRect();"
            " return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }"
        )


def one_run(playwright, viewer: Viewer, first_text: str, deep_text: str, last_text: str) -> dict:
    """Long because it is one reader's visit, measured line by line in a fresh browser."""
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--js-flags=--expose-gc"]
    )
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Performance.enable")
    received = [0]
    cdp.on(
        "Network.loadingFinished",
        lambda event: received.__setitem__(0, received[0] + event["encodedDataLength"]),
    )
    row: dict = {"viewer": viewer.name}
    try:
        page.goto(viewer.open_url, wait_until="commit")
        page.wait_for_function(VISIBLE_TEXT, arg=first_text, timeout=300_000, polling="raf")
        row["first_paint_ms"] = page.evaluate("performance.now()")
        row["bytes"] = received[0]
        page.wait_for_timeout(1500)  # what it fetches after the first paint, to be fair
        row["bytes_settled"] = received[0]
        row["heap_mb"] = heap(page, cdp)
        row["elements_open"] = elements(page)
        memory_before = renderer_pss()
        peak = row["elements_open"]
        page.mouse.move(*viewer.point)
        still = 0
        last_y = None
        for _ in range(3000):
            page.mouse.wheel(0, 1600)
            page.wait_for_timeout(40)
            peak = max(peak, elements(page))
            if page.evaluate(VISIBLE_TEXT, last_text):
                break
            y = page.evaluate(
                "() => { let m = scrollY; for (const e of document.querySelectorAll('*'))"
                " if (e.scrollTop > m) m = e.scrollTop; return m; }"
            )
            still = still + 1 if y == last_y else 0
            last_y = y
            if still > 50:
                break
        page.wait_for_timeout(1000)
        peak = max(peak, elements(page))
        row["reached_end"] = page.evaluate(VISIBLE_TEXT, last_text)
        row["elements_peak"] = peak
        row["elements_end"] = elements(page)
        row["heap_end_mb"] = heap(page, cdp)
        row["tab_growth_mb"] = renderer_pss() - memory_before

        page.goto("about:blank")
        page.goto(viewer.deep_url, wait_until="commit")
        page.wait_for_function(VISIBLE_TEXT, arg=deep_text, timeout=300_000, polling="raf")
        row["permalink_ms"] = page.evaluate("performance.now()")

        viewer.find(page)
        page.keyboard.type(QUERY[:-1], delay=80)
        page.wait_for_timeout(80)
        start = time.perf_counter()
        page.keyboard.type(QUERY[-1])
        deadline = start + 10
        while time.perf_counter() < deadline and not viewer.found(page):
            time.sleep(0.002)
        row["find_ms"] = (time.perf_counter() - start) * 1000 if viewer.found(page) else None
    except Exception as error:  # noqa: BLE001 - a viewer that fails a line is reported so
        row["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
        SCREENS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENS / f"{viewer.name}-error.png"))
    finally:
        browser.close()
    return row


SCREENS = RESULTS / "screens"


def heap(page, cdp) -> float:
    page.evaluate("() => window.gc && window.gc()")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return metrics.get("JSHeapUsedSize", 0) / 1e6


def elements(page) -> int:
    return page.evaluate("document.getElementsByTagName('*').length")


def find_long(playwright, url: str, steps: int) -> list[float | None]:
    """Find as you type on a long trajectory (TrajHub alone): last keystroke to match on screen."""
    out: list[float | None] = []
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(url)
    page.wait_for_selector("#tools:not([hidden])")
    hub = TrajHub("TrajHub", url, url)
    for n in range(5):
        query = f"round {steps // 2 - 1 - n * 3717}"
        page.locator("#find-input").fill("")
        page.locator("#find-input").click()
        page.keyboard.type(query[:-1], delay=80)
        page.wait_for_timeout(80)
        start = time.perf_counter()
        page.keyboard.type(query[-1])
        while time.perf_counter() < start + 10:
            if page.evaluate(
                "(q) => { const m = document.querySelector('mark.find-hit-current');"
                " if (!m) return false; const r = m.getBoundingClientRect();"
                " return r.top >= 0 && r.bottom <= innerHeight &&"
                " m.closest('li').textContent.toLowerCase().includes(q); }",
                query,
            ):
                out.append((time.perf_counter() - start) * 1000)
                break
        else:
            out.append(None)
    del hub
    browser.close()
    return out


def median(rows: list[dict], key: str) -> str:
    values = [row[key] for row in rows if row.get(key) is not None]
    if not values:
        return "n/a"
    value = statistics.median(values)
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--long", type=int, default=0, help="also find in a trajectory this long")
    parser.add_argument("--inspect-python", default=os.environ.get("INSPECT_PYTHON"))
    args = parser.parse_args()
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)")

    log = inspect_log(args.inspect_python)
    messages = messages_of(log)
    print(f"trajectory: {len(messages)} messages" + (f" (Inspect log {log.name})" if log else ""))
    ensure_database()
    migrate()
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)
    share_id = store(messages, "bench_viewer: 2,001 messages")
    long_id = None
    if args.long:
        rounds = (args.long - 1) // 2
        long_id = store(messages_of(None, rounds)[: args.long], f"bench_viewer: {args.long} steps")

    port = free_port()
    server = start_server(port, workers=2)
    processes = [server]
    viewers: list[Viewer] = [
        TrajHub(
            "TrajHub",
            f"http://127.0.0.1:{port}/t/{share_id}/",
            f"http://127.0.0.1:{port}/t/{share_id}/#step-{DEEP}",
        )
    ]
    if log is not None and args.inspect_python:
        view_port = free_port()
        inspect_bin = str(Path(args.inspect_python).parent / "inspect")
        processes.append(
            subprocess.Popen(
                [inspect_bin, "view", "--log-dir", str(log.parent), "--port", str(view_port)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        time.sleep(5)
        sample = json.loads(log.read_text())["samples"][0]
        deep_id = sample["messages"][DEEP - 1]["id"]
        root = f"http://127.0.0.1:{view_port}/#/logs/{log.name}/samples/sample/1/1/messages"
        viewers.append(Inspect("Inspect", root, f"{root}?message={deep_id}"))
    else:
        print("Inspect AI not installed (see the docstring): its lines are skipped")

    first_text = "Fix the failing tests"
    deep_text = messages[DEEP - 1]["content"][:40]
    last_text = messages[-1]["content"][:40]
    rows: list[dict] = []
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            for run in range(args.runs):
                for viewer in viewers if run % 2 == 0 else list(reversed(viewers)):
                    row = one_run(playwright, viewer, first_text, deep_text, last_text)
                    print(json.dumps(row))
                    rows.append(row)
            long_find = []
            if long_id:
                long_find = find_long(
                    playwright, f"http://127.0.0.1:{port}/t/{long_id}/", args.long
                )
    finally:
        for process in processes:
            process.terminate()
    print(f"\nload average after: {load_average()}")
    keys = [
        ("first paint (ms)", "first_paint_ms"),
        ("bytes at first paint", "bytes"),
        ("bytes 1.5 s later", "bytes_settled"),
        ("JS heap open (MB)", "heap_mb"),
        ("elements open", "elements_open"),
        ("elements peak, full scroll", "elements_peak"),
        ("elements at the end", "elements_end"),
        ("JS heap at the end (MB)", "heap_end_mb"),
        ("tab memory growth, full scroll (MB)", "tab_growth_mb"),
        (f"permalink to message {DEEP} (ms)", "permalink_ms"),
        (f"find '{QUERY}' typed to visible (ms)", "find_ms"),
    ]
    names = [viewer.name for viewer in viewers]
    print(f"\nmedians of {args.runs} runs each, alternated:")
    print(f"{'line':42}" + "".join(f"{name:>14}" for name in names))
    for label, key in keys:
        cells = [median([r for r in rows if r["viewer"] == name], key) for name in names]
        print(f"{label:42}" + "".join(f"{cell:>14}" for cell in cells))
    hub = [r for r in rows if r["viewer"] == "TrajHub"]
    peak = max((r.get("elements_peak") or 0) for r in hub)
    print(
        f"\nTrajHub elements at any point of the full scroll: {peak} "
        f"(target <= {ELEMENT_LIMIT}: {'PASS' if peak <= ELEMENT_LIMIT else 'FAIL'})"
    )
    for row in rows:
        if row.get("error"):
            print(f"{row['viewer']}: {row['error']}")
    if long_id:
        good = [v for v in long_find if v is not None]
        worst = max(good) if good else None
        verdict = (
            "PASS" if good and len(good) == len(long_find) and worst <= FIND_LIMIT_MS else "FAIL"
        )
        print(
            f"find at {args.long} steps, typed to visible: "
            + ", ".join("n/a" if v is None else f"{v:.0f}" for v in long_find)
            + f" ms (target <= {FIND_LIMIT_MS:.0f}: {verdict})"
        )


if __name__ == "__main__":
    main()
