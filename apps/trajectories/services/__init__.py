"""Every write to trajectories: ingest (parse, clean, store, dedup), update, delete, passwords.

Views, API views, commands and tasks call these; nothing else writes Trajectory, Event, Image.

Ingest stores each trajectory of an upload in its own transaction, so a file with many
trajectories stores each valid one and reports each invalid one, and nothing of a failed one
stays behind (files written to storage for it are removed again).

One module per concern, in the order an upload goes through them: limits (what may be shared),
events (each event cleaned of NULs and embedded images, serialised and fingerprinted in one
pass, then inserted), dedup (which stored trajectory a share continues), storage (raw copies,
images), search, review (back to the scan, first published), notify (signals after commit),
ingest (all of it, per trajectory); then edits (update, delete), passwords, reimport and the
redaction index. Callers import from here.

The services never import the tasks that call them: what must run later (the scan, a redaction
index rebuild) is announced by a signal after the commit, and the receivers queue the task.
"""

from apps.trajectories.importers import FormatError
from apps.trajectories.services.edits import UPDATABLE, trajectory_delete, trajectory_update
from apps.trajectories.services.errors import InvalidShare, SharingRefused
from apps.trajectories.services.events import EVENT_BATCH, IMAGE_REF_PREFIX, NUL_REPLACEMENT
from apps.trajectories.services.ingest import (
    IngestResult,
    ShareOptions,
    StoredTrajectory,
    trajectory_ingest,
)
from apps.trajectories.services.limits import (
    ANON_EMAIL_PLACEHOLDERS,
    ingest_limits,
    normalize_email,
)
from apps.trajectories.services.notify import announce_public_change
from apps.trajectories.services.outcomes import (
    OWNER_CHOICES,
    outcome_columns,
    trajectory_outcome_set,
)
from apps.trajectories.services.passwords import (
    PASSWORD_SCHEME,
    hash_deletion_password,
    new_deletion_password,
    trajectory_by_password,
    trajectory_check_password,
)
from apps.trajectories.services.redaction_index import (
    redaction_index_sweep,
    trajectory_redaction_index_refresh,
)
from apps.trajectories.services.search import (
    SEARCH_TEXT_CHARS,
    search_built,
    trajectory_search_refresh,
)
from apps.trajectories.services.storage import (
    OrphanSweepResult,
    image_read,
    raw_read,
    storage_orphan_sweep,
)

__all__ = [
    "ANON_EMAIL_PLACEHOLDERS",
    "EVENT_BATCH",
    "IMAGE_REF_PREFIX",
    "NUL_REPLACEMENT",
    "OWNER_CHOICES",
    "OrphanSweepResult",
    "PASSWORD_SCHEME",
    "SEARCH_TEXT_CHARS",
    "UPDATABLE",
    "FormatError",
    "IngestResult",
    "InvalidShare",
    "ShareOptions",
    "SharingRefused",
    "StoredTrajectory",
    "announce_public_change",
    "hash_deletion_password",
    "image_read",
    "ingest_limits",
    "new_deletion_password",
    "normalize_email",
    "outcome_columns",
    "raw_read",
    "trajectory_by_password",
    "storage_orphan_sweep",
    "trajectory_check_password",
    "trajectory_delete",
    "trajectory_ingest",
    "redaction_index_sweep",
    "trajectory_redaction_index_refresh",
    "trajectory_search_refresh",
    "search_built",
    "trajectory_outcome_set",
    "trajectory_update",
]
