"""`make bench`: run every bench/bench_*.py with its defaults, one after the other.

Each benchmark prints its own figures, the floor it is compared with and PASS/FAIL per target,
and exits non-zero when a target is missed. This prints a summary and exits non-zero if any did.
Benchmarks time things on purpose: never run them from the test suite.

    .venv/bin/python bench/run.py [name ...]      # e.g. bench/run.py ingest scan
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    wanted = set(sys.argv[1:])
    scripts = sorted(HERE.glob("bench_*.py"))
    if wanted:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in wanted]
    if not scripts:
        print(f"no benchmark matches {sorted(wanted)}", file=sys.stderr)
        return 2
    summary = []
    for script in scripts:
        print(f"\n=== {script.name}", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
        summary.append((script.name, code, time.monotonic() - started))
    print("\n=== summary")
    for name, code, seconds in summary:
        print(f"{name:<24} {'ok' if code == 0 else f'FAILED (exit {code})':<16} {seconds:6.0f} s")
    return 0 if all(code == 0 for _, code, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
