"""Scanner throughput vs the floor: one compiled regular expression over the same text, same run.

Target (DESIGN.md): the scanner runs at >= 1/10 of the floor's speed. The text is every string of
the real trajectories in shared/fixtures/real (commands, code, tool output, logs), repeated to the
requested size, with a credential or a piece of personal data planted in about one string in 40.

It is measured three ways: batched (`Scanner.scan_many` over the strings of a batch of events,
the way the scan service walks a trajectory), string by string, and as one joined text. The floor
is timed the same way over the same text: `\\d{3}` (a cheap class-anchored regex, the stricter
floor; the target is judged against it) and the email regex on its own.

    .venv/bin/python bench/bench_scan.py [--mb 8] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import string
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apps.moderation.scanners import Scanner  # noqa: E402

FIXTURES = Path(os.environ.get("TRAJHUB_FIXTURES_DIR", ROOT.parent / "shared" / "fixtures"))
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
DIGITS = re.compile(r"\d{3}")
BATCH = 500  # strings per scan_many call, about one batch of events in the service


def strings_of(value, out: list[str]) -> None:
    if isinstance(value, str):
        if not value.startswith("data:image/"):
            out.append(value)
    elif isinstance(value, list):
        for item in value:
            strings_of(item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            out.append(key)
            strings_of(item, out)


def load_real_strings() -> list[str]:
    out: list[str] = []
    for path in sorted((FIXTURES / "real").glob("*")):
        if path.suffix not in {".json", ".jsonl", ".traj"}:
            continue
        text = path.read_text(encoding="utf-8")
        try:
            documents = [json.loads(text)]
        except json.JSONDecodeError:
            documents = [json.loads(line) for line in text.splitlines() if line.strip()]
        for document in documents:
            strings_of(document, out)
    if not out:
        raise SystemExit(f"no fixtures under {FIXTURES / 'real'} (set TRAJHUB_FIXTURES_DIR)")
    return out


def planted(rng: random.Random) -> str:
    """A credential or a piece of personal data, built here so none is committed verbatim."""
    alnum = string.ascii_letters + string.digits

    def token(n: int) -> str:
        return "".join(rng.choices(alnum, k=n))

    return rng.choice(
        [
            f"export OPENAI_API_KEY=sk-{token(48)}",
            f"git remote add origin https://ghp_{token(36)}@github.com/acme/app.git",
            f"AWS_ACCESS_KEY_ID=AKIA{token(16).upper()}",
            f"Contact: {token(6).lower()}.{token(5).lower()}@gmail.com",
            f"curl -H 'Authorization: Bearer {token(40)}' https://api.acme.io/v1",
            f"ssh deploy@{rng.randint(11, 99)}.{rng.randint(1, 254)}.{rng.randint(1, 254)}.7",
            f"call +44 20 7946 {rng.randint(1000, 9999)}",
            f'DB_PASSWORD="{token(20)}"',
        ]
    )


def build_corpus(mb: float, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    base = load_real_strings()
    target = int(mb * 1024 * 1024)
    out: list[str] = []
    size = 0
    while size < target:
        for text in base:
            if rng.random() < 1 / 40:
                text = f"{text}\n{planted(rng)}\n"
            out.append(text)
            size += len(text)
            if size >= target:
                break
    return out


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=8.0, help="corpus size in MB of text")
    parser.add_argument("--repeat", type=int, default=5, help="best of N runs")
    args = parser.parse_args()

    corpus = build_corpus(args.mb)
    joined = "\n".join(corpus)
    megabytes = len(joined) / (1024 * 1024)
    scanner = Scanner()

    def scan_each() -> None:
        for text in corpus:
            scanner.scan(text)

    def floor_each(pattern: re.Pattern[str]):
        def run() -> None:
            for text in corpus:
                for _ in pattern.finditer(text):
                    pass

        return run

    def floor_joined(pattern: re.Pattern[str]):
        def run() -> None:
            for _ in pattern.finditer(joined):
                pass

        return run

    # The service's path: the strings of a batch of events scanned in one call.
    batches = [corpus[i : i + BATCH] for i in range(0, len(corpus), BATCH)]
    joined_batches = ["\x00".join(batch) for batch in batches]

    def scan_batches() -> None:
        for batch in batches:
            scanner.scan_many(batch)

    def floor_batches(pattern: re.Pattern[str]):
        def run() -> None:
            for text in joined_batches:
                for _ in pattern.finditer(text):
                    pass

        return run

    findings = sum(len(scanner.scan_many(batch)) for batch in batches)
    rows = [
        ("batched", scan_batches, floor_batches(DIGITS), floor_batches(EMAIL)),
        ("per string", scan_each, floor_each(DIGITS), floor_each(EMAIL)),
        ("joined text", lambda: scanner.scan(joined), floor_joined(DIGITS), floor_joined(EMAIL)),
    ]
    print(f"corpus: {megabytes:.1f} MB in {len(corpus):,} strings, {findings:,} findings")
    print(
        f"{'mode':<12} {'scanner':>10} {'floor d{3}':>11} {'ratio':>7} {'floor email':>12} {'ratio':>7}"
    )
    ok = True
    for label, scan_fn, digits_fn, email_fn in rows:
        scan_speed = megabytes / best_of(args.repeat, scan_fn)
        digits_speed = megabytes / best_of(args.repeat, digits_fn)
        email_speed = megabytes / best_of(args.repeat, email_fn)
        ratio = scan_speed / digits_speed
        if label != "per string":  # per string measures call overhead, not what the service does
            ok = ok and ratio >= 0.1
        print(
            f"{label:<12} {scan_speed:>7.1f} MB/s {digits_speed:>6.1f} MB/s {ratio:>7.2f}"
            f" {email_speed:>7.1f} MB/s {scan_speed / email_speed:>7.2f}"
        )
    print(
        f"target: scanner >= 0.10 x the \\d{{3}} floor (batched, joined): {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
