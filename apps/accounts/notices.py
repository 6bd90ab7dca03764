"""The notice service: tells a contributor that something happened to what they shared.

Moderation (held, rejected, hidden, reported, takedown), releases (release_announced) and the
data export (export_ready) call `notice_send`. A notice to an account is stored (the dashboard
lists it) and emailed; one to an anonymous sharer's contact email is only emailed, with the link
that manages the share. Every email carries a one-click unsubscribe for its kind.

The trajectory is read by attribute only (share_id, owner, contact_email, and `shown_title`, its
title from the redacted view, by which every notice names it): accounts import nothing of the
other apps. Addresses never reach logs; opt-outs keep only an HMAC of them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import Notice, NoticeKind, NoticeOptOut, User
from apps.core import signing
from apps.core.queueing import enqueue

logger = logging.getLogger(__name__)

UNSUBSCRIBE_SALT = "trajhub.notices.unsubscribe"
ADDRESS_PURPOSE = "trajhub.notices.address"


def address_hash(email: str) -> str:
    """An HMAC of a normalised address: recognises an opt-out without keeping the address."""
    # sha1: the opt-outs stored before issue 21 hold sha1 digests.
    return signing.digest(ADDRESS_PURPOSE, signing.canonical_email(email), algorithm="sha1")


def unsubscribe_token(*, email: str, kind: str) -> str:
    """A signed token naming (the HMAC of) an address and a kind; it never expires, as the
    List-Unsubscribe header of an old email must keep working."""
    return signing.link_token(UNSUBSCRIBE_SALT, {"a": address_hash(email), "k": kind})


def unsubscribe_url(*, email: str, kind: str) -> str:
    token = unsubscribe_token(email=email, kind=kind)
    return settings.SITE_URL + reverse("notice-unsubscribe", args=[token])


def unsubscribe_read(token: str) -> tuple[str, str] | None:
    """(address hash, kind) of a valid token, else None."""
    try:
        data = signing.link_payload(UNSUBSCRIBE_SALT, token, expect=dict)
    except signing.BadLink:
        return None
    digest, kind = data.get("a"), data.get("k")
    if not isinstance(digest, str) or kind not in NoticeKind.values:
        return None
    return digest, kind


def notice_unsubscribe(*, token: str) -> str | None:
    """Stop emails of one kind to the address in `token`. Returns the kind, or None for a bad
    token. Safe to repeat."""
    read = unsubscribe_read(token)
    if read is None:
        return None
    digest, kind = read
    NoticeOptOut.objects.get_or_create(address_hash=digest, kind=kind)
    return kind


def is_unsubscribed(*, email: str, kind: str) -> bool:
    return NoticeOptOut.objects.filter(address_hash=address_hash(email), kind=kind).exists()


def _recipient(*, trajectory: Any, user: User | None, email: str) -> tuple[User | None, str]:
    if user is not None:
        return user, ""
    if email:
        return None, email
    if trajectory is not None:
        owner = getattr(trajectory, "owner", None)
        if owner is not None:
            return owner, ""
        return None, getattr(trajectory, "contact_email", "") or ""
    return None, ""


def notice_send(
    *,
    kind: str,
    trajectory: Any = None,
    user: User | None = None,
    email: str = "",
    reason: str = "",
    link: str = "",
    titles: Sequence[str] = (),
) -> None:
    """Tell a contributor something happened. Recipient: `user`, else `email`, else the
    trajectory's owner, else its anonymous contact email (never shown anywhere). Stores a Notice
    row for users (the dashboard lists them), and emails it (after commit, through a Celery task)
    unless the recipient unsubscribed from that kind. `reason` is the moderator's/reporter's words,
    `link` a page the recipient can act on (an appeal form, a release opt-out list). A notice
    about one trajectory names it by its redacted title (`trajectory.shown_title`); one about
    several (a release) lists `titles`, which the caller takes from the redacted view too."""
    if kind not in NoticeKind.values:
        raise ValueError(f"unknown notice kind {kind!r}")
    recipient, address = _recipient(trajectory=trajectory, user=user, email=email)
    if recipient is None and not address:
        return  # an anonymous share without a contact email: nobody to tell
    share_id = getattr(trajectory, "share_id", "") if trajectory is not None else ""
    title = getattr(trajectory, "shown_title", "") if trajectory is not None else ""
    context = {
        "kind": kind,
        "share_id": share_id,
        # Cut after redaction (a cut before it could keep part of a secret).
        "title": _cut(title, TITLE_CHARS),
        "titles": [_cut(shown, TITLE_CHARS) for shown in titles[:TITLES_LISTED]],
        "more_titles": max(0, len(titles) - TITLES_LISTED),
        "count": len(titles),
        "trajectory_url": f"{settings.SITE_URL}/t/{share_id}/" if share_id else "",
        # An anonymous sharer manages the share with its link and password.
        "manage_url": f"{settings.SITE_URL}/t/{share_id}/unlock" if share_id else "",
        "anonymous": recipient is None,
        "reason": reason,
        "link": link,
        "site_name": settings.SITE_NAME,
        "site_url": settings.SITE_URL,
        "dashboard_url": f"{settings.SITE_URL}/me/",
        "contact_email": getattr(settings, "TRAJHUB_CONTACT_EMAIL", ""),
    }
    subject = " ".join(render_to_string(f"accounts/notices/{kind}_subject.txt", context).split())[
        :200
    ]
    body = render_to_string(f"accounts/notices/{kind}.txt", context)
    with transaction.atomic():
        notice = Notice.objects.create(
            user=recipient,
            email=address,
            kind=kind,
            share_id=share_id,
            subject=subject,
            body=body,
            reason=reason,
            link=link[:500],
        )
    transaction.on_commit(lambda: _queue_email(notice.pk))


# How much of a title a notice prints, and how many titles one notice lists.
TITLE_CHARS = 80
TITLES_LISTED = 20


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _queue_email(notice_id: int) -> None:
    try:
        enqueue("apps.accounts.tasks.notice_email_send", notice_id)
    except Exception:  # a broker that is down must not break the caller's (committed) request
        logger.exception("could not queue the email of notice %s", notice_id)


def notice_email(*, notice: Notice) -> bool:
    """Send one notice's email (the task calls this). False when there is no address, the
    recipient unsubscribed from the kind, or it went out already. An anonymous address is
    forgotten once sent."""
    if notice.emailed_at is not None:
        return False
    address = notice.user.email if notice.user is not None else notice.email
    sent = False
    if address and not is_unsubscribed(email=address, kind=notice.kind):
        unsubscribe = unsubscribe_url(email=address, kind=notice.kind)
        body = render_to_string(
            "accounts/notices/_footer.txt",
            {
                "body": notice.body,
                "unsubscribe_url": unsubscribe,
                "kind_label": NoticeKind(notice.kind).label.lower(),
                "site_name": settings.SITE_NAME,
            },
        )
        message = EmailMessage(
            subject=notice.subject,
            body=body,
            to=[address],
            headers={
                "List-Unsubscribe": f"<{unsubscribe}>",
                # RFC 8058: mail clients unsubscribe with one POST to the URL, no page to read.
                "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            },
        )
        message.send()
        sent = True
    Notice.objects.filter(pk=notice.pk).update(emailed_at=timezone.now(), email="")
    logger.info("notice %s (%s): email %s", notice.pk, notice.kind, "sent" if sent else "skipped")
    return sent


def notices_answered(*, trajectory: Any, kind: str) -> int:
    """The owner's unread notices of `kind` about this trajectory are answered (marked read):
    a "waiting for a moderator" notice does not stay once the moderator decided."""
    share_id = getattr(trajectory, "share_id", "")
    if not share_id:
        return 0
    return Notice.objects.filter(share_id=share_id, kind=kind, read_at__isnull=True).update(
        read_at=timezone.now()
    )


def notice_mark_read(*, user: User, notice_ids: list[int] | None = None) -> int:
    """Mark the user's notices read (all of them when `notice_ids` is None)."""
    notices = Notice.objects.filter(user=user, read_at__isnull=True)
    if notice_ids is not None:
        notices = notices.filter(pk__in=notice_ids)
    return notices.update(read_at=timezone.now())
