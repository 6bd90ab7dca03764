"""The review queue in Django admin, the moderators' workplace.

A moderator account is a staff account (Django admin admits only `is_staff` users) that is a
member of the "moderators" group (created after `migrate` with exactly the permissions the queue
needs; `manage.py grant_moderator <username>` sets both). Moderation → Review queue lists what
waits for a decision (held by the scan or by reports, reported, takedown requests, appeals),
with filters; an item's page shows the findings in context, highlighted, the reports, requests
and appeals, and the decisions: claim, approve, reject with a reason, redact and approve, hide,
dismiss the reports, uphold a rejection, grant or decline a takedown. The same decisions work
in bulk from the list.
Every decision goes through the moderation services (conditional updates, audit entries); every
read through the selectors.

One module per admin: `queue` (the review queue and an item's page, with `filters`),
`trajectories` (the trajectory admin with the decisions and findings), `findings`, `audit`,
`reports`, `takedowns`, `appeals`; `actions` holds the bulk decisions they share.
"""

from apps.moderation.admin import (  # noqa: F401  (importing registers each admin)
    appeals,
    audit,
    findings,
    queue,
    reports,
    takedowns,
    trajectories,
)
