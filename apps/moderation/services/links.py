"""The signed links of moderation mails: a takedown request's confirmation link and the appeal
link of a rejection notice (the site's one signed-link module, apps/core/signing.py, each with
its own salt and lifetime).
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from apps.core import signing
from apps.moderation.models import TakedownRequest
from apps.trajectories.models import Trajectory

TAKEDOWN_SALT = "trajhub.moderation.takedown"
APPEAL_SALT = "trajhub.moderation.appeal"


def takedown_token(request: TakedownRequest) -> str:
    return signing.link_token(TAKEDOWN_SALT, request.pk)


def takedown_confirm_url(request: TakedownRequest) -> str:
    return settings.SITE_URL + reverse("takedown-confirm", args=[takedown_token(request)])


def takedown_from_token(token: str) -> TakedownRequest | None:
    """The request a confirmation link names, while the link is valid."""
    try:
        pk = signing.link_payload(
            TAKEDOWN_SALT, token, max_age=settings.TRAJHUB_TAKEDOWN_LINK_SECONDS, expect=int
        )
    except signing.BadLink:
        return None
    return TakedownRequest.objects.select_related("trajectory").filter(pk=pk).first()


def appeal_url(trajectory: Trajectory) -> str:
    """The signed link of a rejection notice: whoever received the notice may appeal."""
    token = signing.link_token(APPEAL_SALT, trajectory.share_id)
    return settings.SITE_URL + reverse("trajectory-appeal", args=[token])


def appeal_trajectory(token: str) -> Trajectory | None:
    try:
        share_id = signing.link_payload(
            APPEAL_SALT, token, max_age=settings.TRAJHUB_APPEAL_LINK_SECONDS, expect=str
        )
    except signing.BadLink:
        return None
    return Trajectory.objects.filter(share_id=share_id).first()
