"""What apps above this one add to its pages, without this app importing them (the layers run
one way): each registers a function from its `ready()` that gives the template more context.

- `page_context(request, trajectory)`: the trajectory page (stars: the count and the button);
- `home_context(request)`: the home page (stars: the week's most starred).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest

from apps.trajectories.models import Trajectory

PageContext = Callable[[HttpRequest, Trajectory], dict[str, Any]]
HomeContext = Callable[[HttpRequest], dict[str, Any]]
_PAGE: list[PageContext] = []
_HOME: list[HomeContext] = []


def add_page_context(function: PageContext) -> None:
    if function not in _PAGE:
        _PAGE.append(function)


def add_home_context(function: HomeContext) -> None:
    if function not in _HOME:
        _HOME.append(function)


def page_context(request: HttpRequest, trajectory: Trajectory) -> dict[str, Any]:
    context: dict[str, Any] = {}
    for function in _PAGE:
        context.update(function(request, trajectory))
    return context


def home_context(request: HttpRequest) -> dict[str, Any]:
    context: dict[str, Any] = {}
    for function in _HOME:
        context.update(function(request))
    return context
