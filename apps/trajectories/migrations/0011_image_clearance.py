"""Images a moderator cleared (Image.cleared_at) and each trajectory's images nobody has read
(Trajectory.unchecked_images): where OCR is off or missing, an image is public only once a
moderator clears it (apps/trajectories/image_rule.py). Stored trajectories get their list: every
linked image that OCR never read and no moderator dropped."""

import importlib
from collections import defaultdict

from django.db import migrations, models

# SQLite makes the table anew to add a column with a default, and its triggers go with the old
# table: the index-stale trigger of 0008 is made again (as 0009 does).
_0008 = importlib.import_module("apps.trajectories.migrations.0008_redaction_index")


def recreate_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(_0008.SQLITE_DROP)
        schema_editor.execute(_0008.SQLITE_TRIGGER)


def fill_unchecked(apps, schema_editor):
    Trajectory = apps.get_model("trajectories", "Trajectory")
    TrajectoryImage = apps.get_model("trajectories", "TrajectoryImage")
    unread: dict[int, set[str]] = defaultdict(set)
    links = TrajectoryImage.objects.filter(
        image__ocr_version="", image__dropped_at__isnull=True
    ).values_list("trajectory_id", "image__sha256")
    for trajectory_id, sha in links.iterator(chunk_size=5000):
        unread[trajectory_id].add(sha)
    for trajectory_id, shas in unread.items():
        Trajectory.objects.filter(pk=trajectory_id).update(unchecked_images=sorted(shas))


class Migration(migrations.Migration):
    dependencies = [
        ("trajectories", "0010_star_count"),
    ]

    operations = [
        migrations.AddField(
            model_name="image",
            name="cleared_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="trajectory",
            name="unchecked_images",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(recreate_trigger, recreate_trigger),
        migrations.RunPython(fill_unchecked, migrations.RunPython.noop),
    ]
