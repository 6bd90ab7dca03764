"""Moderation writes, one module per job. Callers import the module they need.

- `scan`: the scan of one trajectory (reads with `findings`, numbers with `placeholders`).
- `decisions`: the one review state machine: the scan's and the moderators' decisions, holding
  after reports, resolving reports and appeals. Everything below calls it; it calls none of them.
- `redact`: redact and approve, drop an image (then rescan, then decide).
- `sweeps`: the periodic scans (lost on-commit scans, rescans under newer rules).
- `reports`, `takedowns`, `appeals`: what people outside moderation send; `limits` (rate limits,
  text length), `links` (signed links), `mail` (the takedown mails, queued after commit).

Services never import tasks: tasks import services (the takedown mail task is handed to `mail`
by ModerationConfig.ready()).
"""
