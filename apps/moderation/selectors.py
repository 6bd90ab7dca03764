"""Moderation reads."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import Count, Min, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.trajectories.image_rule import publish_unread
from apps.trajectories.models import Event, ReviewState, Trajectory, Visibility


def trajectories_pending_scan(
    *, older_than_seconds: float = 60, limit: int | None = None
) -> QuerySet[Trajectory]:
    """Pending trajectories whose last change is at least `older_than_seconds` old, oldest first.

    The age leaves the on-commit scan time to run first; the sweep only catches lost ones.
    """
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    queryset = Trajectory.objects.filter(
        review_state=ReviewState.PENDING, updated_at__lte=cutoff
    ).order_by("updated_at", "id")
    return queryset[:limit] if limit is not None else queryset


def trajectories_rescan_due(*, version: str, limit: int | None = None) -> QuerySet[Trajectory]:
    """Public trajectories past their first scan whose scan ran under other rules than
    `version`, newest first (what readers see most is rescanned first)."""
    queryset = (
        Trajectory.objects.filter(visibility=Visibility.PUBLIC)
        .exclude(review_state=ReviewState.PENDING)
        .exclude(scan_version=version)
        .order_by("-created_at", "-id")
    )
    return queryset[:limit] if limit is not None else queryset


# --- The review queue ---------------------------------------------------------------------------


def review_queue() -> QuerySet[Trajectory]:
    """What waits for a decision, oldest first: public trajectories held (by the scan, by
    pre-moderation, or by readers' reports), and any with open reports, a confirmed takedown
    request or an open appeal; and, unless TRAJHUB_IMAGES_PUBLISH_UNREAD, public ones with
    images that nobody has read for text (OCR off or missing). Each row is annotated with what the list shows (a fixed number
    of queries however long the page)."""
    from apps.moderation.models import (
        Appeal,
        Claim,
        Finding,
        FindingCategory,
        QueueItem,
        Report,
        TakedownRequest,
        TakedownState,
    )

    def count(queryset: QuerySet[Any], what: Count | None = None) -> Coalesce:
        counted = queryset.values("trajectory").annotate(n=what or Count("pk")).values("n")
        return Coalesce(Subquery(counted[:1]), 0)

    # A finding is one value, however often it occurs (each occurrence is a Finding row, with
    # the value's one placeholder): nine of one key are one finding found nine times.
    values = Count("placeholder", distinct=True)

    here = OuterRef("pk")
    claim = Claim.objects.filter(trajectory=here, expires_at__gt=timezone.now())
    waiting = (
        Q(review_state=ReviewState.HELD, visibility=Visibility.PUBLIC)
        | Q(open_reports__gt=0)
        | Q(open_takedowns__gt=0)
        | Q(open_appeals__gt=0)
    )
    if not publish_unread():
        # OCR did not read their images: each waits for a moderator to clear or drop it
        # before it is public (apps/trajectories/image_rule.py).
        waiting |= Q(review_state=ReviewState.APPROVED, visibility=Visibility.PUBLIC) & ~Q(
            unchecked_images=[]
        )
    # OCR found something in their images: each is withheld until a moderator clears or drops
    # it, whatever the setting (image_rule.py).
    waiting |= Q(review_state=ReviewState.APPROVED, visibility=Visibility.PUBLIC) & ~Q(
        flagged_images=[]
    )
    return (
        QueueItem.objects.annotate(
            open_reports=count(Report.objects.filter(trajectory=here, resolved_at__isnull=True)),
            open_takedowns=count(
                TakedownRequest.objects.filter(trajectory=here, state=TakedownState.OPEN)
            ),
            open_appeals=count(Appeal.objects.filter(trajectory=here, resolved_at__isnull=True)),
            num_findings=count(Finding.objects.filter(trajectory=here), values),
            num_secrets=count(
                Finding.objects.filter(trajectory=here, category=FindingCategory.SECRET), values
            ),
            num_found=count(Finding.objects.filter(trajectory=here)),
            claimed_by=Subquery(claim.values("moderator__username")[:1]),
            claimed_until=Subquery(claim.values("expires_at")[:1]),
        )
        .filter(waiting)
        .select_related("owner")
        .order_by("created_at", "id")
    )


@dataclass(frozen=True)
class FindingInContext:
    """One finding (a value) with the text around its first occurrence, for the moderator's
    page (escaped when rendered), and how many times the scan found it."""

    finding: Any
    where: str
    before: str
    value: str
    after: str
    count: int = 1


CONTEXT_CHARS = 80
FINDINGS_SHOWN = 200


def findings_in_context(trajectory: Trajectory, limit: int = FINDINGS_SHOWN) -> list:
    """The first `limit` values found, each at its first occurrence with up to CONTEXT_CHARS
    characters either side, read from the stored strings it points at, and its number of
    occurrences (three queries)."""
    from apps.moderation.models import Finding

    values = (
        Finding.objects.filter(trajectory=trajectory)
        .values("placeholder")
        .annotate(first=Min("pk"), n=Count("pk"))
        .order_by("first")[:limit]
    )
    counts = {row["first"]: row["n"] for row in values}
    findings = list(Finding.objects.filter(pk__in=counts).order_by("pk"))
    positions = {f.position for f in findings if f.position is not None}
    events = {
        position: {"text": text, "original_id": original_id, "cause": cause, "data": data}
        for position, text, original_id, cause, data in Event.objects.filter(
            trajectory=trajectory, position__in=positions
        ).values_list("position", "text", "original_id", "cause", "data")
    }
    own = {
        "title": trajectory.title,
        "feedback_text": trajectory.feedback_text,
        "agent": trajectory.agent,
        "model_name": trajectory.model_name,
        "agent_version": trajectory.agent_version,
        "metadata": trajectory.metadata,
    }
    shown = []
    for finding in findings:
        root = own if finding.position is None else events.get(finding.position, {})
        text = _at_path(root, finding.path)
        where = "trajectory" if finding.position is None else f"step {finding.position + 1}"
        where = f"{where}, {finding.path}"
        if finding.path.startswith("image:"):
            where = f"text read (OCR) in image {finding.path[6:18]}… (see Images)"
        count = counts.get(finding.pk, 1)
        if text is None or finding.end > len(text):
            shown.append(FindingInContext(finding, where, "", finding.preview, "", count))
            continue
        start, end = finding.start, finding.end
        shown.append(
            FindingInContext(
                finding,
                where,
                ("…" if start > CONTEXT_CHARS else "")
                + text[max(0, start - CONTEXT_CHARS) : start],
                text[start:end],
                text[end : end + CONTEXT_CHARS] + ("…" if len(text) > end + CONTEXT_CHARS else ""),
                count,
            )
        )
    return shown


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _at_path(root: Any, path: str) -> str | None:
    """The string a finding's path names: "text", "data.args.command", "data.extras[2]",
    "metadata.x/key" (the key itself). None when the path no longer leads to a string."""
    key_of = path.endswith("/key")
    path = path.removesuffix("/key")
    value: Any = root
    last_key: str | None = None
    for name, index in _STEP.findall(path):
        if name:
            if not isinstance(value, dict) or name not in value:
                return None
            last_key, value = name, value[name]
        else:
            if not isinstance(value, list) or int(index) >= len(value):
                return None
            value = value[int(index)]
    if key_of:
        return last_key
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class ImageForReview:
    """One image of a trajectory on the moderator's page: what OCR found in it, and whether a
    moderator dropped it."""

    sha256: str
    url: str  # the page's image endpoint: moderators get the original even once dropped
    kinds: list[str]  # kinds of what the scan found in its text (OCR)
    ocr_read: bool
    dropped_at: Any
    cleared_at: Any = None

    @property
    def unchecked(self) -> bool:
        """Neither OCR nor a moderator has read it: withheld unless the setting publishes it."""
        return not (self.ocr_read or self.cleared_at or self.dropped_at)

    @property
    def flagged(self) -> bool:
        """OCR found something in it and no moderator cleared or dropped it: withheld."""
        return bool(self.kinds) and not (self.cleared_at or self.dropped_at)


IMAGES_SHOWN = 100


def flagged_images(trajectory_ids: list[int]) -> dict[int, list[str]]:
    """trajectory id -> sha256 of its images that a scan's OCR found something in and that no
    moderator dropped yet (what approving would publish). One query: a drop deletes the
    image's findings, and a rescan does not read a dropped image again."""
    from apps.moderation.models import IMAGE_PATH, Finding

    rows = (
        Finding.objects.filter(trajectory_id__in=trajectory_ids, path__startswith=IMAGE_PATH)
        .values_list("trajectory_id", "path")
        .distinct()
    )
    out: dict[int, list[str]] = {}
    for trajectory_id, path in rows:
        sha = path[len(IMAGE_PATH) :]
        if sha not in out.setdefault(trajectory_id, []):
            out[trajectory_id].append(sha)
    return out


def images_for_review(trajectory: Trajectory, limit: int = IMAGES_SHOWN) -> list[ImageForReview]:
    """The trajectory's images, those with findings first (two queries)."""
    from apps.moderation.models import IMAGE_PATH, Finding
    from apps.trajectories.models import Image

    kinds: dict[str, list[str]] = {}
    paths = Finding.objects.filter(trajectory=trajectory, path__startswith=IMAGE_PATH).values_list(
        "path", "kind"
    )
    for path, kind in paths:
        found = kinds.setdefault(path[len(IMAGE_PATH) :], [])
        if kind not in found:
            found.append(kind)
    images = Image.objects.filter(trajectory_links__trajectory=trajectory).order_by("id")[:limit]
    shown = [
        ImageForReview(
            sha256=image.sha256,
            url=f"/t/{trajectory.share_id}/images/{image.sha256}",
            kinds=kinds.get(image.sha256, []),
            ocr_read=bool(image.ocr_version),
            dropped_at=image.dropped_at,
            cleared_at=image.cleared_at,
        )
        for image in images
    ]
    return sorted(shown, key=lambda shown: (not shown.kinds, shown.dropped_at is not None))


# --- The admin's pages --------------------------------------------------------------------------


def review_item(pk: Any) -> Trajectory | None:
    """The trajectory of a queue item's page (with its owner), or None."""
    return Trajectory.objects.select_related("owner").filter(pk=pk).first()


HISTORY_SHOWN = 30


def review_details(trajectory: Trajectory) -> dict[str, Any]:
    """What a queue item's page shows besides the trajectory: the findings in context and their
    number, the images, the open reports, takedown requests and appeals, the running claim and
    the latest audit entries (the querysets are read when the page is rendered)."""
    from apps.moderation.models import (
        Appeal,
        AuditEntry,
        Claim,
        Finding,
        Report,
        TakedownRequest,
        TakedownState,
    )

    return {
        "findings": findings_in_context(trajectory),
        "images": images_for_review(trajectory),
        "finding_count": Finding.objects.filter(trajectory=trajectory)
        .values("placeholder")
        .distinct()
        .count(),
        "found_count": Finding.objects.filter(trajectory=trajectory).count(),
        "reports": Report.objects.filter(trajectory=trajectory, resolved_at__isnull=True),
        "takedowns": TakedownRequest.objects.filter(
            trajectory=trajectory, state=TakedownState.OPEN
        ),
        "appeals": Appeal.objects.filter(trajectory=trajectory, resolved_at__isnull=True),
        "claim": Claim.objects.select_related("moderator")
        .filter(trajectory=trajectory, expires_at__gt=timezone.now())
        .first(),
        "history": AuditEntry.objects.filter(share_id=trajectory.share_id)[:HISTORY_SHOWN],
    }


def takedown_on(trajectory: Trajectory, request_id: str) -> Any:
    """The takedown request of that id (as posted) on this trajectory, or None."""
    from apps.moderation.models import TakedownRequest

    return (
        TakedownRequest.objects.select_related("trajectory")
        .filter(pk=int(request_id) if request_id.isdigit() else 0, trajectory=trajectory)
        .first()
    )


def review_states(pks: set[int]) -> QuerySet[Trajectory, tuple[int, str, str]]:
    """(pk, share_id, review_state) of these trajectories (the bulk actions name rows that left
    the list meanwhile)."""
    return Trajectory.objects.filter(pk__in=pks).values_list("pk", "share_id", "review_state")


def trajectories_with_open_reports(reports: QuerySet[Any]) -> QuerySet[Trajectory]:
    """The trajectories of these reports that are still open."""
    ids = reports.filter(resolved_at__isnull=True).values("trajectory_id")
    return Trajectory.objects.filter(pk__in=ids)


def finding_kinds(*, limit: int) -> list[str]:
    """The kinds of finding stored, alphabetically (the queue's filter)."""
    from apps.moderation.models import Finding

    kinds = Finding.objects.order_by("kind").values_list("kind", flat=True).distinct()
    return list(kinds[:limit])


def shared_agents(*, limit: int) -> list[str]:
    """The agents named by stored trajectories, alphabetically (the queue's filter)."""
    agents = (
        Trajectory.objects.exclude(agent="")
        .order_by("agent")
        .values_list("agent", flat=True)
        .distinct()
    )
    return list(agents[:limit])
