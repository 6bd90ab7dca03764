"""The signed links of moderation mails: a takedown request's confirmation link and the appeal
link of a rejection notice (Django's signing, each with its own salt and lifetime).
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.urls import reverse

from apps.moderation.models import TakedownRequest
from apps.trajectories.models import Trajectory

TAKEDOWN_SALT = "trajhub.moderation.takedown"
APPEAL_SALT = "trajhub.moderation.appeal"


def takedown_token(request: TakedownRequest) -> str:
    return signing.dumps(request.pk, salt=TAKEDOWN_SALT)


def takedown_confirm_url(request: TakedownRequest) -> str:
    return settings.SITE_URL + reverse("takedown-confirm", args=[takedown_token(request)])


def takedown_from_token(token: str) -> TakedownRequest | None:
    """The request a confirmation link names, while the link is valid."""
    try:
        pk = signing.loads(
            token, salt=TAKEDOWN_SALT, max_age=settings.TRAJHUB_TAKEDOWN_LINK_SECONDS
        )
    except signing.BadSignature:
        return None
    if not isinstance(pk, int):
        return None
    return TakedownRequest.objects.select_related("trajectory").filter(pk=pk).first()


def appeal_url(trajectory: Trajectory) -> str:
    """The signed link of a rejection notice: whoever received the notice may appeal."""
    token = signing.dumps(trajectory.share_id, salt=APPEAL_SALT)
    return settings.SITE_URL + reverse("trajectory-appeal", args=[token])


def appeal_trajectory(token: str) -> Trajectory | None:
    try:
        share_id = signing.loads(
            token, salt=APPEAL_SALT, max_age=settings.TRAJHUB_APPEAL_LINK_SECONDS
        )
    except signing.BadSignature:
        return None
    if not isinstance(share_id, str):
        return None
    return Trajectory.objects.filter(share_id=share_id).first()
