"""The takedown requester's mails: the confirmation link and the outcome, sent by the
`takedown_email` task once the request's transaction commits.

Services never import tasks (tasks import services): the mail is queued by the task's name
(apps/core/queueing.py).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from apps.core import queueing
from apps.moderation.models import TakedownRequest, TakedownState
from apps.moderation.services.links import takedown_confirm_url

logger = logging.getLogger(__name__)

MAIL_TASK = "apps.moderation.tasks.takedown_email"


def takedown_mail_after_commit(request_id: int, what: str) -> None:
    """Queue the mail once the transaction commits (never for a request rolled back)."""

    def queue() -> None:
        try:
            queueing.enqueue(MAIL_TASK, request_id, what)
        except Exception:  # a broker that is down must not break the committed request
            logger.exception(
                "could not queue the %s email of takedown request %s", what, request_id
            )

    transaction.on_commit(queue)


def takedown_mail(*, request_id: int, what: str) -> bool:
    """Send the confirmation link ("confirm") or the outcome ("outcome") to the requester; the
    address is erased once the outcome is sent. The task calls this."""
    from django.core.mail import EmailMessage
    from django.template.loader import render_to_string

    request = TakedownRequest.objects.select_related("trajectory").filter(pk=request_id).first()
    if request is None or not request.email:
        return False
    context = {
        "request": request,
        "share_id": request.trajectory.share_id,
        # The requester is not the owner: the title from the redacted view, nothing raw.
        "title": request.trajectory.shown_title,
        "site_name": settings.SITE_NAME,
        "confirm_url": takedown_confirm_url(request),
        "granted": request.state == TakedownState.GRANTED,
        "note": request.decision_note,
    }
    template = "moderation/emails/takedown_" + ("confirm" if what == "confirm" else "outcome")
    subject = " ".join(render_to_string(f"{template}_subject.txt", context).split())[:200]
    EmailMessage(
        subject=subject, body=render_to_string(f"{template}.txt", context), to=[request.email]
    ).send()
    if what == "outcome":
        TakedownRequest.objects.filter(pk=request.pk).update(email="")
    logger.info("takedown request %s: %s email sent", request.pk, what)
    return True
