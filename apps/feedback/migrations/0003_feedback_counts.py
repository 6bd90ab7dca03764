"""Fill the counts that trajectories' 0018_feedback_counts added from the feedback stored
before (what counts.trajectory_counts_recount computes, with the models as they are at this
migration); `manage.py recount_feedback` does the same at any time."""

from collections import Counter

from django.db import migrations


def recount(apps, schema_editor) -> None:
    Trajectory = apps.get_model("trajectories", "Trajectory")
    FlaggedDecile = apps.get_model("trajectories", "FlaggedDecile")
    FirstWrongMark = apps.get_model("feedback", "FirstWrongMark")
    StepNote = apps.get_model("feedback", "StepNote")
    FeedbackSwitch = apps.get_model("feedback", "FeedbackSwitch")
    off = set(FeedbackSwitch.objects.values_list("trajectory_id", flat=True))
    corrections = Counter(
        StepNote.objects.filter(
            kind="correction", state="shown", owner_rejected_at__isnull=True, outdated=False
        )
        .exclude(trajectory_id__in=off)
        .values_list("trajectory_id", flat=True)
    )
    marks: dict[int, list[int]] = {}
    for trajectory_id, position in (
        FirstWrongMark.objects.filter(outdated=False)
        .exclude(trajectory_id__in=off)
        .values_list("trajectory_id", "position")
    ):
        marks.setdefault(trajectory_id, []).append(position)
    steps = dict(
        Trajectory.objects.filter(pk__in={*corrections, *marks}).values_list("pk", "num_events")
    )
    for pk, num_events in steps.items():
        positions = marks.get(pk, [])
        Trajectory.objects.filter(pk=pk).update(
            correction_count=corrections.get(pk, 0), first_wrong_count=len(positions)
        )
        deciles = Counter(
            max(0, min(9, position * 10 // num_events)) if num_events > 0 else 0
            for position in positions
        )
        FlaggedDecile.objects.bulk_create(
            FlaggedDecile(trajectory_id=pk, decile=decile, marks=n)
            for decile, n in sorted(deciles.items())
        )


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0002_feedback_licence"),
        ("trajectories", "0018_feedback_counts"),
    ]

    operations = [migrations.RunPython(recount, migrations.RunPython.noop)]
