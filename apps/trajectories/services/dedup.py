"""Which stored trajectory a new share continues: only one whose submitter the sender proves
to be (DESIGN.md "Share API").

Signed in, the account is the proof: the same session id, or stored events that are a prefix of
the new ones (or the new ones a prefix of them). Anonymously, an email is no proof (anyone can
type it), nor are events anyone could have read. So an anonymous share continues a stored one of
the same email only with a session id the client sent (stored as an HMAC, never shown), or with
an event prefix of a share that was never shown to anyone but its holder. Otherwise it is new;
when its events extend an earlier share of that email it joins that share's chain, and lists
show the longest public member of a chain (TrajectoryQuerySet.listed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import QuerySet

from apps.core import signing
from apps.core.locks import transaction_lock
from apps.trajectories.models import Trajectory
from apps.trajectories.selectors.chains import stored_chain
from apps.trajectories.services.events import PreparedEvents

if TYPE_CHECKING:
    from apps.accounts.models import User


SESSION_SALT = "trajhub.client-session-id"


def session_digest(session_id: str) -> str:
    """What is stored of a client session id: an HMAC under the site's secret key. The id is a
    secret of its submitter (it proves a re-share is theirs), so the database never holds it."""
    if not session_id:
        return ""
    return signing.digest(SESSION_SALT, session_id, algorithm="sha256")


@dataclass
class Match:
    """The stored trajectory a share continues (and how), or the chain it joins."""

    existing: Trajectory | None = None
    how: str = ""  # "session", "extends", "contained"
    chain_of: Trajectory | None = None  # anonymous: extended without proof; a new member


def continued_share(
    *,
    user: User | None,
    email: str,
    session: str,
    prepared: PreparedEvents,
    exclude: list[int],
) -> Match:
    """What a share continues among the submitter's stored trajectories (none of `exclude`),
    found under the submitter's lock, with the row it continues locked for update.

    Call it inside the transaction that stores the share. `session`: the digest of the session
    id that counts as proof (session_digest). No account and no email: nothing to continue.
    """
    scope_qs, scope_key = _scope(user, email)
    if scope_qs is None:
        return Match()
    if exclude:
        scope_qs = scope_qs.exclude(pk__in=exclude)
    # Serialise ingests of one submitter scope (PostgreSQL; SQLite serialises all writes).
    transaction_lock(f"{scope_key}|{session or prepared.head}")
    match = _find_continued(scope_qs, session, prepared, anonymous=user is None)
    if match.existing is not None:
        match.existing = Trajectory.objects.select_for_update().filter(pk=match.existing.pk).first()
        if match.existing is None:  # deleted meanwhile: this share starts afresh
            match.how = ""
    return match


def _scope(user: User | None, email: str) -> tuple[QuerySet[Trajectory] | None, str]:
    if user is not None:
        return Trajectory.objects.filter(owner=user), f"owner:{user.pk}"
    if email:
        return (
            Trajectory.objects.filter(owner__isnull=True, contact_email__iexact=email),
            f"email:{email.lower()}",
        )
    return None, ""


def _find_continued(
    scope_qs: QuerySet[Trajectory], session: str, prepared: PreparedEvents, *, anonymous: bool
) -> Match:
    """What a share continues within its submitter scope. `session` is the digest of the
    session id that counts as proof: any for an account, only a client-sent one anonymously."""
    if not anonymous:
        existing, how = _find_same_session(scope_qs, session, prepared)
        return Match(existing, how)
    if session:
        existing, how = _find_same_session(scope_qs, session, prepared)
        if existing is not None:
            return Match(existing, how)
    # Events prove the submitter only where nobody else can have read them: in a share never
    # shown, and not as the start of one that was (whoever stored it: a copy of a public
    # share's first steps, planted under its sharer's email, must not catch their next share).
    never_shown = scope_qs & Trajectory.objects.never_shown()
    existing, how = _find_same_session(never_shown, "", prepared)
    if existing is not None and not _shown_elsewhere(existing):
        return Match(existing, how)
    extended, how = _find_same_session(scope_qs, "", prepared, extends_only=True)
    return Match(chain_of=extended if how == "extends" else None)


def _shown_elsewhere(trajectory: Trajectory) -> bool:
    """Whether the events of `trajectory` are the start of a trajectory that was shown (and so
    may be known to anyone)."""
    count = trajectory.num_events
    shown = (
        Trajectory.objects.ever_shown()
        .filter(head_fingerprint=trajectory.head_fingerprint, num_events__gte=count)
        .exclude(pk=trajectory.pk)
        .only("id", "num_events", "chain_fingerprint")
    )
    for other in shown.iterator(chunk_size=100):
        if other.num_events == count:
            if other.chain_fingerprint == trajectory.chain_fingerprint:
                return True
        elif count and stored_chain(other, count)[-1] == trajectory.chain_fingerprint:
            return True
    return False


def _find_same_session(
    scope_qs: QuerySet[Trajectory],
    session_id: str,
    prepared: PreparedEvents,
    *,
    extends_only: bool = False,
) -> tuple[Trajectory | None, str]:
    """The stored trajectory this share continues, and how: "session", "extends", "contained"."""
    count = len(prepared.events)
    if session_id:
        match = scope_qs.filter(client_session_id=session_id).order_by("-updated_at").first()
        if match is None:
            return None, ""
        if 0 < match.num_events <= count and (
            prepared.chain[match.num_events - 1] == match.chain_fingerprint
        ):
            return match, "extends"  # a later step of the same session: append the rest
        return match, "session"
    candidates = list(
        scope_qs.filter(head_fingerprint=prepared.head)
        .order_by("-num_events", "-id")
        .only(
            "id",
            "share_id",
            "num_events",
            "head_fingerprint",
            "chain_fingerprint",
            "chain_key",
            "owner_outcome",  # kept by a re-share (ingest's outcome columns)
        )
    )
    for candidate in candidates:  # the longest stored prefix of the new events wins
        if 0 < candidate.num_events <= count and (
            prepared.chain[candidate.num_events - 1] == candidate.chain_fingerprint
        ):
            return candidate, "extends"
    if extends_only:
        return None, ""
    for candidate in candidates:
        if candidate.num_events > count and stored_chain(candidate, count) == prepared.chain:
            return candidate, "contained"
    return None, ""
