"""Reads behind the owner's pages: the dashboard's own trajectories, a profile's public ones,
the account's data exports. (Notices, tokens and the user behind a profile: accounts.selectors.)

The trajectory reads start from the trajectory selectors (owned_list, public_list): visibility
stays where it lives.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from apps.accounts.models import DataExport, User
from apps.trajectories.models import ReviewState, Trajectory, Visibility
from apps.trajectories.selectors import site as site_selectors

# The dashboard's orderings: public name -> (label, model fields; the tie-breaker keeps pages stable).
DASHBOARD_ORDERINGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "-created": ("Newest first", ("-created_at", "-id")),
    "created": ("Oldest first", ("created_at", "id")),
    "-size": ("Largest first", ("-num_bytes", "-id")),
    "size": ("Smallest first", ("num_bytes", "id")),
    "-events": ("Most events", ("-num_events", "-id")),
    "-findings": ("Most findings", ("-num_findings", "-id")),
    "title": ("Title A–Z", ("title", "id")),
}
DASHBOARD_FIELDS = (*site_selectors.LIST_FIELDS, "num_bytes", "license", "owner_id")


@dataclass(frozen=True)
class DashboardFilter:
    """What the dashboard's filter form asks for (every value already checked)."""

    visibility: str = ""
    review_state: str = ""
    q: str = ""
    ordering: str = "-created"

    @classmethod
    def from_query(cls, query: dict[str, str]) -> DashboardFilter:
        visibility = query.get("visibility", "")
        review_state = query.get("review_state", "")
        ordering = query.get("ordering", "-created")
        return cls(
            visibility=visibility if visibility in Visibility.values else "",
            review_state=review_state if review_state in ReviewState.values else "",
            q=query.get("q", "").strip()[:200],
            ordering=ordering if ordering in DASHBOARD_ORDERINGS else "-created",
        )


def dashboard_trajectories(user: User, flt: DashboardFilter) -> QuerySet[Trajectory]:
    """The user's own trajectories in every state, with the number of scan findings of each."""
    queryset = (
        site_selectors.owned_list(user)
        .only(*DASHBOARD_FIELDS)
        .annotate(num_findings=Count("findings"))
    )
    if flt.visibility:
        queryset = queryset.filter(visibility=flt.visibility)
    if flt.review_state:
        queryset = queryset.filter(review_state=flt.review_state)
    if flt.q:
        queryset = queryset.filter(Q(title__icontains=flt.q) | Q(feedback_text__icontains=flt.q))
    return queryset.order_by(*DASHBOARD_ORDERINGS[flt.ordering][1])


def owned_by_share_ids(user: User, share_ids: list[str]) -> QuerySet[Trajectory]:
    """Those of `share_ids` that the user owns (others are silently not there)."""
    return site_selectors.owned_list(user).filter(share_id__in=share_ids)


def owned_one(user: User, share_id: str) -> Trajectory | None:
    return site_selectors.owned_list(user).filter(share_id=share_id).first()


def profile_trajectories(user: User) -> QuerySet[Trajectory]:
    """A user's trajectories that anyone may see: public() only."""
    return site_selectors.public_list().filter(owner=user)


def exports_for(user: User) -> QuerySet[DataExport]:
    return DataExport.objects.filter(user=user).order_by("-created_at", "-id")


def owned_count(user: User) -> int:
    return site_selectors.owned_list(user).count()
