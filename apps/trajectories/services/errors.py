"""What the services raise when a share or a change cannot be honoured (the API's error handler,
apps.core.api.errors, turns each into a JSON error: TrajectoriesConfig.ready() registers them)."""

from __future__ import annotations

from django.conf import settings

from apps.trajectories.importers import FormatError


class InvalidShare(FormatError):
    """Share options that cannot be honoured (a field's value). Reported like a format error."""


def license_not_agreed() -> InvalidShare:
    """What a trajectory made public without the site's licence agreed is told (a share through
    the API, an owner's edit): the one wording of it."""
    return InvalidShare(
        f"a public trajectory must agree to the site's licence ({settings.TRAJHUB_LICENSE}): "
        "send license_agreed=true",
        "license_agreed",
    )


class SharingRefused(Exception):
    """The caller may not share right now (anonymous sharing off). Over a rate limit, the
    services raise apps.core.ratelimit.RateLimited instead, in the same shape (429)."""

    status_code = 403

    def __init__(self, message: str, where: str = "", retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.retry_after = retry_after  # seconds until the caller may try again, if known
