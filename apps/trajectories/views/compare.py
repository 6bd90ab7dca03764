"""/compare/?a=<id>&b=<id>: two runs side by side, steps aligned, differences marked, and the
two final patches diffed. /compare/?a=<id> alone offers other public runs of the same task.

Each side is looked up as the trajectory page looks it up (selectors.viewer.trajectory_access):
a side the caller may not see is a 404, exactly as its page would be, and each side's text is
redacted for the caller by its own trajectory's redactions. Rows come ROWS_PER_PAGE at a time
(/compare/rows fragments as the reader scrolls; ?from=N pages without JavaScript), so two
2,000-step runs still make a small first page.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from apps.trajectories.image_rule import visitor_images
from apps.trajectories.outcome import cost_label, known_amount, run_outcome
from apps.trajectories.redaction import Redact, identity, redact_data
from apps.trajectories.rendering import Marks
from apps.trajectories.rendering import text as t
from apps.trajectories.rendering.text import marks_for
from apps.trajectories.selectors import is_share_id
from apps.trajectories.selectors.compare import (
    Alignment,
    Row,
    Step,
    compare_alignment,
    first_user_message,
    same_task_candidates,
)
from apps.trajectories.selectors.viewer import Access, trajectory_access

# The first page renders this many aligned rows; compare.js fetches the rest in chunks of the
# same size as the reader scrolls (/compare/rows), so two 2,000-step runs make a small, fast
# first page whatever their length.
ROWS_PER_PAGE = 200
SHOWN_CHARS = 100
PATCH_DIFF_LINES = 2000


def _id_from(value: str) -> str:
    """A share id, or the id inside a pasted /t/<id>/ address."""
    value = (value or "").split("#", 1)[0].split("?", 1)[0].strip().rstrip("/")
    candidate = value.rsplit("/", 1)[-1]
    return candidate if is_share_id(candidate) else ""


def _marks(access: Access) -> Marks:
    # The whole map (loaded with the row: trajectory_access(indexed=False)): compare shows
    # steps' summaries, not events whose entries it could read.
    return marks_for(access.trajectory, show_original=access.show_original)


def _drop(access: Access) -> Redact:
    """References to images a moderator dropped or nobody has read yet, replaced for visitors
    (dropped.py, image_rule.py)."""
    if access.show_original:
        return identity
    return visitor_images(access.trajectory)


def _cell(step: Step | None, marks: Marks, base: str, drop: Redact = identity) -> str:
    if step is None:
        return '<td class="cmp-n"></td><td class="cmp-gap">—</td>'
    # Redacted whole, then cut: a secret straddling the cut would otherwise no longer match
    # its original and show in part ("a partial secret is a secret").
    # The first line is taken after redaction too: a value wrapped across lines is redacted
    # only whole, as the viewer redacts the event's text.
    text = marks.plain(drop(step.summary)).split("\n", 1)[0]
    if len(text) > SHOWN_CHARS:
        text = text[: SHOWN_CHARS - 1] + "…"
    return (
        f'<td class="cmp-n"><a href="{base}#step-{step.step}">{step.step}</a></td>'
        f'<td class="cmp-s k-{t.escape(step.kind)}"><span class="cmp-t">{t.escape(step.type)}</span> '
        f"{t.inline(text, marks)}</td>"
    )


def _rows_html(rows: list[Row], a: Access, b: Access) -> SafeString:
    # Built in Python, like the viewer's cards: hundreds of rows per request.
    marks_a, marks_b = _marks(a), _marks(b)
    base_a, base_b = a.trajectory.get_absolute_url(), b.trajectory.get_absolute_url()
    drop_a, drop_b = _drop(a), _drop(b)
    return mark_safe(
        "".join(
            f'<tr class="cmp-{row.status}">{_cell(row.a, marks_a, base_a, drop_a)}'
            f"{_cell(row.b, marks_b, base_b, drop_b)}</tr>"
            for row in rows
        )
    )


def _patch(access: Access) -> str:
    marks = _marks(access)
    metadata = access.trajectory.metadata
    if not marks.show_original and marks.active:
        metadata = redact_data(metadata, marks.plain)
    return marks.mark(run_outcome(metadata).patch)


def _patch_diff(access_a: Access, access_b: Access) -> dict[str, object]:
    a, b = _patch(access_a), _patch(access_b)
    if not a and not b:
        return {"state": "none"}
    if a == b:
        return {"state": "equal", "html": mark_safe(t.finish(t.diff_html(a)))}
    diff = t.unified_diff(a, b, path="patch")
    cut = t.clip(diff, lines=PATCH_DIFF_LINES, chars=400_000)
    return {
        "state": "differs",
        "html": mark_safe(t.finish(t.diff_html(cut.head))),
        "clipped": cut.clipped,
        "one_side": "a" if not b else ("b" if not a else ""),
    }


def _side(access: Access, steps: Sequence[Step]) -> dict[str, object]:
    trajectory = access.trajectory
    marks = _marks(access)
    result = run_outcome(trajectory.metadata)
    return {
        "trajectory": trajectory,
        "title": marks.plain(trajectory.title) or f"Trajectory {trajectory.share_id[:12]}",
        "agent": marks.plain(trajectory.agent),
        "model": marks.plain(trajectory.model_name),
        "steps": len(steps),
        "result": result,
        # Only a known cost: "unknown" would read oddly in this one line.
        "cost": cost_label(result.cost) if known_amount(result.cost) else "",
    }


def _start(request: HttpRequest) -> int:
    try:
        return max(0, int(request.GET.get("from", 0)))
    except ValueError:
        return 0


def _next_from(start: int, total: int) -> int | None:
    return start + ROWS_PER_PAGE if start + ROWS_PER_PAGE < total else None


@require_safe
def compare_page(request: HttpRequest) -> HttpResponse:
    a_id, b_id = _id_from(request.GET.get("a", "")), _id_from(request.GET.get("b", ""))
    if not a_id:
        raise Http404("no trajectory to compare")
    access_a = trajectory_access(request, a_id, indexed=False)
    if not b_id:
        return _chooser(request, access_a, pasted=request.GET.get("b", ""))
    access_b = trajectory_access(request, b_id, indexed=False)
    alignment = _alignment(access_a, access_b)
    start = _start(request)
    shown = alignment.rows(start, start + ROWS_PER_PAGE)
    counts = alignment.counts
    context = {
        "a": _side(access_a, alignment.left),
        "b": _side(access_b, alignment.right),
        "rows": _rows_html(shown, access_a, access_b),
        "counts": {key.replace("-", "_"): value for key, value in counts.items()},
        "total_rows": len(alignment),
        "start": start,
        "end": start + len(shown),
        "next_from": _next_from(start, len(alignment)),
        "previous_from": max(start - ROWS_PER_PAGE, 0) if start else None,
        "patch": _patch_diff(access_a, access_b),
    }
    response = render(request, "trajectories/compare.html", context)
    return _private(response, access_a, access_b)


@require_safe
def compare_rows(request: HttpRequest) -> HttpResponse:
    """GET /compare/rows?a=&b=&from=N: the next ROWS_PER_PAGE aligned rows as <tr> elements,
    which compare.js appends as the reader scrolls (the page's own pager links, without
    JavaScript, lead to ?from=N pages instead). X-Next-From says where the next rows start."""
    a_id, b_id = _id_from(request.GET.get("a", "")), _id_from(request.GET.get("b", ""))
    if not a_id or not b_id:
        raise Http404("no trajectories to compare")
    access_a, access_b = (
        trajectory_access(request, a_id, indexed=False),
        trajectory_access(request, b_id, indexed=False),
    )
    alignment = _alignment(access_a, access_b)
    start = _start(request)
    response = HttpResponse(
        _rows_html(alignment.rows(start, start + ROWS_PER_PAGE), access_a, access_b),
        content_type="text/html; charset=utf-8",
    )
    following = _next_from(start, len(alignment))
    if following is not None:
        response["X-Next-From"] = str(following)
    response["X-Robots-Tag"] = "noindex, nofollow"
    return _private(response, access_a, access_b)


def _alignment(access_a: Access, access_b: Access) -> Alignment:
    return compare_alignment(access_a.trajectory, access_b.trajectory)


def _chooser(request: HttpRequest, access: Access, *, pasted: str) -> HttpResponse:
    trajectory = access.trajectory
    candidates = same_task_candidates(trajectory, first_user_message(trajectory))
    context = {
        "a": _side(access, []),
        "candidates": candidates,
        "pasted": pasted,
        "bad_paste": bool(pasted.strip()),
    }
    return _private(render(request, "trajectories/compare_choose.html", context), access)


def _private(response: HttpResponse, *accesses: Access) -> HttpResponse:
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Cookie"
    if not all(access.trajectory.is_public for access in accesses):
        response["X-Robots-Tag"] = "noindex, nofollow"
    return response
