"""Scanner throughput vs the floor: one compiled regular expression over the same text, same run.

Target (DESIGN.md): the full scan (secrets, personal data, allowlist, placeholders) runs at
the floor's speed or more over the real agent text alone (`--plant-every 0`), and at >= 0.3 of
it with a secret or personal datum planted in 1 string in 40 (the default), at 1 and 20 MB. The text is every string of
the real trajectories in shared/fixtures/real (commands, code, tool output, logs), repeated to the
requested size, with a credential or a piece of personal data planted in about one string in 40
(`--plant-every N` changes that: the scan's cost per finding, the library's above all, dominates
at this density, about 600 findings per MB; the real text alone has about 20).

It is measured two ways: batched (`Scanner.scan_many` over the strings of a batch of events,
the way the scan service walks a trajectory: strings under 6 characters are not read, then
placeholders numbered), and as one joined text. The floor is timed over the same text, every
string of it: `\\d{3}` (a cheap class-anchored regex, the stricter
floor; the target is judged against it) and the email regex on its own (`--no-email`: not
timed; on the real fixtures it runs at about 0.1 MB/s, most of the bench's time). The target is judged on
the batched mode, the scan service's (it reads each distinct string once); the joined text, every
string again as one, is printed beside it.

    .venv/bin/python bench/bench_scan.py [--mb 1 20] [--repeat 3] [--profile]
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

from apps.moderation.scanning import scanner as engine  # noqa: E402
from apps.moderation.scanning.memo import ScanMemo  # noqa: E402
from apps.moderation.scanning.scanner import Scanner  # noqa: E402

FIXTURES = Path(os.environ.get("TRAJHUB_FIXTURES_DIR", ROOT.parent / "shared" / "fixtures"))
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
DIGITS = re.compile(r"\d{3}")
# The scan service's batches (apps/moderation/services/findings.py, `find_in_entries`; a test
# keeps these in step): strings under MIN_CHARS characters and image references are not read (no
# finding fits in them), the rest go to scan_many BATCH strings or BATCH_CHARS characters at a time.
BATCH = 2000
BATCH_CHARS = 1 << 20
MIN_CHARS = 6
SKIPPED_PREFIXES = ("trajhub-image:", "data:image/")
# DESIGN.md: the real text alone at least at the speed of one compiled regular expression, with
# a planted secret or personal datum in 1 string in 40 at 0.3 of it or more.
TARGET_REAL, TARGET_PLANTED = 1.0, 0.3


def target(plant_every: int) -> float:
    return TARGET_REAL if plant_every == 0 else TARGET_PLANTED


CORPUS = ROOT / "tests" / "moderation" / "data" / "gitleaks_samples.json"


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


def build_corpus(mb: float, seed: int = 7, plant_every: int = 40) -> list[str]:
    rng = random.Random(seed)
    base = load_real_strings()
    target = int(mb * 1024 * 1024)
    out: list[str] = []
    size = 0
    while size < target:
        for text in base:
            if plant_every and rng.random() < 1 / plant_every:
                text = f"{text}\n{planted(rng)}\n"
            out.append(text)
            size += len(text)
            if size >= target:
                break
    return out


def service_batches(corpus: list[str]) -> list[list[str]]:
    """The strings the scan service reads, in the batches it reads them in (`find_in_entries`)."""
    batches: list[list[str]] = []
    batch: list[str] = []
    size = 0
    for text in corpus:
        if len(text) < MIN_CHARS or text.startswith(SKIPPED_PREFIXES):
            continue
        batch.append(text)
        size += len(text)
        if len(batch) >= BATCH or size >= BATCH_CHARS:
            batches.append(batch)
            batch, size = [], 0
    if batch:
        batches.append(batch)
    return batches


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def placeholders(found: list[tuple[int, object]]) -> dict[str, str]:
    """The service's placeholder numbering (apps.moderation.services.placeholders, which needs
    Django): one per distinct value a reader sees, numbered per kind in order of appearance."""
    counters: dict[str, int] = {}
    out: dict[str, str] = {}
    for _, detection in found:
        shown = detection.shown  # type: ignore[attr-defined]
        if shown not in out:
            label = detection.kind.upper()  # type: ignore[attr-defined]
            counters[label] = counters.get(label, 0) + 1
            out[shown] = f"<{label}_{counters[label]}>"
    return out


def measure(
    mb: float,
    repeat: int,
    scanner: Scanner,
    profile: bool = False,
    plant_every: int = 40,
    email: bool = True,
) -> bool:
    corpus = build_corpus(mb, plant_every=plant_every)
    joined = "\n".join(corpus)
    megabytes = len(joined) / (1024 * 1024)
    # The service's path: the strings of a batch of events scanned in one call, then numbered.
    batches = service_batches(corpus)
    # The floor reads every string, the short ones too: the same text as the trajectory's.
    joined_batches = ["\x00".join(corpus[i : i + BATCH]) for i in range(0, len(corpus), BATCH)]

    def scan_batches() -> None:
        # A new trajectory's phone numbers are new to the process: each run checks them all
        # with phonenumbers again (about 80 us each), as the first scan of a trajectory does.
        engine._valid_phone.cache_clear()
        found = []
        memo = ScanMemo()  # one per trajectory, as the scan service keeps it
        for batch in batches:
            found.extend(scanner.scan_many(batch, memo))
        placeholders(found)

    def scan_joined() -> None:
        engine._valid_phone.cache_clear()  # as in scan_batches
        scanner.scan(joined)

    def floor_batches(pattern: re.Pattern[str]):
        def run() -> None:
            for text in joined_batches:
                for _ in pattern.finditer(text):
                    pass

        return run

    def floor_joined(pattern: re.Pattern[str]):
        def run() -> None:
            for _ in pattern.finditer(joined):
                pass

        return run

    findings = sum(len(scanner.scan_many(batch)) for batch in batches)
    rows = [
        ("batched", scan_batches, floor_batches(DIGITS), floor_batches(EMAIL)),
        ("joined text", scan_joined, floor_joined(DIGITS), floor_joined(EMAIL)),
    ]
    print(f"\ncorpus: {megabytes:.1f} MB in {len(corpus):,} strings, {findings:,} findings")
    print(
        f"{'mode':<12} {'scanner':>10} {'floor d{3}':>11} {'ratio':>7} {'floor email':>12} {'ratio':>7}"
    )
    ok = True
    for label, scan_fn, digits_fn, email_fn in rows:
        # Interleaved, best of each: on a machine shared with other work the load changes from
        # second to second, and a floor timed a minute after the scanner is no floor for it.
        best = [float("inf")] * 3
        timed = (digits_fn, scan_fn, email_fn) if email else (digits_fn, scan_fn)
        for _ in range(repeat):
            for slot, fn in enumerate(timed):
                best[slot] = min(best[slot], best_of(1, fn))
        digits_speed, scan_speed, email_speed = (megabytes / seconds for seconds in best)
        ratio = scan_speed / digits_speed
        if label == "batched":
            ok = ok and ratio >= target(plant_every)
        emails = f" {email_speed:>7.1f} MB/s {scan_speed / email_speed:>7.2f}" if email else ""
        print(
            f"{label:<12} {scan_speed:>7.1f} MB/s {digits_speed:>6.1f} MB/s {ratio:>7.2f}{emails}"
        )
    if profile:
        profile_batches(scan_batches, floor_batches(DIGITS), megabytes)
    return ok


def profile_batches(scan_batches, floor, megabytes: float) -> None:
    """Where the batched scan's time goes (`--profile`): cProfile's top functions by own time,
    each as a multiple of the floor's time measured just before, in the same run."""
    import cProfile
    import io
    import pstats

    started = time.perf_counter()
    floor()
    floor_seconds = time.perf_counter() - started
    profiler = cProfile.Profile()
    profiler.runcall(scan_batches)
    stats = pstats.Stats(profiler, stream=io.StringIO())
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    total = sum(row[1][2] for row in rows)
    print(
        f"profile, batched, {megabytes:.1f} MB: {total / floor_seconds:.1f}x the floor's time"
        f" under cProfile (floor {floor_seconds * 1000:.1f} ms); own time, x floor:"
    )
    for (path, line, name), (_, calls, own, _, _) in rows[:14]:
        where = f"{Path(path).name}:{line}({name})" if line else name
        print(f"  {own / floor_seconds:6.2f}  {calls:>7}  {where}")


def recall_figures(scanner: Scanner) -> None:
    """Recall on the gitleaks corpus (tests/moderation/test_recall.py asserts it)."""
    corpus = json.loads(CORPUS.read_text())["samples"]
    places = {
        "free text": lambda v: f"The deploy log printed {v} and then exited.",
        "url": lambda v: f"GET https://api.service.io/v1/items?key={v}&page=2 HTTP/1.1",
        "assignment": lambda v: f"SERVICE_API_KEY={v}",
    }
    for name, place in places.items():
        hits = 0
        for item in corpus:
            secret = item["secret"][::-1]
            text = place(secret)
            at = text.find(secret)
            inside: set[int] = set()
            for detection in scanner.scan(text):
                inside.update(range(detection.start, detection.end))
            hits += all(i in inside for i in range(at, at + len(secret)))
        print(
            f"recall, gitleaks rules, {name:<10}: {hits}/{len(corpus)} = {hits / len(corpus):.1%}"
        )
    # Base64-encoded (tests/moderation/test_recall.py's forms; it asserts these too).
    from tests.moderation.test_recall import covered, encoded

    for form in ("base64", "base64url unpadded", "base64 wrapped at 76"):
        hits = sum(covered(scanner, *encoded(item["secret"][::-1], form)) for item in corpus)
        print(f"recall, gitleaks rules, {form}: {hits}/{len(corpus)} = {hits / len(corpus):.1%}")


def ocr_figures(count: int = 3) -> None:
    """OCR apart (DESIGN.md): seconds per screenshot-sized image, tesseract included."""
    import io

    from PIL import Image, ImageDraw, ImageFont

    from apps.moderation.scanning import ocr

    if not ocr.available():
        print("ocr: tesseract not installed, not measured")
        return
    font_path = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
    font = ImageFont.truetype(font_path, 20) if os.path.exists(font_path) else None
    rng = random.Random(3)
    timings = []
    for _ in range(count):
        picture = Image.new("RGB", (1280, 800), "white")
        draw = ImageDraw.Draw(picture)
        for row in range(30):
            words = " ".join("".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(12))
            draw.text((20, 10 + 26 * row), words, fill="black", font=font)
        buffer = io.BytesIO()
        picture.save(buffer, format="PNG")
        started = time.perf_counter()
        text = ocr.read_text(buffer.getvalue())
        timings.append(time.perf_counter() - started)
        Scanner().scan(text)
    print(
        f"ocr: 1280x800 screenshot of 30 lines: {min(timings):.2f}-{max(timings):.2f} s per image"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[1.0, 20.0], help="sizes in MB")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument(
        "--profile", action="store_true", help="also profile the batched scan (cProfile)"
    )
    parser.add_argument(
        "--plant-every",
        type=int,
        default=40,
        help="plant a secret or personal data in one string in N (0: the real text alone)",
    )
    parser.add_argument(
        "--no-email", action="store_true", help="do not time the email regex's floor"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    scanner = Scanner()
    scanner.scan("warm up: load the compiled rules")
    print(f"rules loaded in {time.perf_counter() - started:.2f} s (once per process)")
    ok = all(
        [
            measure(mb, args.repeat, scanner, args.profile, args.plant_every, not args.no_email)
            for mb in args.mb
        ]
    )
    recall_figures(scanner)
    ocr_figures()
    print(
        f"target: scanner >= {target(args.plant_every):.2f} x the \\d{{3}} floor"
        f" (batched, at each size, {'real text alone' if args.plant_every == 0 else 'planted'}): "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
