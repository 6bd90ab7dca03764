"""Visibility lives here and only here: every public surface starts from `public()`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Q

if TYPE_CHECKING:
    from apps.accounts.models import User


class TrajectoryQuerySet(models.QuerySet):
    def public(self) -> TrajectoryQuerySet:
        """What anyone may see: shared publicly by its owner AND approved by review."""
        return self.filter(visibility="public", review_state="approved")

    def visible_to(self, user: User | None) -> TrajectoryQuerySet:
        """Public ones, plus the user's own; moderators and staff see everything."""
        if user is None or not user.is_authenticated:
            return self.public()
        if user.is_moderator:
            return self.all()
        return self.filter(Q(visibility="public", review_state="approved") | Q(owner=user))

    def owned_by(self, user: User) -> TrajectoryQuerySet:
        return self.filter(owner=user)
