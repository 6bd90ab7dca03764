"""The canonical trajectory and everything that gets one in and shows it.

Owns the Trajectory and Event models and the one queryset that owns visibility (`querysets`,
`Trajectory.objects.public()`); the format importers (`importers/`, pure Python: bytes in,
canonical events out) and exporters (`exporters/`); the ingest service and the other writes
(`services/`: ingest, events, storage, dedup, edits, passwords, limits, the redaction index);
the reads (`selectors/`: the viewer, compare, chains, the site's lists and facets); the
rendering of steps (`rendering/`, one presenter per format under `rendering/presenters/`); the
share API and the OpenHands drop-in endpoint (`api/`); the viewer, browse, upload and compare
pages (`views/`); feeds and sitemaps.

May import: core and accounts (identity) only. Moderation listens to its signals
(`trajectory_stored`, ...) instead of being called by it.
"""
