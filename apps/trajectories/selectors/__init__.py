"""Reads that feed the API and the pages. Visibility always comes from the queryset methods.

Everything a caller may not see is "not found" (Http404), so private ids do not leak.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import QuerySet
from django.http import Http404

from apps.trajectories import exporters
from apps.trajectories.dropped import chain
from apps.trajectories.event_rows import EventRow
from apps.trajectories.image_rule import visitor_images
from apps.trajectories.importers.base import CanonicalEvent
from apps.trajectories.models import Event, Image, Trajectory
from apps.trajectories.redaction import Redact, identity, redact_data, redactor

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from apps.accounts.models import User

SHARE_ID = re.compile(r"^[0-9a-f]{64}$")


def is_share_id(value: str) -> bool:
    return isinstance(value, str) and bool(SHARE_ID.match(value))


def _is_authenticated(user: User | None) -> TypeIs[User]:
    return user is not None and user.is_authenticated


def can_manage(trajectory: Trajectory, user: User | None) -> bool:
    """Owner or moderator: sees the original (unredacted) content and the raw upload."""
    if not _is_authenticated(user):
        return False
    return trajectory.owner_id == user.pk or user.is_moderator


def is_owner(trajectory: Trajectory, user: User | None) -> bool:
    return _is_authenticated(user) and trajectory.owner_id == user.pk


def can_hard_delete(user: User | None) -> bool:
    """Staff delete any trajectory; moderators hide instead. A moderator account is staff too
    (Django admin admits only staff), so the "moderators" group tells the two apart, unless the
    account holds the delete permission (as superusers do), which Django admin also asks for."""
    if not _is_authenticated(user) or not user.is_staff:
        return False
    if user.has_perm("trajectories.delete_trajectory"):
        return True
    return not user.groups.filter(name="moderators").exists()


def trajectory_get_visible(
    share_id: str, user: User | None, *, indexed: bool = False
) -> Trajectory:
    """The trajectory if `user` may see it; Http404 for malformed, unknown or invisible ids.
    `indexed`: without the full redactions map where its redaction index is current
    (selectors/redactions.py), for callers that redact only what they show."""
    if not is_share_id(share_id):
        raise Http404("no such trajectory")
    queryset: QuerySet[Trajectory] = (
        Trajectory.objects.visible_to(user).select_related("owner").filter(share_id=share_id)
    )
    if indexed:
        from apps.trajectories.selectors.redactions import with_redaction_index

        queryset = with_redaction_index(queryset)
    trajectory = queryset.first()
    if trajectory is None:
        raise Http404("no such trajectory")
    return trajectory


def trajectory_list_public() -> QuerySet[Trajectory]:
    """The public list: `public()`, one per chain of continuations (`listed()`)."""
    return Trajectory.objects.listed().select_related("owner")


def trajectory_list_owned(user: User) -> QuerySet[Trajectory]:
    """The user's own trajectories, of every visibility and review state."""
    return Trajectory.objects.owned_by(user).select_related("owner")


def redactor_for(
    trajectory: Trajectory, user: User | None, *, shown: Iterable[Event] | None = None
) -> Redact:
    """Identity for the owner and moderators; for everyone else the trajectory's redactions,
    and references to the images a moderator dropped, or nobody has read (image_rule.py),
    replaced by a placeholder.

    `shown=None`: the whole map, for any of its strings (downloads, exports). `shown=events`:
    only what the trajectory's own strings and those events need, from its redaction index
    where current (the same text: services/redaction_index.py)."""
    if can_manage(trajectory, user):
        return identity
    from apps.trajectories.selectors.redactions import full_redactions, shown_redactions

    redactions = (
        full_redactions(trajectory) if shown is None else shown_redactions(trajectory, shown)
    )
    return chain(visitor_images(trajectory), redactor(redactions))


@dataclass
class EventView(EventRow):
    """An event as a caller may see it (redacted unless owner/moderator)."""


def event_list(
    trajectory: Trajectory, user: User | None, *, start: int = 0, limit: int | None = None
) -> list[EventView]:
    """Events of a trajectory the caller may see (check with trajectory_get_visible first)."""
    redact = redactor_for(trajectory, user)
    qs = Event.objects.filter(trajectory=trajectory, position__gte=start).order_by("position")
    if limit is not None:
        qs = qs[:limit]
    return [_view(event, redact) for event in qs]


def event_queryset(trajectory: Trajectory) -> QuerySet[Event]:
    return Event.objects.filter(trajectory=trajectory).order_by("position")


def event_view(event: Event, redact: Redact) -> EventView:
    return _view(event, redact)


def _view(event: Event, redact: Redact) -> EventView:
    return EventView(
        position=event.position,
        original_id=redact(event.original_id),
        timestamp=event.timestamp,
        source=event.source,
        kind=event.kind,
        type=event.type,
        cause=redact(event.cause),
        text=redact(event.text),
        data=redact_data(event.data, redact),
    )


def trajectory_export(trajectory: Trajectory, user: User | None, fmt: str) -> bytes:
    """The trajectory in an export format (openhands, openai, sharegpt, atif, adp), as `user`
    may see it: originals for the owner and moderators, redacted for everyone else. The API's download and
    the account's data export both use it."""
    redact = redactor_for(trajectory, user)
    events = canonical_events(trajectory, user)
    meta = {
        "id": trajectory.share_id,
        "title": redact(trajectory.title),
        "agent": redact(trajectory.agent),
        "model": redact(trajectory.model_name),
        "agent_version": redact(trajectory.agent_version),
        "source_format": trajectory.source_format,
        "polarity": trajectory.polarity,
        "feedback_text": redact(trajectory.feedback_text),
        "license": trajectory.license,
        "url": trajectory.get_absolute_url(),
        "metadata": redact_data(trajectory.metadata, redact),
    }
    return exporters.export_events(fmt, events, meta=meta)


def canonical_events(trajectory: Trajectory, user: User | None) -> Iterator[CanonicalEvent]:
    """Events as the importers' canonical form (for exports), redacted for non-owners."""
    redact = redactor_for(trajectory, user)
    for event in event_queryset(trajectory).iterator(chunk_size=1000):
        yield CanonicalEvent(
            source=event.source,
            kind=event.kind,
            type=event.type,
            text=redact(event.text),
            data=redact_data(event.data, redact),
            original_id=redact(event.original_id),
            timestamp=event.timestamp,
            cause=redact(event.cause),
        )


def image_of(trajectory: Trajectory, sha256: str) -> Image | None:
    """An image the trajectory refers to (check the trajectory's visibility first)."""
    if not is_share_id(sha256):
        return None
    return Image.objects.filter(sha256=sha256, trajectory_links__trajectory=trajectory).first()
