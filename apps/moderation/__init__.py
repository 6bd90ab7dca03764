"""Moderation: what stands between a stored trajectory and the public.

Owns the scanner engine (`scanning/`, pure Python), the scan service that writes the findings
and the redaction map the redacted view is made from, the review state machine
(`services/decisions.py`: the scan's and the moderators' decisions, resolving reports and
appeals), moderators' redactions and image drops, readers' reports, takedown requests and
appeals (with their rate limits, signed links and mails), claims, the audit log, the review
queue in Django admin (`admin/`), the public report / takedown / appeal pages and API, and
the scan tasks and sweeps.

May import: core, accounts and trajectories (it listens to trajectories' signals; trajectories
never import moderation). Inside the app, imports run one way: tasks → services → selectors,
models; the reports, takedowns, appeals and the scan → decisions, never the reverse.
"""
