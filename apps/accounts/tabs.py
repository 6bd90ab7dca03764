"""The tab bar of a signed-in user's own pages ("Your account"): identity's frame, with the
tabs of the apps above registered from their AppConfig.ready() (owners: trajectories, claims,
export, profile, deletion; datasets: the next release), so that accounts names none of them.

A page shows the bar with `{% load account_tabs %}{% account_tabs "Heading" %}`; the tab whose
key is the page's `tab` (a context variable, or the tag's `tab=`) is marked current.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tab:
    key: str  # what a page sets `tab` to, to be marked current
    label: str
    url_name: str
    order: int  # left to right
    with_username: bool = False  # the URL takes the signed-in user's username
    badge: str = ""  # a context variable whose value, when set, is shown as a badge


_TABS: dict[str, Tab] = {}


def register_tab(tab: Tab) -> None:
    """Add (or replace, by key) a tab of the bar."""
    _TABS[tab.key] = tab


def account_tabs() -> list[Tab]:
    return sorted(_TABS.values(), key=lambda tab: tab.order)
