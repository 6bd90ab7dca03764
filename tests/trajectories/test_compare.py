"""/compare/ (issue 11): two runs side by side, steps aligned with gaps for detours, the final
patches diffed, any two formats; each side only for someone who may see it (404 as its page);
"Compare with…" offers other public runs of the same task."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from apps.trajectories.selectors.compare import Step, _signature, align
from tests.trajectories.test_outcome import LONG_PATCH, SECRET, eval_row
from tests.trajectories.viewer_factories import ingest

pytestmark = pytest.mark.django_db


def steps(*items: tuple[str, str, str]) -> list[Step]:
    out = []
    last = ""
    for number, (kind, type_, text) in enumerate(items, start=1):
        source = "user" if type_ == "user" else "agent"
        signature = _signature(kind, type_, source, text)
        if kind == "action":
            last = signature
        elif kind == "observation":
            signature += "<" + last  # as compare_steps does
        out.append(Step(number, kind, type_, source, text, signature))
    return out


def test_a_detour_is_a_gap_on_the_other_side():
    a = steps(
        ("message", "user", "Fix the tests"),
        ("action", "run", "ls"),
        ("observation", "run", "a.py"),
        ("action", "run", "pytest -x tests/test_a.py"),
        ("observation", "run", "1 failed"),
        ("action", "finish", "done"),
    )
    b = steps(
        ("message", "user", "Fix the tests"),
        ("action", "run", "ls"),
        ("observation", "run", "a.py b.py"),
        ("action", "run", "cat b.py"),
        ("observation", "run", "print(1)"),
        ("action", "run", "pytest -x tests/test_a.py"),
        ("observation", "run", "1 passed"),
        ("action", "finish", "done"),
    )
    rows = align(a, b)
    assert [row.status for row in rows] == [
        "same",
        "same",
        "differs",
        "only-b",
        "only-b",
        "same",
        "differs",
        "same",
    ]
    detour = rows[3]
    assert detour.a is None and detour.b.summary == "cat b.py"


def v0(commands: list[str], title: str) -> bytes:
    events = [
        {
            "id": 0,
            "timestamp": "2025-01-01T00:00:00",
            "source": "user",
            "message": title,
            "action": "message",
            "args": {"content": title},
        }
    ]
    for command in commands:
        events.append(
            {
                "id": len(events),
                "timestamp": "2025-01-01T00:00:01",
                "source": "agent",
                "message": f"Running {command}",
                "action": "run",
                "args": {"command": command},
            }
        )
        events.append(
            {
                "id": len(events),
                "timestamp": "2025-01-01T00:00:02",
                "source": "agent",
                "cause": len(events) - 1,
                "observation": "run",
                "content": f"output of {command}",
                "extras": {"command": command, "metadata": {"exit_code": 0}},
            }
        )
    return json.dumps(events).encode()


def test_the_page_aligns_two_formats_and_diffs_the_patches(owner, other_user, sample):
    a = ingest(eval_row(), owner=owner, visibility="public")
    other_patch = LONG_PATCH.replace("line 7 new", "line 7 newer")
    b = ingest(
        eval_row(other_patch, resolved=False, instance="greet__greet-1x"),
        owner=other_user,
        visibility="public",
    )
    swe = ingest(sample("sweagent_run.traj"), owner=owner, visibility="public")
    html = Client().get(f"/compare/?a={a.share_id}&b={b.share_id}").content.decode()
    assert "Compare two runs" in html and "Resolved" in html and "Not resolved" in html
    assert "line 7 newer" in html and 'class="d-add">+' in html  # the patches, diffed
    assert html.count('<tr class="cmp-same">') >= 5
    # Any two formats: an OpenHands evaluation row and a SWE-agent run of the same task.
    mixed = Client().get(f"/compare/?a={a.share_id}&b={swe.share_id}")
    assert mixed.status_code == 200
    text = mixed.content.decode()
    assert f'/t/{swe.share_id}/#step-1"' in text and f'/t/{a.share_id}/#step-1"' in text


@pytest.mark.parametrize(
    "caller, status",
    [("anonymous", 404), ("other", 404), ("owner", 200), ("moderator", 200), ("staff", 200)],
)
def test_each_side_only_for_someone_who_may_see_it(
    owner, other_user, moderator, staff, caller, status
):
    public = ingest(v0(["ls", "pytest"], "Fix it"), owner=other_user, visibility="public")
    private = ingest(v0(["ls", "make"], "Fix it too"), owner=owner, visibility="private")
    held = ingest(
        v0(["ls", "cat"], "Fix it 3"), owner=owner, visibility="public", review_state="held"
    )
    client = Client()
    user = {
        "anonymous": None,
        "other": other_user,
        "owner": owner,
        "moderator": moderator,
        "staff": staff,
    }[caller]
    if user is not None:
        client.force_login(user)
    for hidden in (private, held):
        for query in (
            f"a={public.share_id}&b={hidden.share_id}",
            f"a={hidden.share_id}&b={public.share_id}",
            f"a={hidden.share_id}",
        ):
            response = client.get(f"/compare/?{query}")
            assert response.status_code == status, (query, caller)
            if status == 404:
                assert hidden.share_id not in response.content.decode()
    assert client.get(f"/compare/?a={public.share_id}&b={'0' * 64}").status_code == 404


def test_each_side_is_redacted_for_visitors(owner):
    a = ingest(
        v0(["ls", f"export TOKEN={SECRET}"], "Fix it"),
        owner=owner,
        visibility="public",
        redactions={SECRET: "<GITHUB_TOKEN_1>"},
    )
    b = ingest(v0(["ls", "pytest"], "Fix it again"), owner=owner, visibility="public", index=0)
    html = Client().get(f"/compare/?a={a.share_id}&b={b.share_id}").content.decode()
    assert SECRET not in html and "&lt;GITHUB_TOKEN_1&gt;" in html
    client = Client()
    client.force_login(owner)
    assert SECRET in client.get(f"/compare/?a={a.share_id}&b={b.share_id}").content.decode()


def test_a_secret_across_the_cut_of_a_step_is_redacted_before_the_cut(owner):
    # The cell shows a step's first line cut to SHOWN_CHARS: cut before redaction, a secret
    # straddling the cut no longer matched its original and showed in part.
    command = "echo " + "x" * 80 + f" {SECRET}"
    a = ingest(
        v0(["ls", command], "Fix it"),
        owner=owner,
        visibility="public",
        redactions={SECRET: "<GITHUB_TOKEN_1>"},
    )
    b = ingest(v0(["ls", "pytest"], "Fix it again"), owner=owner, visibility="public", index=0)
    html = Client().get(f"/compare/?a={a.share_id}&b={b.share_id}").content.decode()
    assert "echo xxxx" in html
    assert SECRET[:8] not in html


def test_compare_with_offers_public_runs_of_the_same_task(owner, other_user, moderator):
    a = ingest(eval_row(), owner=owner, visibility="public")
    same = ingest(eval_row(resolved=False), owner=other_user, visibility="public")
    private = ingest(eval_row(), owner=moderator, visibility="private")
    page = Client().get(a.get_absolute_url()).content.decode()
    assert f'href="/compare/?a={a.share_id}"' in page
    html = Client().get(f"/compare/?a={a.share_id}").content.decode()
    assert f"b={same.share_id}" in html and private.share_id not in html
    # A pasted address works as well as an id; a wrong one says so.
    pasted = Client().get(
        f"/compare/?a={a.share_id}&b=https://x.example/t/{same.share_id}/%23step-3"
    )
    assert pasted.status_code == 200 and "Final patches" in pasted.content.decode()
    wrong = Client().get(f"/compare/?a={a.share_id}&b=nonsense").content.decode()
    assert "not a trajectory address" in wrong


def test_a_fixed_number_of_queries(owner, django_assert_num_queries):
    a = ingest(v0([f"cmd {n}" for n in range(40)], "Task"), owner=owner, visibility="public")
    b = ingest(
        v0([f"cmd {n}" for n in range(0, 80, 2)], "Task 2"),
        owner=owner,
        visibility="public",
        index=0,
    )
    # Each side's access, its stored steps (signatures), the summaries of the rows shown.
    with django_assert_num_queries(6):
        response = Client().get(f"/compare/?a={a.share_id}&b={b.share_id}")
    assert response.status_code == 200
    rows = re.findall(r'<tr class="cmp-(\w+(?:-\w)?)">', response.content.decode())
    assert "only-a" in rows and "only-b" in rows and "same" in rows


def test_the_summaries_read_no_observation_data(owner):
    """A warm page reads the summaries of the rows it shows; the command is taken from an
    action's data only, so an observation's data (kilobytes of extras, toasted) is never
    detoasted for it (it was, once per command path: most of a warm page's SQL)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    a = ingest(v0([f"cmd {n}" for n in range(5)], "Task"), owner=owner, visibility="public")
    b = ingest(v0([f"cmd {n}" for n in range(6)], "Task 2"), owner=owner, visibility="public")
    with CaptureQueriesContext(connection) as captured:
        response = Client().get(f"/compare/?a={a.share_id}&b={b.share_id}")
    assert response.status_code == 200 and "cmd 4" in response.content.decode()
    reads = [q["sql"] for q in captured.captured_queries if '"trajectories_event"' in q["sql"]]
    assert len(reads) == 2
    for sql in reads:
        # The data is read only behind the CASE that asks for an action first.
        first_data_read = sql.index('"trajectories_event"."data"')
        assert 'WHEN "trajectories_event"."kind" = ' in sql[:first_data_read], sql


def test_stored_steps_give_the_page_reading_every_event_gives(owner, django_assert_num_queries):
    """Issue 24: the alignment from the signatures stored at ingest, the summaries read for the
    rows shown only; the same page as steps read from every event (the path of trajectories
    stored before)."""
    from django.core.cache import cache

    from apps.trajectories.models import EventSummary
    from apps.trajectories.selectors.compare import align_key, compare_steps_forget

    a = ingest(v0([f"cmd {n}" for n in range(300)], "Task"), owner=owner, visibility="public")
    b = ingest(
        v0([f"cmd {n}" for n in range(0, 600, 3)], "Task 2"),
        owner=owner,
        visibility="public",
        index=0,
    )
    pair = f"a={a.share_id}&b={b.share_id}"
    stored = EventSummary.objects.get(trajectory=a).compare_steps
    assert isinstance(stored, list) and len(stored) == 601
    pages = {}
    for name in ("stored", "read"):
        if name == "read":
            EventSummary.objects.update(compare_steps=None)
        for share_id in (a.share_id, b.share_id):
            compare_steps_forget(share_id)
        cache.delete(align_key(a, b))
        pages[name] = [
            Client().get(f"/compare/{path}").content
            for path in (f"?{pair}", f"rows?{pair}&from=200")
        ]
    assert pages["stored"] == pages["read"]
    # Reading them made them again, for the next reader.
    assert EventSummary.objects.get(trajectory=a).compare_steps == stored


def test_rows_page_on(owner, django_assert_num_queries):
    from apps.trajectories.views.compare import ROWS_PER_PAGE

    a = ingest(v0([f"a{n}" for n in range(300)], "Long"), owner=owner, visibility="public")
    b = ingest(
        v0([f"b{n}" for n in range(300)], "Long 2"), owner=owner, visibility="public", index=0
    )
    pair = f"a={a.share_id}&b={b.share_id}"
    first = Client().get(f"/compare/?{pair}").content.decode()
    assert first.count("<tr class=") == ROWS_PER_PAGE == 200
    assert f"from={ROWS_PER_PAGE}" in first and 'id="cmp-more"' in first
    second = Client().get(f"/compare/?{pair}&from=400").content.decode()
    assert second.count("<tr class=") == 200 and "Earlier rows" in second
    assert "from=600" in second
    end = Client().get(f"/compare/?{pair}&from=600").content.decode()
    assert end.count("<tr class=") == 1 and 'id="cmp-more"' not in end
    # The fragments compare.js appends: the rows after `from`, and where the next ones start.
    # Each side's access and the summaries of these rows; the alignment cached (with each
    # side's length: no stored steps read).
    with django_assert_num_queries(4):
        chunk = Client().get(f"/compare/rows?{pair}&from=200")
    assert chunk.status_code == 200 and chunk["X-Next-From"] == "400"
    assert chunk["Cache-Control"] == "private, no-cache"
    rows = re.findall(r'<tr class="cmp-[\w-]+">', chunk.content.decode())
    assert len(rows) == 200 and "<tbody" not in chunk.content.decode()
    third = Client().get(f"/compare/rows?{pair}&from=400")
    last = Client().get(f"/compare/rows?{pair}&from=600")
    assert third["X-Next-From"] == "600"
    assert last.content.decode().count("<tr class=") == 1 and "X-Next-From" not in last
    # Every step of each side exactly once over the page and its fragments, in order.
    html = first.split("<tbody>")[1].split("</tbody>")[0] + "".join(
        r.content.decode() for r in (chunk, third, last)
    )
    for side in (a, b):
        numbers = [int(n) for n in re.findall(rf"/t/{side.share_id}/#step-(\d+)\"", html)]
        assert numbers == list(range(1, side.num_events + 1))


def test_row_fragments_follow_each_sides_visibility(owner, other_user):
    public = ingest(v0(["ls", "pytest"], "Fix it"), owner=other_user, visibility="public")
    private = ingest(v0(["ls", "make"], "Fix it too"), owner=owner, visibility="private")
    for pair in (
        f"a={public.share_id}&b={private.share_id}",
        f"a={private.share_id}&b={public.share_id}",
    ):
        response = Client().get(f"/compare/rows?{pair}")
        assert response.status_code == 404 and private.share_id not in response.content.decode()
    signed_in = Client()
    signed_in.force_login(owner)
    answer = signed_in.get(f"/compare/rows?a={public.share_id}&b={private.share_id}")
    assert answer.status_code == 200 and "make" in answer.content.decode()
    assert answer["X-Robots-Tag"] == "noindex, nofollow"
    assert Client().get(f"/compare/rows?a={public.share_id}").status_code == 404


def test_steps_are_kept_until_stored_again_or_deleted(
    owner, django_assert_num_queries, django_capture_on_commit_callbacks
):
    from django.core.cache import cache

    from apps.trajectories.models import EventSummary
    from apps.trajectories.selectors.compare import align_key
    from apps.trajectories.services import trajectory_delete

    a = ingest(v0(["ls", "pytest"], "Task"), owner=owner, visibility="public")
    b = ingest(v0(["ls", "make"], "Task 2"), owner=owner, visibility="public", index=0)
    url = f"/compare/?a={a.share_id}&b={b.share_id}"
    first = Client().get(url).content
    # The two access checks and the summaries of the rows shown: the alignment is cached with
    # each side's length, so no side's stored steps are read again.
    with django_assert_num_queries(4):
        again = Client().get(url)
    assert again.status_code == 200 and again.content == first
    # No text in the cache: the stored steps hold signatures and digests only.
    assert cache.get(f"compare:steps:{a.share_id}") is None
    # A trajectory with no stored steps (stored before them) reads every event once, caches
    # the steps with their text and stores the steps for the next reader (once the pair's
    # alignment has to be made again).
    EventSummary.objects.filter(trajectory=a).delete()
    cache.delete(align_key(a, b))
    assert Client().get(url).content == first
    assert cache.get(f"compare:steps:{a.share_id}") is not None
    with django_capture_on_commit_callbacks(execute=True):
        trajectory_delete(trajectory=a, reason="owner")
    # Its text goes at once, the cached step summaries and the stored steps too.
    assert cache.get(f"compare:steps:{a.share_id}") is None
    assert not EventSummary.objects.filter(trajectory_id=a.pk).exists()
    assert Client().get(url).status_code == 404


def test_compare_with_finds_the_same_first_message_title_and_instance_by_index(
    owner, other_user, django_assert_num_queries
):
    from django.db import connection

    from apps.trajectories.selectors.compare import first_user_message, same_task_queryset
    from tests.conftest import skip_or_fail

    a = ingest(eval_row(), owner=owner, visibility="public")
    same_instance = ingest(eval_row(resolved=False), owner=other_user, visibility="public")
    message = first_user_message(a)
    assert message
    same_message = ingest(
        v0(["ls"], message), owner=other_user, visibility="public", title="Another title"
    )
    titled = ingest(
        v0(["make"], "Something else"), owner=other_user, visibility="public", title=a.title
    )
    unrelated = ingest(v0(["pwd"], "Unrelated"), owner=other_user, visibility="public")
    with django_assert_num_queries(3):  # the access, the first message, the candidates
        html = Client().get(f"/compare/?a={a.share_id}").content.decode()
    for found in (same_instance, same_message, titled):
        assert f"b={found.share_id}" in html, found
    assert f"b={unrelated.share_id}" not in html and f"b={a.share_id}" not in html
    if connection.vendor != "postgresql":
        skip_or_fail("the partial expression indexes are PostgreSQL's")
    # Enough other public runs that a planner has something to choose between.
    from apps.trajectories.models import Trajectory

    Trajectory.objects.bulk_create(
        Trajectory(
            title=f"Run {n}",
            metadata={"instance_id": f"other__other-{n}"},
            visibility="public",
            review_state="approved",
        )
        for n in range(2000)
    )
    queryset = same_task_queryset(a, message)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE trajectories_trajectory")
        cursor.execute("ANALYZE trajectories_event")
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = queryset.explain()
    for index in ("event_first_message_md5", "traj_public_title", "traj_public_instance"):
        assert index in plan, plan


@pytest.mark.parametrize("page", ["/compare/", "/compare/rows"])
def test_a_secret_wrapped_across_lines_is_redacted_before_the_first_line_is_taken(owner, page):
    # A terminal wrapped `MASTER_KEY=<32 characters>` at 40 columns: the scan finds it across the
    # line break, so its original holds the break. Cut to the first line before redaction, the
    # summary no longer matched it and showed 29 of its 32 characters.
    from apps.moderation.services.scan import trajectory_scan
    from apps.trajectories.models import Trajectory
    from tests.ingest_helpers import ingest_one, v0_events
    from tests.moderation import samples as s

    key = s.random_key()
    line = f"MASTER_KEY={key}"
    wrapped = "\n".join(line[i : i + 40] for i in range(0, len(line), 40))
    events = v0_events(1, task="Fix it")
    events[-1]["content"] = wrapped + "\n"
    a = ingest_one(events, user=owner, visibility="public", license_agreed=True)
    trajectory_scan(trajectory=a)
    a.refresh_from_db()
    assert any("\n" in original for original in a.redactions)  # found across the wrap
    Trajectory.objects.filter(pk=a.pk).update(review_state="approved")
    b = ingest(v0(["ls", "pytest"], "Fix it again"), owner=owner, visibility="public", index=0)
    response = Client().get(f"{page}?a={a.share_id}&b={b.share_id}")
    assert response.status_code == 200
    html = response.content.decode()
    assert "MASTER_KEY=" in html
    assert [key[i : i + 12] for i in range(len(key) - 11) if key[i : i + 12] in html] == []


def _pem_on_one_line(form: str) -> str:
    """A 2048-bit-sized PEM key as one line of Base64 or of URL encoding (what
    `base64 -w0 key.pem` or a query string holds): far longer than a summary is read."""
    from urllib.parse import quote

    from tests.moderation import samples as s

    lines = [s.body(64, s.ALNUM + "+/") for _ in range(25)]
    label = "RSA " + "PRIVATE KEY"
    pem = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"
    if form == "base64":
        import base64

        return base64.b64encode(pem.encode()).decode()
    return quote(pem, safe="")


@pytest.mark.parametrize("form", ["base64", "url"])
@pytest.mark.parametrize("page", ["/compare/", "/compare/rows"])
def test_a_secret_longer_than_a_summary_is_read_shows_no_fragment(owner, page, form):
    # Summaries were read cut at 300 characters, before redaction: the original of a key of
    # 2,000 characters on one line no longer matched, and the cell showed its first 99.
    from apps.moderation.services.scan import trajectory_scan
    from apps.trajectories.models import Trajectory
    from tests.ingest_helpers import ingest_one, v0_events

    encoded = _pem_on_one_line(form)
    events = v0_events(2, task="Fix it")
    events[3]["args"]["command"] = f"echo {encoded} > key.txt"
    events[-1]["content"] = f"{encoded}\n"
    a = ingest_one(events, user=owner, visibility="public", license_agreed=True)
    trajectory_scan(trajectory=a)
    a.refresh_from_db()
    assert any(len(original) > 1000 for original in a.redactions)  # found whole, one line
    Trajectory.objects.filter(pk=a.pk).update(review_state="approved")
    b = ingest(v0(["ls", "pytest"], "Fix it again"), owner=owner, visibility="public", index=0)
    response = Client().get(f"{page}?a={a.share_id}&b={b.share_id}")
    assert response.status_code == 200
    html = response.content.decode()
    shown = [encoded[i : i + 12] for i in range(len(encoded) - 11) if encoded[i : i + 12] in html]
    assert shown == []
    assert 'echo <mark class="redaction">&lt;PRIVATE_KEY_1&gt;</mark>' in html
    # The owner still reads the original there.
    client = Client()
    client.force_login(owner)
    assert encoded[:80] in client.get(f"{page}?a={a.share_id}&b={b.share_id}").content.decode()


def test_steps_cached_before_the_map_changed_are_cut_again(owner):
    # Where a summary is cut depends on the map: steps cached before a rescan found a long key
    # would otherwise keep its first 300 characters, unmatched by the new original.
    from apps.trajectories.models import Trajectory

    encoded = _pem_on_one_line("base64")
    a = ingest(v0(["ls", f"echo {encoded}"], "Fix it"), owner=owner, visibility="public")
    b = ingest(v0(["ls", "pytest"], "Fix it again"), owner=owner, visibility="public", index=0)
    url = f"/compare/?a={a.share_id}&b={b.share_id}"
    assert encoded[:40] in Client().get(url).content.decode()  # not a secret yet
    Trajectory.objects.filter(pk=a.pk).update(redactions={encoded: "<PRIVATE_KEY_1>"})
    html = Client().get(url).content.decode()
    assert [
        encoded[i : i + 12] for i in range(len(encoded) - 11) if encoded[i : i + 12] in html
    ] == []
    assert "&lt;PRIVATE_KEY_1&gt;" in html
