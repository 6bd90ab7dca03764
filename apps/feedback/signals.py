"""Signals of the step feedback app, for the apps above it (apps.datasets: a release holding
feedback that was deleted, or may no longer be released, is superseded)."""

from django.dispatch import Signal

# Sent once after the commit of any transaction that changed step feedback on these
# trajectories (a give, an edit, a deletion, a moderator's decision, a report that held a note,
# the owner's rejection or switch, a re-anchoring, a cascade from a deleted account), with
# `trajectory_ids`: a sorted list. Nothing is sent when the transaction rolls back.
feedback_changed = Signal()
