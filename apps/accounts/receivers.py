"""Reactions to allauth's signals, connected in AccountsConfig.ready()."""

from __future__ import annotations

from typing import Any

from django.db import transaction


def github_signed_in(sender: Any, request: Any = None, user: Any = None, **kwargs: Any) -> None:
    """A GitHub sign-in (or a GitHub account connected): fetch the avatar once, after commit."""
    sociallogin = kwargs.get("sociallogin")
    account = getattr(sociallogin, "account", None)
    user = user if user is not None else getattr(sociallogin, "user", None)
    if account is None or account.provider != "github" or user is None or user.avatar_path:
        return
    url = (account.extra_data or {}).get("avatar_url") or ""
    if not isinstance(url, str) or not url:
        return
    from apps.accounts.tasks import avatar_fetch_task

    user_id = user.pk
    transaction.on_commit(lambda: avatar_fetch_task.delay(user_id, url))


def site_from_settings(sender, **kwargs) -> None:
    """After migrate: the Sites framework's one row names this site (allauth's mails greet
    "Hello from {site name}!" and link to its domain), not "example.com"."""
    from urllib.parse import urlsplit

    from django.conf import settings
    from django.contrib.sites.models import Site
    from django.db import DatabaseError

    domain = urlsplit(settings.SITE_URL).netloc or "localhost"
    try:
        Site.objects.update_or_create(
            pk=settings.SITE_ID, defaults={"domain": domain[:100], "name": settings.SITE_NAME}
        )
    except DatabaseError:  # the sites table is not there yet; a later post_migrate fills it
        return
    Site.objects.clear_cache()
