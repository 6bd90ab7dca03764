"""Costs and token counts recorded as 0 are unknown (outcome.known_amount): the stored ones
become null, so that the API says null and /stats/ leaves them out of its totals, as for rows
stored from now on."""

from django.db import migrations


def null_zero_totals(apps, schema_editor):
    Trajectory = apps.get_model("trajectories", "Trajectory")
    Trajectory.objects.filter(total_cost__lte=0).update(total_cost=None)
    Trajectory.objects.filter(total_tokens=0).update(total_tokens=None)


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0011_image_clearance")]

    operations = [migrations.RunPython(null_zero_totals, migrations.RunPython.noop)]
