"""The human signal on steps (issue 23): readers' and owners' ratings (good / bad), "the first
wrong step" marks, corrections (a message, or the step's action edited in place, shown as a
diff against the redacted original) and comments, with their reports and the owner's controls
(reject a correction, switch feedback off for a trajectory).

Owns the feedback models, their anchoring to a step (position plus a fingerprint of its
content: `anchors`), the writes (`services`: scanned with moderation's scanner, redacted with
the trajectory's map, rate limited, held for a moderator when they must be), the reads
(`selectors`: visibility comes from the trajectory's `visible_to()` and the viewer's access,
then from the feedback's own state), the API (/api/v1/trajectories/<id>/steps/<n>/feedback),
the per-step page and the viewer's summary, the review of held and reported feedback in
Django admin (`moderating`: hold, show, reject, delete, report), its entries in the site's one
audit log (`audit`: moderation's AuditEntry, ids only, never feedback text), what readers'
majority says for the layers above (`consensus`: steps rated wrong, the first wrong step,
accepted corrections), and what lists and stats read of it (`counts`: the corrections and
first-wrong marks kept on each trajectory, with the marks' deciles, recounted by every write).

It sits above moderation and owners and below datasets (releases read it later). May import:
core, accounts, trajectories, moderation, owners; never datasets, learn or stats.
"""
