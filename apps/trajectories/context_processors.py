"""What pages tell staff and moderators about the site itself: here, that OCR is off or missing,
so images are public only once a moderator clears them (or, under the setting, unread)."""

from __future__ import annotations

from django.http import HttpRequest

from apps.trajectories.image_rule import image_rule


def ocr_notice(request: HttpRequest) -> dict:
    """`OCR_OFF` (the image rule in force) for staff (moderators are staff: grant_moderator)
    when OCR does not read images; nothing for anyone else, and nothing when it does. Asks no
    query: `is_moderator` would cost one on every page of every signed-in user."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.is_staff:
        return {}
    rule = image_rule()
    return {} if rule.ocr else {"OCR_OFF": rule}
