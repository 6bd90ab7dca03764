"""Search reads: which trajectories match the words (`trajectory_search`), in what order
(`with_relevance`), and the passage each result shows (`search_snippets`).

Everything here reads the stored search text and vector (services/search.py), which are built
from the redacted view only: no search can find or show what the public pages hide.

How results rank. PostgreSQL: `ts_rank` of the vector, whose title lexemes weigh A (1.0), the
task's B (0.4) and the other steps' D (0.1); a word's best-weighted place counts most, so one
title match outranks the same word repeated in many steps. Only candidates are ranked (see
`_candidates`: reading every match's vector would take seconds). SQLite (no full-text index: search
there is every word `icontains`), a stated rule: each word of the query scores 4 if it is in
the title, 2 if in the task and 1 if in the other steps, summed. Ties: newest first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    F,
    FloatField,
    QuerySet,
    TextField,
    Value,
    When,
)
from django.db.models.expressions import Combinable, RawSQL
from django.db.models.functions import Cast, StrIndex, Substr
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.trajectories.models import Trajectory
from apps.trajectories.redaction import redactor
from apps.trajectories.search_text import (
    HEAD_VECTOR_SQL,
    PLACEHOLDER,
    STEP_BREAK,
    search_sections,
)
from apps.trajectories.selectors.redactions import FULL, full_redactions

# The annotation results are ordered by (ORDERINGS["relevance"] in filters.py).
RELEVANCE = "relevance"
MAX_WORDS = 10
CANDIDATES = 1_000  # PostgreSQL: see _candidates
# SQLite's rule: what a word scores in each section.
TITLE_SCORE, TASK_SCORE, STEP_SCORE = 4, 2, 1


def query_words(q: str) -> list[str]:
    """The words SQLite's search looks for (each must occur): the first MAX_WORDS, unquoted."""
    words = (word.strip('"').replace(STEP_BREAK, "") for word in (q or "").split()[:MAX_WORDS])
    return [word for word in words if word]


def trajectory_search(qs: QuerySet[Trajectory], q: str) -> QuerySet[Trajectory]:
    """Full-text search: PostgreSQL tsvector (GIN index) or, on SQLite, every word icontains."""
    q = (q or "").strip()
    if not q:
        return qs
    if connection.vendor == "postgresql":
        return qs.filter(search_vector=_ts_query(q))
    for word in query_words(q):
        qs = qs.filter(search_text__icontains=word)
    return qs


def with_relevance(qs: QuerySet[Trajectory], q: str) -> QuerySet[Trajectory]:
    """The rows of `qs` (not yet searched) that match `q`, each with its `relevance` to it
    (higher is better), as the module's docstring says. A float on both databases, exact as
    stored (the API's cursor compares it)."""
    q = (q or "").strip()
    if not q:
        return qs
    if connection.vendor == "postgresql":
        from django.contrib.postgres.search import SearchRank

        rank = Cast(SearchRank(F("search_vector"), _ts_query(q)), FloatField())
        # The candidates matched the words already: the vector is read once more, to rank.
        # As `id = ANY(ARRAY(...))` rather than `id IN (...)`: the ids are found first, once,
        # and each row read by its key; with `IN` the planner may instead scan every row of
        # another filter (an agent's 20,000) to join them (a second, seen at 1.3 s). The two
        # parts' arrays are concatenated rather than their ids UNIONed: a UNION's parts cannot
        # carry a LIMIT in Django, and wrapping each in `id IN (...)` looked every candidate up
        # by key once more and deduplicated them (2,000 lookups, a third of the step); a
        # duplicate in the array is harmless to `= ANY`.
        parts = [part.query.sql_with_params() for part in _candidates(trajectory_search(qs, q), q)]
        arrays = " || ".join(f"ARRAY({sql})" for sql, _params in parts)
        params = tuple(param for _sql, part_params in parts for param in part_params)
        table = connection.ops.quote_name(Trajectory._meta.db_table)
        among = RawSQL(f"{table}.id = ANY({arrays})", params, output_field=BooleanField())
        return qs.filter(among).annotate(**{RELEVANCE: rank})
    qs = trajectory_search(qs, q)
    text = F("search_text")
    first = StrIndex(text, Value(STEP_BREAK))
    rest = Substr(text, first + 1)
    second = StrIndex(rest, Value(STEP_BREAK))
    # Each section with the break after it (no word holds one). A text without breaks (written
    # before there were sections) is all steps; a text with one break is a title and a task,
    # no steps (build_search_text joins only the sections there are).
    qs = qs.alias(_rank_first=first, _rank_second=second).alias(
        _rank_title=Substr(text, 1, first),
        _rank_task=Case(
            When(_rank_first=0, then=Value("")),
            When(_rank_second=0, then=rest),
            default=Substr(rest, 1, second),
            output_field=TextField(),
        ),
        _rank_steps=Case(
            When(_rank_first=0, then=text),
            When(_rank_second=0, then=Value("")),
            default=Substr(rest, second + 1),
            output_field=TextField(),
        ),
    )
    score: Combinable = Value(0.0, output_field=FloatField())
    for word in query_words(q):
        for section, points in (
            ("_rank_title", TITLE_SCORE),
            ("_rank_task", TASK_SCORE),
            ("_rank_steps", STEP_SCORE),
        ):
            score = score + Case(
                When(**{f"{section}__icontains": word}, then=Value(float(points))),
                default=Value(0.0),
                output_field=FloatField(),
            )
    return qs.annotate(**{RELEVANCE: score})


def _candidates(qs: QuerySet[Trajectory], q: str) -> list[QuerySet[Trajectory, Any]]:
    """The ids PostgreSQL ranks for `qs` (already filtered by the search), as two bounded
    queries whose ids may overlap: CANDIDATES whose title or task match (from the index on
    them, traj_public_search_head: all of them when they are fewer, else the index's first),
    and the newest CANDIDATES of all matches. Ranking reads each match's whole vector, and
    every match of a common word would take seconds over 100,000 trajectories; for one word a
    title or task match outranks any match in the steps alone, so these hold the best results.
    (The browse page shows at most SEARCH_COUNT_CAP (1,000) of a search anyway; the API's pages
    by relevance end with the candidates.)"""
    head = (
        qs.order_by()
        .filter(
            RawSQL(
                f"{HEAD_VECTOR_SQL} @@ websearch_to_tsquery('english'::regconfig, %s)",
                [q],
                output_field=BooleanField(),
            )
        )
        .values("id")
    )
    # Unordered on purpose: a bitmap scan of the index that stops at CANDIDATES rows. Ordered
    # by date it would read every match of a word found in most titles ("fix") to sort them.
    newest = qs.order_by("-created_at", "-id").values("id")
    return [head[:CANDIDATES], newest[:CANDIDATES]]


def _ts_query(q: str) -> Any:
    from django.contrib.postgres.search import SearchQuery

    return SearchQuery(q, search_type="websearch", config="english")


# --- Snippets ------------------------------------------------------------------------------------

SNIPPET_CHARS = 240
LEAD_CHARS = SNIPPET_CHARS // 4  # context before the first hit of a passage
MAX_HITS = 2_000  # per trajectory: enough to find the best passage, bounded on huge texts
_HIT_OPEN, _HIT_CLOSE = "\ue010", "\ue011"  # never escaped, never in what we show
_TOKEN = re.compile(r"[^\W_]+")  # a word as PostgreSQL's parser splits them (not at "_")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    term: str


Finder = Callable[[str], list[Hit]]


def search_snippets(trajectories: list[Trajectory], q: str) -> dict[int, str]:
    """For each listed search result, the best passage of the step that matched: of its steps
    (the title left out: the row shows it), the passage of at most SNIPPET_CHARS with the most
    distinct words of the query, then the most hits, the task first among equals; cut on word
    boundaries and never inside a placeholder; hits between _HIT_OPEN/_HIT_CLOSE (snippet_html
    makes them <mark>). Boilerplate lines (a test runner's "==== test session starts ====", a
    step line that several results on the page share) are passed over when anything else in
    the trajectory matched.

    Only ever from `search_text`, the redacted text; the chosen step is redacted again with the
    whole map before it is cut. One query, which on PostgreSQL also turns the query into the
    lexemes the search matched (stop words out, words stemmed), so that the passage holds them.
    """
    q = (q or "").strip()
    ids = [t.pk for t in trajectories]
    if not q or not ids:
        return {}
    rows = Trajectory.objects.filter(pk__in=ids)
    finder: Finder | None
    if connection.vendor == "postgresql":
        from django.contrib.postgres.fields import ArrayField
        from django.db.models import TextField

        # The words websearch_to_tsquery requires: not the excluded ones, not its "or".
        positive = " ".join(
            word for word in q.split() if not word.startswith("-") and word.lower() != "or"
        )
        lexemes = RawSQL(
            "tsvector_to_array(to_tsvector('english'::regconfig, %s))",
            [positive],
            output_field=ArrayField(TextField()),
        )
        fetched = list(
            rows.annotate(_lexemes=lexemes).values_list(
                "pk", "search_text", "redactions", "_lexemes"
            )
        )
        finder = _stem_finder(set(fetched[0][3] or ())) if fetched else None
    else:
        fetched = [(*row, None) for row in rows.values_list("pk", "search_text", "redactions")]
        finder = _substring_finder(query_words(q))
    if finder is None:
        return {}
    steps = {}
    for pk, text, _redactions, _lexemes in fetched:
        sections = search_sections(text or "")
        steps[pk] = [sections.task, *sections.steps]
    shared = _shared_lines(steps, finder)
    found: dict[int, str] = {}
    for pk, _text, redactions, _lexemes in fetched:
        passage = _best_passage(steps[pk], finder, shared, redactions)
        if passage is not None:
            found[pk] = passage
            _keep_full_map(trajectories, pk, redactions)
    return found


def _substring_finder(words: list[str]) -> Finder | None:
    """SQLite's search matches each word anywhere (icontains): so do the hits."""
    if not words:
        return None
    pattern = re.compile(
        "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)), re.IGNORECASE
    )

    def find(text: str) -> list[Hit]:
        hits = []
        for match in pattern.finditer(text):
            hits.append(Hit(match.start(), match.end(), match.group().casefold()))
            if len(hits) >= MAX_HITS:
                break
        return hits

    return find


def _stem_finder(lexemes: set[str]) -> Finder | None:
    """PostgreSQL matched lexemes: the words whose Snowball english stem (its stemmer) is one.
    Only words starting like a lexeme are stemmed (a stem is its word's start but for the last
    letter or so: "happi" of "happy"), so a long text costs one regular expression."""
    if not lexemes:
        return None
    import snowballstemmer

    stemmer = snowballstemmer.stemmer("english")
    starts = {lexeme[:-1] if len(lexeme) > 3 else lexeme for lexeme in lexemes}
    pattern = re.compile(
        r"(?<![^\W_])(?:"
        + "|".join(re.escape(s) for s in sorted(starts, key=len, reverse=True))
        + r")[^\W_]*",
        re.IGNORECASE,
    )

    @lru_cache(maxsize=4096)
    def lexeme_of(word: str) -> str:
        return word if word in lexemes else stemmer.stemWord(word)

    def find(text: str) -> list[Hit]:
        hits = []
        for match in pattern.finditer(text):
            term = lexeme_of(match.group().lower())
            if term in lexemes:
                hits.append(Hit(match.start(), match.end(), term))
                if len(hits) >= MAX_HITS:
                    break
        return hits

    return find


def _line(text: str, hit: Hit) -> str:
    start = text.rfind("\n", 0, hit.start) + 1
    end = text.find("\n", hit.end)
    return text[start : end if end >= 0 else len(text)]


_DECORATION = frozenset("=-*#~_+.")
_DIGITS = re.compile(r"\d+")
SHARED_RESULTS = 3  # a step line in this many results on the page is boilerplate


def _normal(line: str) -> str:
    return _DIGITS.sub("0", _SPACES.sub(" ", line.strip().casefold()))


def _is_decoration(line: str) -> bool:
    """A banner: more rule characters than letters and digits ("===== test session starts
    =====", "----- Ran 3 tests -----")."""
    rules = sum(1 for c in line if c in _DECORATION)
    return rules >= 8 and rules >= sum(1 for c in line if c.isalnum())


def _shared_lines(steps: dict[int, list[str]], finder: Finder) -> set[str]:
    """The (normalised) step lines holding a hit that SHARED_RESULTS results or more hold: what
    a tool prints in every run ("platform linux -- Python 3.12.1, pytest-8.3.2"). Not the task:
    runs of the same task share it, and it says what each is about."""
    counts: Counter[str] = Counter()
    for texts in steps.values():
        lines: set[str] = set()
        for text in texts[1:]:
            lines.update(_normal(_line(text, hit)) for hit in finder(text)[:50])
        counts.update(lines)
    return {line for line, count in counts.items() if count >= SHARED_RESULTS}


def _best_passage(
    texts: list[str], finder: Finder, shared: set[str], redactions: Any
) -> str | None:
    """The best passage of `texts` (the task, then the steps), marked, or None without a hit."""
    best: tuple[tuple[int, ...], int, list[Hit]] | None = None
    seen = 0
    for index, text in enumerate(texts):
        if seen >= MAX_HITS:
            break
        hits = finder(text) if text else []
        if not hits:
            continue
        seen += len(hits)
        plain = [
            hit
            for hit in hits
            if not _is_decoration(line := _line(text, hit))
            and (index == 0 or _normal(line) not in shared)
        ]
        distinct, count, _first = _window(plain or hits)
        key = (bool(plain), distinct, count, index == 0)
        if best is None or key > best[0]:
            best = (key, index, plain or hits)
    if best is None:
        return None
    _key, index, hits = best
    text = texts[index]
    # The search text is redacted already; should an original be in it all the same, the step
    # is redacted whole before anything is cut from it.
    redacted = redactor(redactions if isinstance(redactions, dict) else {})(text)
    if redacted != text:
        text, hits = redacted, finder(redacted)
        if not hits:
            return _cut(text, 0, [])
    _distinct, _count, first = _window(hits)
    return _cut(text, first, hits)


def _window(hits: list[Hit]) -> tuple[int, int, int]:
    """(distinct terms, hits, index of its first hit) of the best window of SNIPPET_CHARS that
    starts LEAD_CHARS before a hit: the most distinct terms, then the most hits, then the first."""
    best = (0, 0, 0)
    counts: Counter[str] = Counter()
    j = 0
    for i, hit in enumerate(hits):
        if j <= i:
            counts[hit.term] += 1
            j = i + 1
        limit = max(0, hit.start - LEAD_CHARS) + SNIPPET_CHARS
        while j < len(hits) and hits[j].end <= limit:
            counts[hits[j].term] += 1
            j += 1
        if (len(counts), j - i) > best[:2]:
            best = (len(counts), j - i, i)
        counts[hit.term] -= 1
        if not counts[hit.term]:
            del counts[hit.term]
    return best


NEAR = 40  # how far a cut may move outwards to reach a space


def _cut(text: str, first: int, hits: list[Hit]) -> str:
    """SNIPPET_CHARS of `text` from LEAD_CHARS before hits[first], on word boundaries, never
    inside a placeholder, the hits inside marked, "…" where text was left out."""
    anchor = hits[first].start if hits else 0
    end = min(len(text), max(0, anchor - LEAD_CHARS) + SNIPPET_CHARS)
    start = max(0, end - SNIPPET_CHARS)
    start = min(start, anchor)
    inside = [hit for hit in hits[first:] if hit.end <= end]
    last = inside[-1].end if inside else anchor
    if start > 0 and not text[start - 1].isspace():
        space = _first_space(text, start, anchor)
        if space is None:
            space = _last_space(text, max(0, start - NEAR), start)
        if space is not None:
            start = space + 1
    if end < len(text) and not text[end].isspace():
        space = _last_space(text, last, end)
        if space is None:
            space = _first_space(text, end, min(len(text), end + NEAR))
        if space is not None:
            end = space
    for match in PLACEHOLDER.finditer(text, max(0, start - 64), min(len(text), end + 64)):
        if match.start() < start < match.end():
            start = match.start()
        if match.start() < end < match.end():
            end = match.end()
    out = []
    at = start
    for hit in hits:
        if hit.start >= at and hit.end <= end:
            out += [text[at : hit.start], _HIT_OPEN, text[hit.start : hit.end], _HIT_CLOSE]
            at = hit.end
    out.append(text[at:end])
    return ("… " if start else "") + "".join(out).strip() + (" …" if end < len(text) else "")


def _first_space(text: str, start: int, end: int) -> int | None:
    match = _SPACES.search(text, start, end)
    return match.start() if match else None


def _last_space(text: str, start: int, end: int) -> int | None:
    found = None
    for match in _SPACES.finditer(text, start, end):
        found = match.start()
    return found


def _keep_full_map(trajectories: list[Trajectory], pk: int, redactions: Any) -> None:
    """The whole map of a row with a snippet, read in the snippet's query: snippet_html redacts
    with it (the row's own entries do not cover step text), without a query per row."""
    for trajectory in trajectories:
        if trajectory.pk == pk and isinstance(redactions, dict):
            trajectory.__dict__[FULL] = redactions


def snippet_html(snippet: str, trajectory: Trajectory) -> SafeString:
    """The snippet escaped, hits as <mark>. The search text is already redacted; should an
    original still be in it, the passage is shown redacted and without highlights."""
    plain = snippet.replace(_HIT_OPEN, "").replace(_HIT_CLOSE, "")
    redacted = redactor(full_redactions(trajectory))(plain)
    if redacted != plain:
        return mark_safe(escape(_SPACES.sub(" ", redacted)))
    escaped = str(escape(_SPACES.sub(" ", snippet)))
    marked = re.sub(f"{_HIT_OPEN}(.*?){_HIT_CLOSE}", r'<mark class="hit">\1</mark>', escaped)
    return mark_safe(marked.replace(_HIT_OPEN, "").replace(_HIT_CLOSE, ""))
