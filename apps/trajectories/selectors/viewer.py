"""Reads behind the trajectory page (/t/<id>/): access, event chunks, type counts, find, images.

Access is `Trajectory.objects.visible_to(user)` plus one more holder: the anonymous contributor
who unlocked the trajectory with its link and deletion password in this browser session
(`request.session["unlocked_trajectories"]`, a list of share ids, written by the unlock page).
Everything else answers Http404, never 403, so a private id looks exactly like an unknown one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet
from django.http import Http404

from apps.trajectories.models import (
    Event,
    EventSummary,
    Image,
    ReviewState,
    Tombstone,
    Trajectory,
    Visibility,
)
from apps.trajectories.selectors import can_manage, is_share_id
from apps.trajectories.selectors.find import Found, find_by_index, find_by_reading
from apps.trajectories.selectors.redactions import with_redaction_index
from apps.trajectories.services.summary import (
    EXIT_CODE_PATHS,
    SCREENSHOT_PATHS,
    SUMMARY_FIELDS,
    Summary,
    event_summary_save,
)

if TYPE_CHECKING:
    from django.http import HttpRequest

UNLOCKED_SESSION_KEY = "unlocked_trajectories"
# Raster formats, which a browser only ever shows (never SVG or HTML, which it would run): what
# ingest stores (services/events.py sniffs the bytes), and all that the image endpoints serve.
SAFE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
# Never shown on the page (search text can be 200 KB; the email and password hashes are secret).
HEAVY_FIELDS = ("search_text", "search_vector", "contact_email", "deletion_password_hashes")


@dataclass(frozen=True)
class Access:
    """How the caller sees a trajectory they may see."""

    trajectory: Trajectory
    is_owner: bool  # signed-in owner
    is_moderator: bool  # moderator or staff
    is_holder: bool  # anonymous contributor with the link and password (unlocked this session)

    @property
    def show_original(self) -> bool:
        """Owner, holder and moderators see originals (redactions highlighted); others placeholders."""
        return self.is_owner or self.is_moderator or self.is_holder

    @property
    def can_download(self) -> bool:
        return self.trajectory.is_public or self.can_download_original

    @property
    def can_download_original(self) -> bool:
        # The password holder of an anonymous share is its contributor: the upload is theirs.
        return self.is_owner or self.is_moderator or self.is_holder


def unlocked_share_ids(request: HttpRequest) -> list[str]:
    """Share ids unlocked with a password in this session. Reading the session costs a query only
    when the browser sent a session cookie."""
    session = getattr(request, "session", None)
    if session is None or not session.session_key and not session.modified:
        # No session cookie at all: nothing can have been unlocked (and no query is spent).
        return []
    value = session.get(UNLOCKED_SESSION_KEY, [])
    return [item for item in value if is_share_id(item)] if isinstance(value, list) else []


def trajectory_access(request: HttpRequest, share_id: str, *, indexed: bool = True) -> Access:
    """The trajectory at `share_id` and how the caller sees it, or Http404. One query.
    `indexed=False`: with the whole redactions map, for a caller that redacts with it
    (compare) rather than with the shown events' entries."""
    if not is_share_id(share_id):
        raise Http404("no such trajectory")
    user: Any = getattr(request, "user", None)  # a User, AnonymousUser, or None on a bare request
    queryset = Trajectory.objects.visible_to(user)
    unlocked = share_id in unlocked_share_ids(request)
    if unlocked:
        # A password unlocks an anonymous share only while no account has claimed it.
        queryset = queryset | Trajectory.objects.filter(share_id=share_id, owner__isnull=True)
    selected: QuerySet[Trajectory] = (
        queryset.select_related("owner").defer(*HEAVY_FIELDS).filter(share_id=share_id)
    )
    if indexed:
        # Without the full redactions map where its index is current (selectors/redactions.py).
        selected = with_redaction_index(selected)
    trajectory = selected.first()
    if trajectory is None:
        raise Http404("no such trajectory")
    authenticated = user is not None and user.is_authenticated
    return Access(
        trajectory=trajectory,
        is_owner=authenticated and trajectory.owner_id == user.pk,
        is_moderator=authenticated and bool(user.is_moderator),
        is_holder=unlocked and trajectory.owner_id is None,
    )


def can_see_original(trajectory: Trajectory, request: HttpRequest) -> bool:
    """For other surfaces (downloads): owner, moderator, or the password holder of an anonymous share."""
    if can_manage(trajectory, getattr(request, "user", None)):
        return True
    return trajectory.owner_id is None and trajectory.share_id in unlocked_share_ids(request)


@dataclass(frozen=True)
class ShareStatus:
    """Why a share its submitter made public cannot be shown to the caller: "checking" (the scan
    has not run), "held" (waiting for a moderator) or "deleted" (on `deleted_at`)."""

    state: str
    deleted_at: datetime | None = None


def public_share_status(share_id: str) -> ShareStatus | None:
    """For an id the caller may not see: the status of a share made public by its submitter,
    or None (private, rejected, hidden, unknown: the one 404). Says nothing of its content."""
    if not is_share_id(share_id):
        return None
    state = (
        Trajectory.objects.filter(
            share_id=share_id,
            visibility=Visibility.PUBLIC,
            review_state__in=(ReviewState.PENDING, ReviewState.HELD),
        )
        .values_list("review_state", flat=True)
        .first()
    )
    if state is not None:
        return ShareStatus("checking" if state == ReviewState.PENDING else "held")
    deleted_at = (
        Tombstone.objects.filter(share_id=share_id, was_public=True)
        .values_list("deleted_at", flat=True)
        .first()
    )
    return ShareStatus("deleted", deleted_at) if deleted_at is not None else None


CHAIN_LINKS = 20


def chain_members(trajectory: Trajectory) -> list[Trajectory]:
    """The other members of the trajectory's chain of continuations that are in `public()`,
    longest first: a page links only to those. No query outside a chain."""
    if not trajectory.chain_key:
        return []
    return list(
        Trajectory.objects.public()
        .filter(chain_key=trajectory.chain_key)
        .exclude(pk=trajectory.pk)
        .only("share_id", "num_events", "created_at")
        .order_by("-num_events", "-id")[:CHAIN_LINKS]
    )


def event_summary(trajectory: Trajectory, *, timeline: bool = False) -> EventSummary:
    """The stored summary of the trajectory's events (counts by type, total; with `timeline`,
    the strip too). One query of one row, whatever the number of events. A summary that is
    missing or no longer matches the events (stored before summaries existed, or by a path that
    wrote events without one) is made from the events' small columns (one more query) and
    stored, so the next view reads one row again."""
    fields = SUMMARY_FIELDS if timeline else ("chain_fingerprint", "total", "types")
    row = EventSummary.objects.filter(trajectory_id=trajectory.pk).only(*fields).first()
    if (
        row is not None
        and row.chain_fingerprint == trajectory.chain_fingerprint
        and row.total == trajectory.num_events
    ):
        return row
    return event_summary_save(trajectory_id=trajectory.pk, summary=summary_from_events(trajectory))


def summary_from_events(trajectory: Trajectory) -> Summary:
    """The summary made from the stored events: one query; it reads only a few small JSON keys
    of each event, never its text."""
    from django.db.models.fields.json import KT
    from django.db.models.functions import Coalesce

    rows = (
        Event.objects.filter(trajectory=trajectory)
        .order_by("position")
        .annotate(
            exit_code=Coalesce(*(KT("data__" + "__".join(path)) for path in EXIT_CODE_PATHS)),
            shot=Coalesce(*(KT("data__" + "__".join(path)) for path in SCREENSHOT_PATHS)),
        )
        .values_list("position", "kind", "type", "source", "exit_code", "shot")
    )
    summary = Summary(chain_fingerprint=trajectory.chain_fingerprint)
    for row in rows.iterator(chunk_size=2000):
        summary.add(*row)
    return summary


def event_chunk(trajectory: Trajectory, *, start: int, limit: int) -> list[Event]:
    """Events at positions start, start+1, ... (at most `limit`). One query."""
    return list(
        Event.objects.filter(trajectory=trajectory, position__gte=start).order_by("position")[
            :limit
        ]
    )


def event_chunk_before(trajectory: Trajectory, *, end: int, limit: int) -> list[Event]:
    """Events just before position `end` (at most `limit`), in step order. One query."""
    events = list(
        Event.objects.filter(trajectory=trajectory, position__lt=end).order_by("-position")[:limit]
    )
    events.reverse()
    return events


def event_at(trajectory: Trajectory, position: int) -> Event:
    event = Event.objects.filter(trajectory=trajectory, position=position).first()
    if event is None:
        raise Http404("no such step")
    return event


def event_find(trajectory: Trajectory, query: str, *, show_original: bool) -> Found:
    """Steps whose text contains `query` (case-insensitive), with the number of hits in each
    (a step whose type contains it counts one more), in step order, and the hits in all.

    Visitors' matches are over the redacted text, so a search cannot reveal a redacted value.
    Answered from the trajectory's find index where it is current (selectors/find.py: the
    index's row and the slices of the words matched, a fixed number of queries), else by
    reading every event as before."""
    found = find_by_index(trajectory, query, show_original=show_original)
    if found is None:
        found = find_by_reading(trajectory, query, show_original=show_original)
    return found


def image_for(trajectory: Trajectory, sha256: str) -> Image:
    """The image if this trajectory refers to it and it is safe to serve; Http404 otherwise.
    One query."""
    image = Image.objects.filter(sha256=sha256, trajectory_links__trajectory=trajectory).first()
    if image is None or image.content_type not in SAFE_IMAGE_TYPES:
        raise Http404("no such image")
    return image


def event_timeline(trajectory: Trajectory) -> dict[str, Any]:
    """Every step as one letter (its family), plus the steps that failed (a non-zero exit code,
    an error) and those with a screenshot, for the strip above the steps: the stored summary's
    (one row)."""
    summary = event_summary(trajectory, timeline=True)
    return {
        "families": summary.families,
        "errors": summary.errors,
        "screenshots": summary.screenshots,
    }
