"""The redacted view of a trajectory's metadata: its agent, model and version as everyone but
the owner and moderators may see them. Pure Python.

The same rule as the release rows (apps.datasets.services.build): the scan's map, plus the
contributor's own addresses (a contact or account email never leaves the site, even where the
scan allowlisted it). services/redaction_index.py writes the result to the `shown_*` columns
with the index, and filters, facets and the release card read those columns, so that a list
can never be filtered by a secret nor print one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from apps.trajectories.redaction import redactor

CONTACT_PLACEHOLDER = "<EMAIL>"
# Column of the redacted view -> the raw field it is made from.
SHOWN_FIELDS = {
    "shown_agent": "agent",
    "shown_model": "model_name",
    "shown_agent_version": "agent_version",
}
SHOWN_MAX = 300


def contributor_redactions(
    redactions: Mapping[str, str] | None, emails: Iterable[str | None]
) -> dict[str, str]:
    """The map, plus each of the contributor's addresses replaced by CONTACT_PLACEHOLDER."""
    merged = dict(redactions or {})
    for email in emails:
        if email:
            merged.setdefault(email, CONTACT_PLACEHOLDER)
    return merged


def shown_values(
    raw: Mapping[str, str | None],
    redactions: Mapping[str, str] | None,
    emails: Iterable[str | None] = (),
) -> dict[str, str]:
    """{shown column: redacted value} for `raw` ({raw field: value}), cut to SHOWN_MAX after
    redaction (a cut before it could keep part of a secret)."""
    redact = redactor(contributor_redactions(redactions, emails))
    return {
        column: redact(raw.get(field) or "")[:SHOWN_MAX] for column, field in SHOWN_FIELDS.items()
    }
