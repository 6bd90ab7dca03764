"""Search text in sections (apps/trajectories/search_text.py): title, task, steps, between
record separators, and the PostgreSQL vector weighted A / B / D from them.

A text written before (the title and event texts joined by line breaks) becomes its first line
as the title, no task and the rest as one step; the next scan or redaction rebuilds it from the
events with the task apart. The SQL is written out here rather than imported, so that this
migration keeps meaning what it meant when the app's code moves on.
"""

from django.db import migrations
from django.db.models import F, Value
from django.db.models.functions import Concat, StrIndex, Substr

BREAK = "\x1e"

VECTOR_SQL = r"""
UPDATE trajectories_trajectory SET search_vector =
  setweight(to_tsvector('english'::regconfig, regexp_replace(
    split_part(search_text, E'\x1e', 1), '<([A-Z][A-Z0-9_-]*_[0-9]+)>', ' \1 ', 'g')), 'A') ||
  setweight(to_tsvector('english'::regconfig, regexp_replace(
    split_part(search_text, E'\x1e', 2), '<([A-Z][A-Z0-9_-]*_[0-9]+)>', ' \1 ', 'g')), 'B') ||
  setweight(to_tsvector('english'::regconfig, regexp_replace(
    substr(search_text, length(split_part(search_text, E'\x1e', 1))
                        + length(split_part(search_text, E'\x1e', 2)) + 3),
    '<([A-Z][A-Z0-9_-]*_[0-9]+)>', ' \1 ', 'g')), 'D')
WHERE search_text <> ''
"""


# The title and task as a vector (services/search.py HEAD_VECTOR_SQL, which queries must match
# as written), on public() only: a search finds its title and task matches from here.
HEAD_INDEX_SQL = r"""
CREATE INDEX IF NOT EXISTS traj_public_search_head ON trajectories_trajectory USING GIN ((
  to_tsvector('english'::regconfig, regexp_replace(
    split_part(search_text, chr(30), 1) || ' ' || split_part(search_text, chr(30), 2),
    '<([A-Z][A-Z0-9_-]*_[0-9]+)>', ' \1 ', 'g'))
)) WHERE visibility = 'public' AND review_state = 'approved'
"""


def sections(apps, schema_editor):
    Trajectory = apps.get_model("trajectories", "Trajectory")
    old = Trajectory.objects.exclude(search_text="").exclude(search_text__contains=BREAK)
    text = F("search_text")
    line = StrIndex(text, Value("\n"))
    old.filter(search_text__contains="\n").update(
        search_text=Concat(Substr(text, 1, line - 1), Value(BREAK * 2), Substr(text, line + 1))
    )
    old.exclude(search_text__contains="\n").update(search_text=Concat(text, Value(BREAK)))
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(VECTOR_SQL)
        schema_editor.execute(HEAD_INDEX_SQL)


def drop_head_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS traj_public_search_head")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0018_feedback_counts")]

    operations = [migrations.RunPython(sections, drop_head_index, elidable=False)]
