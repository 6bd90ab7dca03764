"""Reads behind accounts' pages: notices, tokens, the user behind a profile or an avatar, and
the GitHub handle of an account. Nothing of the other apps: the reads of trajectories behind
the dashboard and the public profile are apps.owners.selectors."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.accounts.models import ApiToken, Notice, User


def notices_for(user: User) -> QuerySet[Notice]:
    return Notice.objects.filter(user=user).order_by("-created_at", "-id")


def unread_notice_count(user: User) -> int:
    return Notice.objects.filter(user=user, read_at__isnull=True).count()


def tokens_for(user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")


def profile_user(username: str) -> User | None:
    return User.objects.filter(username=username, is_active=True).first()


def github_login(user: User) -> str:
    """The GitHub handle of a linked GitHub account ("" when none)."""
    from allauth.socialaccount.models import SocialAccount

    account = SocialAccount.objects.filter(user=user, provider="github").only("extra_data").first()
    login = (account.extra_data or {}).get("login", "") if account is not None else ""
    return login if isinstance(login, str) else ""
