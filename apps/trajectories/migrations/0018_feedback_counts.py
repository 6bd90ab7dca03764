"""The counts lists sort and filter readers' feedback by (Trajectory.correction_count,
first_wrong_count, kept by apps.feedback) with their partial indexes, and FlaggedDecile (where
in a run the first-wrong marks are: ?flagged_at=). feedback's 0003 fills them."""

import importlib

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# SQLite makes the table anew to add a column with a default, and its triggers go with the old
# table: the index-stale trigger of 0008 is made again (as 0009 and 0011 do).
_0008 = importlib.import_module("apps.trajectories.migrations.0008_redaction_index")


def recreate_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(_0008.SQLITE_DROP)
        schema_editor.execute(_0008.SQLITE_TRIGGER)


class Migration(migrations.Migration):

    dependencies = [
        ('trajectories', '0017_outcome'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='FlaggedDecile',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('decile', models.PositiveSmallIntegerField()),
                ('marks', models.PositiveIntegerField()),
            ],
        ),
        migrations.AddField(
            model_name='trajectory',
            name='correction_count',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='trajectory',
            name='first_wrong_count',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name='trajectory',
            index=models.Index(models.OrderBy(models.F('correction_count'), descending=True), models.OrderBy(models.F('id'), descending=True), condition=models.Q(('review_state', 'approved'), ('visibility', 'public')), name='traj_public_corrections'),
        ),
        migrations.AddIndex(
            model_name='trajectory',
            index=models.Index(models.OrderBy(models.F('created_at'), descending=True), models.OrderBy(models.F('id'), descending=True), condition=models.Q(('review_state', 'approved'), ('visibility', 'public'), ('correction_count__gt', 0)), name='traj_public_corrected'),
        ),
        migrations.AddIndex(
            model_name='trajectory',
            index=models.Index(models.OrderBy(models.F('created_at'), descending=True), models.OrderBy(models.F('id'), descending=True), condition=models.Q(('review_state', 'approved'), ('visibility', 'public'), ('first_wrong_count__gt', 0)), name='traj_public_flagged'),
        ),
        migrations.AddField(
            model_name='flaggeddecile',
            name='trajectory',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='trajectories.trajectory'),
        ),
        migrations.AddIndex(
            model_name='flaggeddecile',
            index=models.Index(fields=['decile', 'trajectory'], name='flagged_decile'),
        ),
        migrations.AddConstraint(
            model_name='flaggeddecile',
            constraint=models.UniqueConstraint(fields=('trajectory', 'decile'), name='flagged_decile_once'),
        ),
        migrations.AddConstraint(
            model_name='flaggeddecile',
            constraint=models.CheckConstraint(condition=models.Q(('decile__gte', 0), ('decile__lte', 9)), name='flagged_decile_range'),
        ),
        migrations.RunPython(recreate_trigger, recreate_trigger),
    ]
