"""Visibility lives here and only here: every public surface starts from `public()`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Exists, OuterRef, Q

if TYPE_CHECKING:
    from apps.accounts.models import User


class TrajectoryQuerySet(models.QuerySet):
    def public(self) -> TrajectoryQuerySet:
        """What anyone may see: shared publicly by its owner AND approved by review."""
        return self.filter(visibility="public", review_state="approved")

    def listed(self) -> TrajectoryQuerySet:
        """What lists show (browse, search, the feed, the API list, the sitemap): `public()`, with
        only the longest public member of each chain of continuations (a share whose events
        extend an earlier anonymous share of the same email that its sender could not prove to
        be theirs: services/dedup.py). Ties go to the newest. Chain members stay public on their
        own pages; lists just do not repeat one session."""
        # exclude(chain_key=""): says what the partial index traj_public_chain covers.
        longer = (
            self.model.objects.public()
            .filter(
                Q(num_events__gt=OuterRef("num_events"))
                | Q(num_events=OuterRef("num_events"), id__gt=OuterRef("id")),
                chain_key=OuterRef("chain_key"),
            )
            .exclude(chain_key="")
        )
        return self.public().filter(Q(chain_key="") | ~Exists(longer))

    def ever_shown(self) -> TrajectoryQuerySet:
        """The complement of `never_shown()`: in `public()` now or once."""
        return self.filter(
            Q(published_at__isnull=False) | Q(visibility="public", review_state="approved")
        )

    def never_shown(self) -> TrajectoryQuerySet:
        """Trajectories nobody but their holder can have seen: not in `public()`, and never were
        (published_at is set the first time one enters it). Knowing their events is a proof."""
        return self.filter(published_at__isnull=True).exclude(
            visibility="public", review_state="approved"
        )

    def visible_to(self, user: User | None) -> TrajectoryQuerySet:
        """Public ones, plus the user's own; moderators and staff see everything."""
        if user is None or not user.is_authenticated:
            return self.public()
        if user.is_moderator:
            return self.all()
        return self.filter(Q(visibility="public", review_state="approved") | Q(owner=user))

    def owned_by(self, user: User) -> TrajectoryQuerySet:
        return self.filter(owner=user)
