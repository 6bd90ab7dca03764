"""Text → safe HTML for the trajectory page: Markdown, highlighting, diffs, clipping, redaction marks.

Every function here takes untrusted text and returns HTML in which that text is escaped (or,
for Markdown, sanitized by nh3). Nothing here emits a `style` attribute or inline script: the
page's Content-Security-Policy forbids both, so highlighting uses CSS classes from site.css.

Redaction marks: `Marks.mark()` wraps each redacted span in two private-use characters
(START, END) before the text is rendered; `finish()` turns them into <mark> elements once the
HTML is built, closing and reopening them around tags so that the result stays well nested.
"""

from __future__ import annotations

import difflib
import functools
import html
import re
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import chain
from typing import Any

import nh3
from markdown_it import MarkdownIt
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from apps.trajectories.redaction import Matcher, identity, redactor

START = "\ue000"
END = "\ue001"
_SENTINELS = re.compile("[\ue000\ue001]")

escape = html.escape


# ---- redaction ---------------------------------------------------------------------------------


class Marks:
    """Applies a trajectory's redactions to text, marking the spans.

    Visitors (show_original=False) get the placeholders (`<EMAIL_1>`); the owner and moderators
    get the originals. Either way the span is wrapped in START/END so the page can highlight it.
    `plain` is `redaction.redactor` itself (longest original first), so what is replaced here is
    exactly what every other public surface replaces. For visitors, callers redact structured
    data with `redact_data(value, marks.plain)` first (JSON escaping could hide an original from a
    text match); `mark` then also replaces any original that still reaches it.
    """

    def __init__(self, redactions: dict[str, str] | None, *, show_original: bool):
        redactions = redactions or {}
        # Only string originals and placeholders count; the check runs in C (`map(type, ...)`)
        # because a trajectory can have hundreds of thousands of redactions.
        if "" in redactions or not set(map(type, redactions)) | set(
            map(type, redactions.values())
        ) <= {str}:
            redactions = {
                key: value
                for key, value in redactions.items()
                if key and isinstance(key, str) and isinstance(value, str)
            }
        self.redactions = redactions
        self.show_original = show_original
        # What is marked: the originals, and for visitors also placeholders already in the text.
        # A view over the map and a set of its values, not a merged dict: a trajectory can have
        # hundreds of thousands of redactions, and the page builds this once per request.
        self._placeholders: frozenset[str] = (
            frozenset() if show_original else frozenset(filter(None, redactions.values()))
        )
        self._matcher = Matcher(_Marked(redactions, self._placeholders))
        if show_original:
            self.plain: Callable[[str], str] = identity
        else:
            # The same leftmost-longest search over the originals alone: `redactor()`'s.
            self.plain = redactor(self.redactions)

    @property
    def active(self) -> bool:
        return bool(self._matcher)

    def _replace(self, found: str) -> str:
        if self.show_original:
            return START + found + END
        # An original becomes its placeholder; a placeholder stays itself.
        return START + self.redactions.get(found, found) + END

    def mark(self, text: str) -> str:
        """The text as this viewer may see it, with redacted spans between START and END."""
        if not text:
            return ""
        if "\ue000" in text or "\ue001" in text:
            # Hostile input must not be able to forge or break our marks.
            text = _SENTINELS.sub("", text)
        return self._matcher.sub(text, self._replace)


def marks_for(trajectory: Any, *, show_original: bool, shown: Any = None) -> Marks:
    """The trajectory's Marks, built once per instance (a request's) and map.

    `shown=None`: the full map (`Trajectory.redactions`), for any of the trajectory's strings.
    `shown=events` (possibly empty): only what the trajectory's own strings and those events
    need, from its redaction index when current (selectors/redactions.py): a page of 100 steps
    then reads 100 events' entries instead of every redaction of the trajectory. Either way the
    text comes out the same (services/redaction_index.py says why)."""
    from apps.trajectories.selectors.redactions import full_redactions, shown_redactions

    cache: dict[tuple[bool, int], tuple[object, Marks]] = trajectory.__dict__.setdefault(
        "_trajhub_marks", {}
    )
    redactions = (
        full_redactions(trajectory) if shown is None else shown_redactions(trajectory, shown)
    )
    key = (show_original, id(redactions))
    hit = cache.get(key)
    if hit is not None and hit[0] is redactions:
        return hit[1]
    marks = Marks(redactions, show_original=show_original)
    cache[key] = (redactions, marks)
    return marks


class _Marked(AbstractSet[str]):
    """The strings Marks looks for: the map's originals and a set of placeholders, together,
    without copying either."""

    def __init__(self, originals: dict[str, str], placeholders: frozenset[str]):
        self._originals = originals
        self._extra = placeholders.difference(originals) if placeholders else placeholders

    def __contains__(self, item: object) -> bool:
        return item in self._originals or item in self._extra

    def __iter__(self) -> Iterator[str]:
        return chain(self._originals, self._extra)

    def __len__(self) -> int:
        return len(self._originals) + len(self._extra)


_TAG = re.compile(r"""<(?:[^>"']|"[^"]*"|'[^']*')*>""")
MARK_OPEN = '<mark class="redaction">'
MARK_CLOSE = "</mark>"


def finish(markup: str) -> str:
    """Turn START/END into <mark> elements, well nested even across tags (Pygments spans)."""
    if "\ue000" not in markup and "\ue001" not in markup:
        return markup
    out: list[str] = []
    inside = False
    position = 0

    def text(chunk: str) -> None:
        nonlocal inside
        for piece in re.split("([\ue000\ue001])", chunk):
            if piece == START:
                if not inside:
                    out.append(MARK_OPEN)
                    inside = True
            elif piece == END:
                if inside:
                    out.append(MARK_CLOSE)
                    inside = False
            elif piece:
                out.append(piece)

    for match in _TAG.finditer(markup):
        text(markup[position : match.start()])
        tag = _SENTINELS.sub("", match.group(0))
        out.append(f"{MARK_CLOSE}{tag}{MARK_OPEN}" if inside else tag)
        position = match.end()
    text(markup[position:])
    if inside:
        out.append(MARK_CLOSE)
    return "".join(out).replace(MARK_OPEN + MARK_CLOSE, "")


def inline(text: str, marks: Marks) -> str:
    """Escaped, redacted text for a single line (headers, labels, table cells)."""
    return finish(escape(marks.mark(text)))


# ---- terminal output ---------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_terminal(text: str) -> str:
    """Terminal output as a reader would see it: no colour codes; a carriage return overwrites."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    if _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    return text


# ---- clipping ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clip:
    """A preview of a long text: `head`, and for outputs `tail`, with what was left out."""

    head: str
    tail: str
    total_lines: int
    hidden_lines: int
    clipped: bool


PREVIEW_LINES = 40
PREVIEW_CHARS = 6000
FULL_LINES = 20_000
FULL_CHARS = 2_000_000


def clip(
    text: str, *, lines: int = PREVIEW_LINES, chars: int = PREVIEW_CHARS, tail: int = 0
) -> Clip:
    """Cut `text` to about `lines` lines / `chars` characters, keeping `tail` lines at the end."""
    total = text.count("\n") + 1 if text else 0
    if total <= lines and len(text) <= chars:
        return Clip(text, "", total, 0, False)
    all_lines = text.split("\n")
    tail_lines = all_lines[-tail:] if tail and total > lines else []
    head_lines = all_lines[: max(lines - len(tail_lines), 1)]
    head = "\n".join(head_lines)
    tail_text = "\n".join(tail_lines)
    if len(head) > chars:
        head = head[:chars]
        head_lines = head.split("\n")
    if len(tail_text) > chars // 4:
        tail_text = tail_text[-(chars // 4) :]
    hidden = max(total - len(head_lines) - len(tail_lines), 0)
    return Clip(head, tail_text, total, hidden, True)


# ---- highlighting ------------------------------------------------------------------------------

_FORMATTER = HtmlFormatter(nowrap=True)
HIGHLIGHT_MAX_CHARS = 400_000


@functools.lru_cache(maxsize=512)
def _lexer_for_filename(name: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    except Exception:  # a lexer that cannot even be built must not cost the page
        return None


@functools.lru_cache(maxsize=64)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def lexer_for(*, filename: str = "", language: str = "") -> Lexer | None:
    if language:
        return _lexer_by_name(language.lower())
    if filename:
        base = filename.rsplit("/", 1)[-1]
        # Key the cache by extension (or the whole name for Makefile, Dockerfile ...).
        key = ("x." + base.rsplit(".", 1)[-1]) if "." in base else base
        return _lexer_for_filename(key)
    return None


def highlight(text: str, *, filename: str = "", language: str = "") -> str:
    """HTML (no wrapper) of `text`, highlighted with Pygments' CSS classes when a lexer fits."""
    lexer = lexer_for(filename=filename, language=language)
    if lexer is None or len(text) > HIGHLIGHT_MAX_CHARS:
        return escape(text)
    try:
        result = pygments_highlight(text, lexer, _FORMATTER)
    except Exception:  # highlighting is decoration: never let it fail the page
        return escape(text)
    return result[:-1] if result.endswith("\n") and not text.endswith("\n") else result


# ---- diffs -------------------------------------------------------------------------------------


def unified_diff(old: str, new: str, *, path: str = "", context: int = 3) -> str:
    name = path.lstrip("/") or "file"
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=f"a/{name}" if old else "/dev/null",
        tofile=f"b/{name}",
        lineterm="",
        n=context,
    )
    return "\n".join(lines)


def diff_html(diff: str) -> str:
    """A unified diff, one span per line, classed by what the line does (added, removed, hunk)."""
    out = []
    for line in diff.split("\n"):
        if line.startswith(("+++", "---")):
            cls = "d-file"
        elif line.startswith("@@"):
            cls = "d-hunk"
        elif line.startswith("+"):
            cls = "d-add"
        elif line.startswith("-"):
            cls = "d-del"
        else:
            cls = "d-ctx"
        out.append(f'<span class="{cls}">{escape(line)}</span>')
    return "\n".join(out)


def diff_stats(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in diff.split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


# ---- Markdown ----------------------------------------------------------------------------------

IMAGE_REF = re.compile(r"^trajhub-image:([0-9a-f]{64})$")
_IMAGE_PATH = re.compile(r"^/t/[0-9a-f]{64}/images/[0-9a-f]{64}$")

_md = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False}).enable(
    ["table", "strikethrough"]
)


def _render_image(self, tokens, idx, options, env):
    """Only images from our own storage are shown; others become a link or a note."""
    token = tokens[idx]
    src = token.attrGet("src") or ""
    alt = self.renderInlineAsText(token.children or [], options, env)
    if src == "trajhub-image:removed":  # dropped.IMAGE_REMOVED: a moderator dropped it
        return "<em>[image removed by a moderator]</em>"
    if src == "trajhub-image:withheld":  # dropped.IMAGE_WITHHELD: nobody has read it yet
        return "<em>[image not shown until a moderator checks it]</em>"
    found = IMAGE_REF.match(src)
    if found and env.get("image_base"):
        return (
            f'<img src="{escape(env["image_base"] + found.group(1))}" alt="{escape(alt)}" '
            'loading="lazy">'
        )
    if src.startswith(("http://", "https://")):
        return f'<a href="{escape(src)}">{escape(alt or "image")} (external image)</a>'
    return f"<em>[image{': ' + escape(alt) if alt else ''}]</em>"


_md.add_render_rule("image", _render_image)

_CLEANER = nh3.Cleaner(
    tags={
        "p",
        "br",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "strong",
        "em",
        "b",
        "i",
        "del",
        "s",
        "code",
        "pre",
        "blockquote",
        "ul",
        "ol",
        "li",
        "a",
        "img",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "mark",
    },
    clean_content_tags={"script", "style", "svg", "math", "iframe", "object", "template"},
    attributes={"a": {"href", "title"}, "img": {"src", "alt"}, "ol": {"start"}},
    url_schemes={"http", "https", "mailto"},
    link_rel="nofollow noopener noreferrer ugc",
    set_tag_attribute_values={"img": {"loading": "lazy"}},
    attribute_filter=lambda tag, attribute, value: (
        (value if _IMAGE_PATH.match(value) else None)
        if tag == "img" and attribute == "src"
        else value
    ),
    strip_comments=True,
)


def markdown(text: str, *, image_base: str = "") -> str:
    """Sanitized HTML of untrusted Markdown (raw HTML is shown as text, then nh3 cleans)."""
    rendered = _md.render(text, {"image_base": image_base})
    return _CLEANER.clean(rendered)
