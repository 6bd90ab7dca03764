from django.db import migrations, models


def occurrences_out_of_line(apps, schema_editor):
    """PostgreSQL: the occurrences uncompressed and out of line, as the postings (0014), so
    that find reads the slices of the words it matched without reading the rest."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE trajectories_findindex ALTER COLUMN occurrences SET STORAGE EXTERNAL"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("trajectories", "0019_search_sections"),
    ]

    operations = [
        migrations.AddField(
            model_name="findindex",
            name="version",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="findindex",
            name="step_words",
            field=models.BinaryField(default=b""),
        ),
        migrations.AddField(
            model_name="findindex",
            name="step_types",
            field=models.BinaryField(default=b""),
        ),
        migrations.AddField(
            model_name="findindex",
            name="separators",
            field=models.JSONField(default=list),
        ),
        migrations.AddField(
            model_name="findindex",
            name="occurrence_offsets",
            field=models.BinaryField(default=b""),
        ),
        migrations.AddField(
            model_name="findindex",
            name="occurrences",
            field=models.BinaryField(default=b""),
        ),
        migrations.RunPython(occurrences_out_of_line, migrations.RunPython.noop),
    ]
