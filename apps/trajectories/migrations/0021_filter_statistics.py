"""Statistics on the expressions the list's ?agent= and ?model= filters compare (PostgreSQL).

The filters match `UPPER(shown_agent)` and `UPPER(shown_model)` (filters.py: iexact), which
the partial indexes traj_public_shown_agent and traj_public_shown_model hold. ANALYZE keeps no
statistics on an expression of a partial index, so PostgreSQL guessed 0.5 % of the rows for
any value: 487 where an agent had 20,000. A search with an agent filter was then planned as if
few rows matched, reading every one of the agent's rows and their search vectors to sort them
by date (270 ms to 1.3 s over 100,000 trajectories) instead of walking the agent's index newest
first and stopping at the candidates it needs (bench/bench_list.py). Expression statistics
(PostgreSQL 14+) give the planner each value's share. SQLite has no such thing: nothing to do.
"""

from django.db import migrations

STATISTICS = {
    "traj_shown_agent_upper": "UPPER(shown_agent::text)",
    "traj_shown_model_upper": "UPPER(shown_model::text)",
}


def create_statistics(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, expression in STATISTICS.items():
        schema_editor.execute(
            f"CREATE STATISTICS IF NOT EXISTS {name} ON ({expression}) FROM trajectories_trajectory"
        )
    # Filled by the next ANALYZE (autovacuum's, or this one): without it a new database would
    # plan with the old guess until autovacuum came round.
    schema_editor.execute("ANALYZE trajectories_trajectory")


def drop_statistics(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in STATISTICS:
        schema_editor.execute(f"DROP STATISTICS IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0020_find_positions")]

    operations = [migrations.RunPython(create_statistics, drop_statistics, elidable=False)]
