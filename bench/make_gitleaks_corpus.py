"""Make the recall corpus from the public gitleaks default rules: one or more random samples per
rule whose secret has a format of its own (a literal prefix, not just "32 hex characters after
the word adafruit"), written to tests/moderation/data/gitleaks_samples.json.

    git show HEAD:config/gitleaks.toml > /tmp/gitleaks.toml   # in a gitleaks checkout
    .venv/bin/python bench/make_gitleaks_corpus.py /tmp/gitleaks.toml

Samples are generated from each rule's regular expression (this script's own generator over
Python's regex parser); none of gitleaks' code or test data is copied. The file stores each
sample reversed, so that secret scanners run over this repository do not flag the corpus.
"""

from __future__ import annotations

import json
import random
import re
import string
import sys
import tomllib
from pathlib import Path

try:
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # Python < 3.11
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

OUT = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "moderation"
    / "data"
    / "gitleaks_samples.json"
)
_CATEGORY = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_NOT_DIGIT: string.ascii_letters,
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits,
    C.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    C.CATEGORY_NOT_WORD: "-.",
}
_PRINTABLE = string.ascii_letters + string.digits + "_-"


def _charset(items, rng: random.Random) -> str:
    allowed: list[str] = []
    negate = False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            allowed.append(chr(av))
        elif op is C.RANGE:
            allowed.extend(chr(c) for c in range(av[0], av[1] + 1) if chr(c).isprintable())
        elif op is C.CATEGORY:
            allowed.extend(_CATEGORY.get(av, "a"))
    if negate:
        pool = [c for c in _PRINTABLE if c not in allowed]
        return rng.choice(pool or ["a"])
    allowed = [c for c in allowed if c.isprintable() and c not in "\n\r\t "] or allowed
    return rng.choice(allowed or ["a"])


def generate(parsed, rng: random.Random, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, av in parsed:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(rng.choice([c for c in _PRINTABLE if c != chr(av)]))
        elif op is C.IN:
            out.append(_charset(av, rng))
        elif op is C.ANY:
            out.append(rng.choice(_PRINTABLE))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            low, high, sub = av
            high = low + 8 if high is C.MAXREPEAT else high
            # Fixed-length formats (the usual case) stay exact; open ones get a realistic size.
            count = low if low == high else rng.randint(low, min(high, max(low, 1) + 12))
            out.extend(generate(sub, rng, groups) for _ in range(count))
        elif op is C.SUBPATTERN:
            group, _, _, sub = av
            text = generate(sub, rng, groups)
            if group:
                groups[group] = text
            out.append(text)
        elif op is C.BRANCH:
            out.append(generate(rng.choice(av[1]), rng, groups))
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is getattr(C, "ATOMIC_GROUP", None):
            out.append(generate(av, rng, groups))
        # AT (anchors), ASSERT / ASSERT_NOT (look-arounds): nothing to write
    return "".join(out)


def secret_group(regex: str, group: int):
    """The parsed sub-pattern of capture group `group` (the secret), or the whole pattern."""
    parsed = P.parse(regex)

    def find(items):
        for op, av in items:
            if op is C.SUBPATTERN:
                if av[0] == group:
                    return av[3]
                hit = find(av[3])
                if hit is not None:
                    return hit
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
                hit = find(av[2])
                if hit is not None:
                    return hit
            elif op is C.BRANCH:
                for branch in av[1]:
                    hit = find(branch)
                    if hit is not None:
                        return hit
        return None

    return find(parsed) if group else parsed


def literal_prefix(parsed) -> str:
    """The literal characters a pattern starts with (`ghp_`, `glpat-`, `xoxb-`)."""
    out = []
    for op, av in parsed:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.SUBPATTERN and not out:
            return literal_prefix(av[3])
        else:
            break
    return "".join(out)


_POSIX = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:xdigit:]": "0-9a-fA-F",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:space:]": "\\s",
    "[:word:]": "\\w",
}


def go_to_python(regex: str) -> str:
    regex = regex.replace("(?-i:", "(?:").replace("\\z", "\\Z")
    for posix, python in _POSIX.items():
        regex = regex.replace(posix, python)
    # Go allows flags mid-pattern ("(?i)" after text); Python only at the start.
    if "(?i)" in regex[1:]:
        regex = "(?i)" + regex.replace("(?i)", "")
    return regex


def main(path: str) -> None:
    rules = tomllib.loads(Path(path).read_text())["rules"]
    rng = random.Random(7)
    corpus = []
    skipped = []
    for rule in rules:
        regex = rule.get("regex")
        if not regex:
            skipped.append((rule["id"], "no regex (path rule)"))
            continue
        try:
            regex = go_to_python(regex)
            compiled = re.compile(regex)
            group = int(rule.get("secretGroup", 1 if compiled.groups else 0))
            sub = secret_group(regex, group)
        except (re.error, ValueError, OverflowError) as error:
            skipped.append((rule["id"], f"regex: {error}"))
            continue
        prefix = literal_prefix(sub) if sub is not None else ""
        if sub is None or len(prefix) < 3:
            skipped.append((rule["id"], "no format of its own (keyword + random value)"))
            continue
        made = 0
        for _ in range(200):
            groups: dict[int, str] = {}
            secret = generate(sub, rng, groups)
            if compiled.search(f" {secret} ") or compiled.search(f"{rule['id']}={secret}\n"):
                corpus.append({"rule": rule["id"], "kind": prefix, "secret": secret[::-1]})
                made += 1
                if made == 2:
                    break
        if not made:
            skipped.append((rule["id"], "generator could not satisfy the rule"))
    OUT.write_text(
        json.dumps({"rules": len(rules), "samples": corpus, "skipped": skipped}, indent=1) + "\n"
    )
    print(
        f"{len(corpus)} samples for {len({c['rule'] for c in corpus})} of {len(rules)} rules -> {OUT}"
    )
    print(f"skipped {len(skipped)} rules (no distinctive format or not generable)")


if __name__ == "__main__":
    main(sys.argv[1])
