"""Template helpers for the public pages: redacted titles and descriptions, the unlock link.

Everything here returns plain strings that the template escapes; none of it marks anything safe.
"""

from __future__ import annotations

import re

from django import template
from django.utils.text import Truncator

from apps.trajectories.redaction import redactor
from apps.trajectories.selectors.redactions import (
    OWN_STRINGS,
    full_redactions,
    own_redactions,
)

register = template.Library()


_TRAJECTORY_PATH = re.compile(r"^/t/([0-9a-f]{64})/")


def _redact(trajectory, text: str) -> str:
    # Cached on the instance: a list page redacts title and feedback of the same row.
    redact = getattr(trajectory, "_site_redact", None)
    if redact is None:
        # The trajectory's own strings only (title, feedback, agent, model): its own entries of
        # the redaction index, not the whole map (selectors/redactions.py).
        redact = redactor(own_redactions(trajectory))
        trajectory._site_redact = redact
    return redact(text or "")


@register.filter
def redacted(value: str, trajectory) -> str:
    """`{{ text|redacted:trajectory }}`: the text with the trajectory's public placeholders.
    The row's own redactions cover its own strings only; any other text gets the whole map."""
    loaded = trajectory.__dict__  # what the row loaded: no deferred field is fetched here
    own = [loaded.get(name) for name in OWN_STRINGS]
    if value and value not in own:
        return redactor(full_redactions(trajectory))(value)
    return _redact(trajectory, value)


@register.filter
def public_title(trajectory) -> str:
    """The redacted title, or a neutral name built from public metadata when there is none."""
    title = _redact(trajectory, trajectory.title).strip()
    if title:
        return title
    agent = _redact(trajectory, trajectory.agent) or "Agent"
    return f"{agent} trajectory {trajectory.share_id[:8]}"


@register.filter
def public_description(trajectory) -> str:
    """One line for link previews and feeds: agent, model, size and the redacted feedback."""
    return describe(trajectory)


def describe(trajectory) -> str:
    parts = []
    if trajectory.agent:
        parts.append(_redact(trajectory, trajectory.agent))
    if trajectory.model_name:
        parts.append(f"model {_redact(trajectory, trajectory.model_name)}")
    steps = trajectory.num_events
    parts.append(f"{steps} event{'s' if steps != 1 else ''}")
    if trajectory.polarity in ("positive", "negative"):
        parts.append(f"rated {trajectory.polarity}")
    line = ", ".join(parts)
    feedback = _redact(trajectory, trajectory.feedback_text).strip()
    if feedback:
        line = f"{line}. “{Truncator(' '.join(feedback.split())).chars(160)}”"
    return f"An AI agent trajectory on TrajHub: {line}."


@register.filter
def unlock_share_id(path: str) -> str:
    """The share id when `path` is a trajectory page (/t/<id>/...), else ""."""
    match = _TRAJECTORY_PATH.match(path or "")
    return match.group(1) if match else ""


@register.filter
def format_label(name: str) -> str:
    """The human name of a source format ("openhands_v0" -> its importer's LABEL)."""
    from apps.trajectories.importers import FORMATS

    module = FORMATS.get(name)
    return getattr(module, "LABEL", name) if module is not None else name


@register.filter
def outcome_title(trajectory) -> str:
    """Where a row's outcome came from, in words ("From its OpenHands evaluation report")."""
    from apps.trajectories.outcome import SOURCE_LABELS

    label = SOURCE_LABELS.get(getattr(trajectory, "outcome_source", ""), "")
    return f"Outcome from {label}" if label else ""


@register.filter
def thousands(value) -> str:
    """12345 -> "12,345" (django.contrib.humanize is not installed for one filter)."""
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


@register.filter
def split_words(value: str) -> list[str]:
    return value.split()


@register.filter
def get_param(query, name: str) -> str:
    """The last value of a query parameter (QueryDict), "" when absent."""
    return query.get(name, "") if query is not None else ""


@register.simple_tag(takes_context=True)
def configured_providers(context) -> list:
    """Social login providers with a client id: a button for an unconfigured one leads nowhere."""
    from allauth.socialaccount.adapter import get_adapter

    request = context.get("request")
    return [
        provider
        for provider in get_adapter().list_providers(request)
        if getattr(provider.app, "client_id", "")
    ]
