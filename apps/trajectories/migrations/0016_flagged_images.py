"""Each trajectory's images in which OCR found something and no moderator has cleared or
dropped (Trajectory.flagged_images): withheld on the site as they already were in releases, one
rule for both (apps/trajectories/image_rule.py). Stored trajectories get their list."""

import importlib
from collections import defaultdict

from django.db import migrations, models

# SQLite makes the table anew to add a column with a callable default, and its triggers go with
# the old table: the index-stale trigger of 0008 is made again (as 0009 and 0011 do).
_0008 = importlib.import_module("apps.trajectories.migrations.0008_redaction_index")


def recreate_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(_0008.SQLITE_DROP)
        schema_editor.execute(_0008.SQLITE_TRIGGER)


def fill_flagged(apps, schema_editor):
    Trajectory = apps.get_model("trajectories", "Trajectory")
    TrajectoryImage = apps.get_model("trajectories", "TrajectoryImage")
    flagged: dict[int, set[str]] = defaultdict(set)
    links = (
        TrajectoryImage.objects.exclude(image__ocr_version="")
        .filter(
            image__ocr_findings__gt=0,
            image__cleared_at__isnull=True,
            image__dropped_at__isnull=True,
        )
        .values_list("trajectory_id", "image__sha256")
    )
    for trajectory_id, sha in links.iterator(chunk_size=5000):
        flagged[trajectory_id].add(sha)
    for trajectory_id, shas in flagged.items():
        Trajectory.objects.filter(pk=trajectory_id).update(flagged_images=sorted(shas))


class Migration(migrations.Migration):
    dependencies = [
        ("trajectories", "0015_compare_steps"),
    ]

    operations = [
        migrations.AddField(
            model_name="trajectory",
            name="flagged_images",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(recreate_trigger, recreate_trigger),
        migrations.RunPython(fill_flagged, migrations.RunPython.noop),
    ]
