"""`{% account_tabs "Heading" %}`: the head and tab bar of a signed-in user's own pages, with
the tabs registered in apps.accounts.tabs."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from apps.accounts.tabs import account_tabs as registered

register = template.Library()


@register.inclusion_tag("accounts/_tabs.html", takes_context=True, name="account_tabs")
def account_tabs(
    context: template.Context, heading: str = "", tab: str | None = None
) -> dict[str, Any]:
    current = context.get("tab") if tab is None else tab
    user = context.get("user")
    items = []
    for item in registered():
        args = [user.get_username()] if item.with_username and user is not None else []
        items.append(
            {
                "label": item.label,
                "href": reverse(item.url_name, args=args),
                "current": bool(current) and item.key == current,
                "badge": context.get(item.badge) if item.badge else None,
            }
        )
    # The inclusion's own context: the logout form needs the CSRF token passed on.
    return {"heading": heading, "tabs": items, "csrf_token": context.get("csrf_token")}
