"""Which hand rules the Kingfisher library makes redundant: each SECRET hand rule disabled alone.

For each rule, the recall corpora are scanned with it off (tests/moderation/test_recall.py's
gitleaks corpus in its five places and its hand-made corpus, 133 secrets in realistic places),
and the samples it alone found are listed; when it loses none, the scanner tests
(test_scanners, test_scan_attack, test_recall) run with it off as well. A rule that loses
nothing is only a candidate: check the shape it was written for against `library.find` alone
(the corpora do not hold every keyword or prefix), as rules.py's docstring records.

    .venv/bin/python bench/ablate_hand_rules.py [rule,rule,...]   # about 6 minutes for all

Also a pytest plugin: `TRAJHUB_DISABLE_RULES=a,b PYTHONPATH=bench pytest -p ablate_hand_rules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")

from apps.moderation.scanning import candidates  # noqa: E402
from apps.moderation.scanning import rules as hand  # noqa: E402
from apps.moderation.scanning import scanner as engine  # noqa: E402
from apps.moderation.scanning.detection import SECRET  # noqa: E402

ORIGINAL = dict(hand.FAMILY)
_AWS_BARE = engine.Scanner._aws_bare
TESTS = ["tests/moderation/test_scanners.py", "tests/moderation/test_scan_attack.py",
         "tests/moderation/test_recall.py"]  # fmt: skip


def disable(names: set[str]) -> None:
    """Scan without the named hand rules (`aws_bare`: the bare AWS secret key pass)."""
    for family, rules in ORIGINAL.items():
        hand.FAMILY[family] = tuple(rule for rule in rules if rule.name not in names)
    candidates.candidates.cache_clear()
    hand.compiled_numbers.cache_clear()
    engine.Scanner._aws_bare = (lambda *_: None) if "aws_bare" in names else _AWS_BARE  # type: ignore[method-assign]
    engine._default_scanner = None


def pytest_configure(config) -> None:  # noqa: ANN001 - the pytest plugin hook
    names = {name for name in os.environ.get("TRAJHUB_DISABLE_RULES", "").split(",") if name}
    if names:
        disable(names)


def found_samples() -> set[tuple[str, ...]]:
    """Every recall sample the scanner covers whole, as (corpus, place, rule or secret name)."""
    from tests.moderation import test_recall as recall

    scanner = engine.Scanner()
    out: set[tuple[str, ...]] = set()
    for place in [*recall.PLACES, "wrapped"]:
        for number, (rule, secret) in enumerate(recall.SAMPLES):
            if place == "wrapped":
                text, positions = recall.wrapped(secret)
            else:
                text = recall.PLACES[place](secret)
                stored = (
                    json.dumps(json.dumps(secret))[2:-2] if place.startswith("json") else secret
                )
                positions = recall.located(text, stored.replace('\\\\"', '"')) or recall.located(
                    text, secret
                )
            if recall.covered(scanner, text, positions):
                out.add(("gitleaks", place, f"{rule}#{number}"))
    recall.s._rng.seed(20250301)  # the same secrets each time
    for name, make in recall.SECRETS.items():
        for place, build in recall.REALISTIC.items():
            secret = make()
            text = build(secret)
            if recall.covered(scanner, text, recall._positions(text, secret)):
                out.add(("hand-made", place, name))
    return out


def main() -> int:
    if len(sys.argv) > 1:
        groups = [set(sys.argv[1].split(","))]
    else:
        names = [rule.name for family in ("literal", "keyword") for rule in ORIGINAL[family]]
        groups = [{name} for name in names if hand.BY_NAME[name].category == SECRET]
        groups.append({"aws_bare"})
    disable(set())
    base = found_samples()
    print(f"baseline: {len(base)} samples found")
    for group in groups:
        disable(group)
        lost = sorted(base - found_samples())
        disable(set())
        line = f"{','.join(sorted(group))}: {len(lost)} samples lost"
        if not lost:
            env = dict(os.environ, TRAJHUB_DISABLE_RULES=",".join(group), PYTHONPATH="bench")
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                 "ablate_hand_rules", *TESTS],
                cwd=ROOT, env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            line += "; tests: " + (result.stdout.strip().splitlines() or ["?"])[-1]
        print(line, flush=True)
        for item in lost[:3]:
            print("   lost", *item)
    return 0


if __name__ == "__main__":
    sys.exit(main())
