"""The trajectory page (/t/<id>/) and the fragments its script loads.

The page renders the header and the first chunk of cards (at most FIRST_EVENTS events and about
FIRST_BYTES of card HTML, so that a 2,000-step trajectory still arrives fast); viewer.js loads
the rest from `events` as the reader scrolls or jumps. Without JavaScript, `?after=N` pages
through the same chunks. Anything the caller may not see is a 404, whatever the endpoint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.storage import storages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from apps.trajectories import extensions
from apps.trajectories.image_rule import image_withheld, withheld_images, withheld_text
from apps.trajectories.models import Event, Outcome
from apps.trajectories.outcome import SOURCE_LABELS, cost_label, count_label
from apps.trajectories.rendering import (
    ViewContext,
    card_html,
    event_json_html,
    present_event,
)
from apps.trajectories.rendering.result_card import (
    result_for,
    result_html,
    stored_verdict_of,
    tools_html,
)
from apps.trajectories.rendering.text import marks_for
from apps.trajectories.selectors import find_store
from apps.trajectories.selectors.find import snippets
from apps.trajectories.selectors.redactions import redaction_count
from apps.trajectories.selectors.viewer import (
    Access,
    chain_members,
    event_at,
    event_chunk,
    event_chunk_before,
    event_find,
    event_summary,
    event_timeline,
    image_for,
    public_share_status,
    trajectory_access,
)

FIRST_EVENTS = 100
FIRST_BYTES = 200_000
CHUNK_EVENTS = 100
CHUNK_MAX_EVENTS = 500
CHUNK_BYTES = 600_000
FIND_MAX_QUERY = 200
FIND_MAX_STEPS = 5000
FIND_MAX_SNIPPETS = 100
# The cards around a find answer's first match (`cards=1`): viewer-list.js's JUMP_BEFORE and
# JUMP_BEFORE + 1 + JUMP_AFTER.
FIND_CARDS_BEFORE = 4
FIND_CARDS = 19
FIND_MAX_HIDDEN = 64  # types a reader's filter may hide (a trajectory has a few)
EXPORT_FORMATS = [
    ("openhands", "OpenHands JSON"),
    ("openai", "OpenAI messages"),
    ("sharegpt", "ShareGPT"),
    ("atif", "ATIF (Harbor)"),
    ("adp", "ADP"),
]


def _int(value: Any, default: int, *, low: int = 0, high: int = 10**9) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return max(low, min(high, number))


def _context(access: Access, shown: Sequence[Event]) -> ViewContext:
    """What renders the trajectory's own strings and the `shown` events: redacted with their
    entries of the redaction index (selectors/redactions.py), not the whole map."""
    trajectory = access.trajectory
    return ViewContext(
        share_id=trajectory.share_id,
        marks=marks_for(trajectory, show_original=access.show_original, shown=shown),
        started_at=trajectory.started_at,
        dropped_images=frozenset(trajectory.dropped_images or ()),
        withheld_images=withheld_images(trajectory),
        flagged_images=frozenset(trajectory.flagged_images or ()),
    )


def _private_headers(response: HttpResponse, access: Access) -> HttpResponse:
    """Per-viewer content: never cached by a shared cache, never indexed unless public."""
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Cookie"
    if not access.trajectory.is_public:
        response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _is_fetch(request: HttpRequest) -> bool:
    return request.headers.get("X-Requested-With") == "fetch"


@dataclass
class Chunk:
    html: SafeString
    count: int
    next_after: int | None  # step after which the next chunk starts; None: the end


def render_chunk(access: Access, *, after: int, limit: int, budget: int) -> Chunk:
    """Cards of steps after+1 ... until `limit` events or about `budget` bytes of HTML."""
    # One event more than asked says whether there is a next chunk without counting.
    events = event_chunk(access.trajectory, start=after, limit=limit + 1)
    ctx = _context(access, events[:limit])
    base = f"/t/{access.trajectory.share_id}/"
    parts: list[str] = []
    size = 0
    last = after
    for event in events[:limit]:
        card = present_event(event, ctx)
        html = card_html(card, base)
        parts.append(html)
        size += len(html)
        last = event.position + 1
        if size >= budget:
            break
    more = len(events) > len(parts)
    return Chunk(
        html=mark_safe("".join(parts)), count=len(parts), next_after=last if more else None
    )


def render_chunk_before(access: Access, *, before: int, limit: int, budget: int) -> Chunk:
    """Cards of the steps just before step `before`+1 (positions < before), nearest first until
    `limit` events or about `budget` bytes, returned in step order. `next_after` here is the
    position of the first card, or None when the chunk reaches step 1."""
    events = event_chunk_before(access.trajectory, end=before, limit=limit)
    ctx = _context(access, events)
    base = f"/t/{access.trajectory.share_id}/"
    parts: list[str] = []
    size = 0
    first = before
    for event in reversed(events):
        html = card_html(present_event(event, ctx), base)
        parts.append(html)
        size += len(html)
        first = event.position
        if size >= budget:
            break
    parts.reverse()
    return Chunk(
        html=mark_safe("".join(parts)), count=len(parts), next_after=first if first > 0 else None
    )


def _header(access: Access, total: int, type_counts: list[tuple[str, int]]) -> dict[str, Any]:
    trajectory = access.trajectory
    plain = marks_for(trajectory, show_original=access.show_original, shown=()).plain
    metadata = trajectory.metadata if isinstance(trajectory.metadata, dict) else {}
    # The columns are null where the format recorded 0 (outcome.known_amount); the metadata
    # still says whether it recorded anything, which then reads "unknown".
    tokens = trajectory.total_tokens
    if tokens is None and isinstance(metadata.get("total_tokens"), int):
        tokens = metadata["total_tokens"]
    cost = trajectory.total_cost
    if cost is None and isinstance(metadata.get("total_cost"), (int, float)):
        cost = float(metadata["total_cost"])
    duration = None
    if (
        trajectory.started_at
        and trajectory.ended_at
        and trajectory.ended_at >= trajectory.started_at
    ):
        duration = _duration(trajectory.ended_at - trajectory.started_at)
    return {
        "title": plain(trajectory.title) or f"Trajectory {trajectory.share_id[:12]}",
        "agent": plain(trajectory.agent),
        "model": plain(trajectory.model_name),
        "agent_version": plain(trajectory.agent_version),
        "source_format": trajectory.source_format,
        "steps": total,
        "duration": duration,
        "tokens": count_label(tokens),
        "cost": cost_label(cost),
        "polarity": trajectory.polarity if trajectory.polarity != "none" else "",
        "feedback": plain(trajectory.feedback_text),
        "visibility": trajectory.get_visibility_display(),
        "is_public": trajectory.is_public,
        "review_state": trajectory.review_state,
        "review_state_label": trajectory.review_label,
        "license": trajectory.license if trajectory.visibility == "public" else "",
        "owner": trajectory.owner.get_username() if trajectory.owner_id else "",
        "created_at": trajectory.created_at,
        "redacted": redaction_count(trajectory),
        "types": type_counts,
    }


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def _outcome_controls(request: HttpRequest, access: Access) -> str:
    """The owner's (or the password holder's) form on the Result card: "it worked" / "it did
    not" (views/outcome.py), or why it cannot be set (the format's own outcome wins)."""
    if not (access.is_owner or access.is_holder):
        return ""
    trajectory = access.trajectory
    known = trajectory.outcome in (Outcome.RESOLVED, Outcome.UNRESOLVED)
    own = trajectory.outcome_source if known and trajectory.outcome_source != "owner" else ""
    return render_to_string(
        "trajectories/_outcome_controls.html",
        {
            "trajectory": trajectory,
            "own_source": SOURCE_LABELS.get(own, own),
            "owner_outcome": trajectory.owner_outcome,
        },
        request=request,
    )


STATUS_REFRESH_SECONDS = 5
# 202: not there yet (the scan runs); 200: there, waiting for a person; 410: gone for good.
STATUS_CODES = {"checking": 202, "held": 200, "deleted": 410}


@require_safe
def trajectory_page(request: HttpRequest, share_id: str) -> HttpResponse:
    try:
        access = trajectory_access(request, share_id)
    except Http404:
        # A share made public that is not in public() (yet, or any more) says why, without a
        # word of its content; anything else is the one 404 an unknown id gets.
        status = public_share_status(share_id)
        if status is None:
            raise
        response = render(
            request,
            "trajectories/status.html",
            {"status": status, "share_id": share_id, "refresh_seconds": STATUS_REFRESH_SECONDS},
            status=STATUS_CODES[status.state],
        )
        response["Cache-Control"] = "no-cache"
        response["X-Robots-Tag"] = "noindex, nofollow"
        return response
    trajectory = access.trajectory
    summary = event_summary(trajectory)
    type_counts = [(type_, n) for type_, n in summary.types]
    total = summary.total
    after = _int(request.GET.get("after"), 0, high=max(total - 1, 0))
    chunk = render_chunk(access, after=after, limit=FIRST_EVENTS, budget=FIRST_BYTES)
    ctx = _context(access, ())
    # The download API decides by account (visible_to), not by this session's unlock.
    downloads = list(EXPORT_FORMATS) if access.can_download else []
    if access.can_download_original:
        downloads.insert(0, ("original", "Original upload"))
    context = {
        "trajectory": trajectory,
        "access": access,
        "header": _header(access, total, type_counts),
        "result": result_html(
            result_for(trajectory.metadata, ctx),
            ctx,
            verdict=stored_verdict_of(trajectory),
            controls=_outcome_controls(request, access),
        ),
        "tools": tools_html(trajectory.metadata, ctx),
        "cards": chunk.html,
        "first_step": after + 1,
        "next_after": chunk.next_after,
        "previous_after": max(after - FIRST_EVENTS, 0) if after else None,
        "total": total,
        "downloads": downloads,
        "base": f"/t/{trajectory.share_id}/",
        "versions": chain_members(trajectory),
        **extensions.page_context(request, trajectory),
    }
    return _private_headers(render(request, "trajectories/page.html", context), access)


@require_safe
def trajectory_events(request: HttpRequest, share_id: str) -> HttpResponse:
    """HTML cards of the steps after `after` (for viewer.js); X-Next-After says where to go on.

    With `before=N` instead: the steps just before step N+1 (a reader who opened a permalink far
    into the trajectory and scrolls up); X-Prev-Before says where the chunk starts ("" at step 1).
    """
    access = trajectory_access(request, share_id)
    limit = _int(request.GET.get("limit"), CHUNK_EVENTS, low=1, high=CHUNK_MAX_EVENTS)
    budget = CHUNK_BYTES * max(limit // CHUNK_EVENTS, 1)
    if "before" in request.GET:
        before = _int(request.GET.get("before"), 0)
        chunk = render_chunk_before(access, before=before, limit=limit, budget=budget)
        response = HttpResponse(chunk.html, content_type="text/html; charset=utf-8")
        response["X-Prev-Before"] = "" if chunk.next_after is None else str(chunk.next_after)
        return _private_headers(response, access)
    after = _int(request.GET.get("after"), 0)
    chunk = render_chunk(access, after=after, limit=limit, budget=budget)
    response = HttpResponse(chunk.html, content_type="text/html; charset=utf-8")
    response["X-Next-After"] = "" if chunk.next_after is None else str(chunk.next_after)
    return _private_headers(response, access)


def _step_position(step: int) -> int:
    if step < 1:
        raise Http404("no such step")
    return step - 1


def _fragment_or_page(
    request: HttpRequest, access: Access, html: SafeString, *, step: int, what: str
) -> HttpResponse:
    """viewer.js gets the bare fragment; a reader without JavaScript gets it inside a page."""
    if _is_fetch(request):
        response = HttpResponse(html, content_type="text/html; charset=utf-8")
    else:
        response = render(
            request,
            "trajectories/fragment_page.html",
            {
                "trajectory": access.trajectory,
                "html": html,
                "step": step,
                "what": what,
                "base": f"/t/{access.trajectory.share_id}/",
                "title": marks_for(
                    access.trajectory, show_original=access.show_original, shown=()
                ).plain(access.trajectory.title)
                or f"Trajectory {access.trajectory.share_id[:12]}",
            },
        )
    return _private_headers(response, access)


@require_safe
def trajectory_event_json(request: HttpRequest, share_id: str, step: str) -> HttpResponse:
    step = int(step)
    access = trajectory_access(request, share_id)
    event = event_at(access.trajectory, _step_position(step))
    html = event_json_html(event, _context(access, [event]))
    return _fragment_or_page(request, access, html, step=step, what="JSON")


@require_safe
def trajectory_event_block(
    request: HttpRequest, share_id: str, step: str, index: str
) -> HttpResponse:
    """One block of a card in full (the "Show all N lines" of a clipped output, file or diff)."""
    step, index = int(step), int(index)
    access = trajectory_access(request, share_id)
    event = event_at(access.trajectory, _step_position(step))
    ctx = _context(access, [event])
    full = dataclasses.replace(ctx, full_block=index)
    card = present_event(event, full)
    if index >= len(card.blocks):
        raise Http404("no such block")
    return _fragment_or_page(request, access, card.blocks[index].html, step=step, what="full text")


@require_safe
def trajectory_find(request: HttpRequest, share_id: str) -> HttpResponse:
    """Steps whose text matches `q` (JSON): {"q", "steps": [[step, hits, type], ...], "total":
    hits in all, "matched": steps in all, "offset": the rank of the first step returned among
    all, "next": the offset of the next page or null}. `limit` and `offset` page the steps
    (default: the first FIND_MAX_STEPS); `from=<step>` starts the page at the first match at or
    after that step (the first match of all when none is: find wraps), so a reader far into a
    long trajectory gets the matches around them, not the first thousands; `hide=<type>,...`
    leaves out the steps of the types the reader's filter hides (the counts too); `cards=1` adds
    "cards": the HTML of the cards around the page's first match, as `events?after=` gives
    them; `warm=1` without `q` reads the index into this process ahead of the first keystroke.
    `snippets=1`
    adds "snippets": [[step, text], ...], a short redacted piece around each returned step's
    first hit (at most FIND_MAX_SNIPPETS steps)."""
    access = trajectory_access(request, share_id)
    query = (request.GET.get("q") or "").strip()[:FIND_MAX_QUERY]
    offset = _int(request.GET.get("offset"), 0)
    limit = _int(request.GET.get("limit"), FIND_MAX_STEPS, low=1, high=FIND_MAX_STEPS)
    start = request.GET.get("from")
    if start is not None and not start.isdigit():
        return JsonResponse({"error": "from must be a step number"}, status=400)
    hidden = {name for name in (request.GET.get("hide") or "").split(",")[:FIND_MAX_HIDDEN] if name}
    want_snippets = request.GET.get("snippets") == "1"
    if not query and request.GET.get("warm") == "1":
        find_store.warm(access.trajectory)
    payload: dict[str, Any] = {"q": query, "steps": [], "total": 0, "matched": 0}
    payload.update(offset=offset, next=None)
    if query:
        found = event_find(access.trajectory, query, show_original=access.show_original)
        found = found.without(hidden)
        if start is not None:
            offset = found.rank(int(start))
            if offset >= found.matched:
                offset = 0
        payload.update(
            steps=found.page(offset, limit),
            total=found.total,
            matched=found.matched,
            offset=offset,
        )
        if offset + limit < found.matched:
            payload["next"] = offset + limit
    if request.GET.get("cards") == "1" and payload["steps"]:
        # The cards the viewer shows for the page's first match (as `events?after=` would
        # give them), so that find as you type is one request a keystroke.
        first = payload["steps"][0][0]
        after = max(0, first - 1 - FIND_CARDS_BEFORE)
        payload["cards"] = str(
            render_chunk(access, after=after, limit=FIND_CARDS, budget=CHUNK_BYTES).html
        )
    if want_snippets:
        steps = [step for step, _, _ in payload["steps"][:FIND_MAX_SNIPPETS]]
        payload["snippets"] = (
            snippets(access.trajectory, steps, query, show_original=access.show_original)
            if steps
            else []
        )
    return _private_headers(JsonResponse(payload), access)


@require_safe
def trajectory_image(request: HttpRequest, share_id: str, sha256: str) -> HttpResponse:
    """An image the trajectory refers to, from the private "default" storage, if the caller may see it."""
    access = trajectory_access(request, share_id)
    # Only raster types (selectors/viewer.py SAFE_IMAGE_TYPES): never SVG or HTML from our origin.
    image = image_for(access.trajectory, sha256)
    if image.dropped_at is not None and not access.show_original:
        # A moderator dropped it (it shows a secret): gone for everyone but owner and moderators.
        return _private_headers(
            HttpResponse("Image removed by a moderator.", status=410, content_type="text/plain"),
            access,
        )
    if image_withheld(image) and not access.show_original:
        # Nobody has read it (no OCR): not public until a moderator clears it (image_rule.py).
        return _private_headers(
            HttpResponse(withheld_text(image), status=403, content_type="text/plain"), access
        )
    try:
        handle = storages["default"].open(image.path, "rb")
    except (FileNotFoundError, OSError):
        raise Http404("no such image") from None
    response = FileResponse(handle, content_type=image.content_type)
    response["Content-Disposition"] = "inline"
    response["ETag"] = f'"{image.sha256}"'
    _private_headers(response, access)
    # Content-addressed: the bytes never change; only who may see them does (hence private).
    response["Cache-Control"] = (
        f"private, max-age={getattr(settings, 'TRAJHUB_IMAGE_MAX_AGE', 3600)}"
    )
    return response


@require_safe
def trajectory_timeline(request: HttpRequest, share_id: str) -> HttpResponse:
    """The timeline strip's data (JSON): {"families": one letter a step, "errors": [steps],
    "screenshots": [steps]}. Fetched by viewer.js after the page, so the page stays fast."""
    access = trajectory_access(request, share_id)
    return _private_headers(JsonResponse(event_timeline(access.trajectory)), access)
