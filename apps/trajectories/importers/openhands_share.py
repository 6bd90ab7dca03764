"""The OpenHands share payload (its feedback button): {version, email, polarity, feedback,
permissions, trajectory, token?} (shared/OPENHANDS.md 1.2, 1.6).

Before v0.12.1 the trajectory is the raw websocket list: real events mixed with {token, status},
the `initialize` message (its model and agent are kept, it is not an event), {error, message}
and third-party pseudo-items ({"user": ...}, {"step": 3}); all non-events are skipped. The
`token` is never kept: not from the envelope, not from any event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from apps.trajectories.importers import openhands_v0
from apps.trajectories.importers.base import (
    CanonicalEvent,
    CanonicalTrajectory,
    FormatError,
    json_type,
    text_of,
)

NAME = "openhands_share"
LABEL = "OpenHands share payload"

ENVELOPE_KEYS = {"version", "email", "polarity", "feedback", "permissions", "token"}
POLARITIES = {"positive", "negative"}
# What the very first OpenHands versions sent when the form had no email field.
NO_EMAIL = {"", "NOT_PROVIDED"}


def detect(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and "trajectory" in doc
        and (doc["trajectory"] is None or isinstance(doc["trajectory"], list))
        and bool(ENVELOPE_KEYS & doc.keys())
    )


def convert(doc: Any) -> CanonicalTrajectory:
    if not isinstance(doc, dict):
        raise FormatError(f"expected the share payload object, got {json_type(doc)}")
    items = doc.get("trajectory")
    if items is None or items == []:
        raise FormatError("the trajectory is empty", "trajectory")
    if not isinstance(items, list):
        raise FormatError(f"'trajectory' is {json_type(items)}, expected an array", "trajectory")
    trajectory = openhands_v0.build_trajectory(
        items, source_format=NAME, skip_non_events=True, strip_keys=("token",)
    )
    read_envelope(trajectory, doc)
    return trajectory


def convert_stream(
    envelope: dict[str, Any], items: Iterable[Any]
) -> tuple[CanonicalTrajectory, Iterator[CanonicalEvent]]:
    """convert() of a payload read as a stream (importers.stream): `envelope` is every field
    but the trajectory, `items` its entries one at a time (a non-empty array). The trajectory
    has the envelope's fields at once; its events come one at a time (stream_trajectory)."""
    trajectory, events = openhands_v0.stream_trajectory(
        items, source_format=NAME, skip_non_events=True, strip_keys=("token",)
    )
    read_envelope(trajectory, envelope)
    return trajectory, events


def read_envelope(trajectory: CanonicalTrajectory, doc: dict[str, Any]) -> None:
    """The envelope's polarity, feedback, email, permissions and version, onto `trajectory`."""
    polarity = text_of(doc.get("polarity")).strip().lower()
    feedback = text_of(doc.get("feedback")).strip()
    if polarity not in POLARITIES and feedback.lower() in POLARITIES:
        polarity = feedback.lower()
    trajectory.polarity = polarity if polarity in POLARITIES else ""
    # `feedback` duplicates the polarity; anything else in it is the sender's own words.
    if feedback and feedback.lower() not in POLARITIES:
        trajectory.feedback_text = feedback
    email = text_of(doc.get("email")).strip()
    trajectory.email = "" if email in NO_EMAIL else email
    trajectory.permissions = (
        "public" if text_of(doc.get("permissions")).strip().lower() == "public" else "private"
    )
    version = text_of(doc.get("version"))
    if version:
        trajectory.metadata["feedback_version"] = version
