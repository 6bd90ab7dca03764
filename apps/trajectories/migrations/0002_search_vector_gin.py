"""GIN index on Trajectory.search_vector for full-text search (PostgreSQL only).

SQLite has no tsvector: search falls back to icontains there, so the index is skipped.
"""

from django.db import migrations

INDEX = "traj_search_vector_gin"


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {INDEX} ON trajectories_trajectory USING GIN (search_vector)"
    )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0001_initial")]

    operations = [migrations.RunPython(create_index, drop_index, elidable=False)]
