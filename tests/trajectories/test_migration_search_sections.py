"""Migration 0019's data step: a search text written before sections (the title and the event
texts joined by line breaks) becomes title, empty task and one step, so that search and its
snippets read it as sections; on PostgreSQL the vector is rebuilt from the sections with the
title weighted A, so an old row ranks its title above its step text until the next scan rebuilds
it from the events."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection

from apps.trajectories.models import Trajectory
from apps.trajectories.search_text import STEP_BREAK, search_sections
from tests.conftest import skip_or_fail
from tests.ingest_helpers import make_trajectory

pytestmark = pytest.mark.django_db

migration = importlib.import_module("apps.trajectories.migrations.0019_search_sections")


class Editor:
    """What the data step uses of a schema editor: its connection and `execute`."""

    connection = connection

    def execute(self, sql: str) -> None:
        with connection.cursor() as cursor:
            # The test's rows leave deferred constraint checks pending in its transaction, and
            # PostgreSQL creates no index (here: IF NOT EXISTS, already there) while they are.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(sql)


def test_old_search_texts_become_sections_and_new_ones_stay_as_they_are():
    lines = make_trajectory(visibility="public")
    one_line = make_trajectory(visibility="public")
    sectioned = make_trajectory(visibility="public")
    empty = make_trajectory(visibility="public")
    new_text = STEP_BREAK.join(["Title now", "the task", "a step", "another step"])
    Trajectory.objects.filter(pk=lines.pk).update(
        search_text="Flaky parser fix\nran pytest twice\nall green"
    )
    Trajectory.objects.filter(pk=one_line.pk).update(search_text="Only a title")
    Trajectory.objects.filter(pk=sectioned.pk).update(search_text=new_text)
    Trajectory.objects.filter(pk=empty.pk).update(search_text="")

    migration.sections(apps, Editor())

    texts = dict(Trajectory.objects.values_list("pk", "search_text"))
    assert search_sections(texts[lines.pk]) == (
        "Flaky parser fix",
        "",
        ["ran pytest twice\nall green"],
    )
    assert texts[lines.pk] == "Flaky parser fix" + STEP_BREAK * 2 + "ran pytest twice\nall green"
    assert texts[one_line.pk] == "Only a title" + STEP_BREAK
    assert search_sections(texts[one_line.pk]) == ("Only a title", "", [])
    assert texts[sectioned.pk] == new_text
    assert texts[empty.pk] == ""

    # Run again (a re-run migration, or rows converted already): nothing changes.
    migration.sections(apps, Editor())
    assert dict(Trajectory.objects.values_list("pk", "search_text")) == texts


def test_on_postgresql_the_vector_weights_the_old_title_above_its_steps():
    if connection.vendor != "postgresql":
        skip_or_fail("the weighted vector is PostgreSQL's (set DATABASE_URL)")
    trajectory = make_trajectory(visibility="public")
    Trajectory.objects.filter(pk=trajectory.pk).update(
        search_text="Flaky parser fix\nran pytest twice\nthe parser again"
    )

    migration.sections(apps, Editor())

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT search_vector::text FROM trajectories_trajectory WHERE id = %s",
            [trajectory.pk],
        )
        vector = cursor.fetchone()[0]
    assert "'flaki':1A" in vector  # the title's words are weighted A
    assert "'pytest':" in vector and "'pytest':5A" not in vector  # step words are D (no letter)
    assert "'parser':2A" in vector  # in the title (A) and in a step (D, no letter)
