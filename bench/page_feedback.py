"""bench_page.py's feedback section (issue 23): the 2,000-event page with feedback on every
step, against the same page without it, measured in the same run.

Every step gets a rating from each of READERS readers, every step a comment and every agent
action a correction from each (as shown, already redacted, the way the service stores them),
and each reader marks one step first wrong. Timed, as an anonymous visitor: the page, the
viewer's summary (/t/<id>/feedback, one request) and the notes of the first chunk's steps
(/t/<id>/feedback/notes, one request), and the three together, which is what a reader waits for
before every card carries its feedback. The floor is the page itself, timed in the same runs
(it reads no feedback: tests/feedback/test_query_counts.py).
"""

from __future__ import annotations

import statistics

READERS = 3


def flood(trajectory) -> int:
    from django.contrib.auth import get_user_model

    from apps.feedback.models import FirstWrongMark, NoteState, StepNote, StepRating
    from apps.feedback.screening import current_map_digest
    from apps.trajectories.models import Event

    for model in (StepRating, StepNote, FirstWrongMark):
        model.objects.filter(trajectory=trajectory).delete()
    users = [
        get_user_model().objects.get_or_create(username=f"bench-feedback-{index}")[0]
        for index in range(READERS)
    ]
    digest = current_map_digest(trajectory)
    events = list(
        Event.objects.filter(trajectory=trajectory)
        .order_by("position")
        .values_list("position", "source", "kind")
    )
    ratings, notes = [], []
    for position, source, kind in events:
        for index, user in enumerate(users):
            common = {
                "trajectory": trajectory,
                "position": position,
                "fingerprint": "0" * 32,
                "author": user,
                "author_key": f"user:{user.pk}",
            }
            ratings.append(StepRating(**common, value="bad" if index else "good"))
            text = f"Reader {index} on step {position + 1}: run the failing test first."
            notes.append(
                StepNote(
                    **common,
                    kind="comment",
                    text=text,
                    shown_text=text,
                    shown_map=digest,
                    state=NoteState.SHOWN,
                )
            )
            if source == "agent" and kind == "action":
                notes.append(
                    StepNote(
                        **common,
                        kind="correction",
                        mode="message",
                        text=text,
                        shown_text=text,
                        shown_map=digest,
                        state=NoteState.SHOWN,
                    )
                )
    StepRating.objects.bulk_create(ratings, batch_size=2000)
    StepNote.objects.bulk_create(notes, batch_size=2000)
    agent_steps = [position for position, source, kind in events if source == "agent"]
    FirstWrongMark.objects.bulk_create(
        FirstWrongMark(
            trajectory=trajectory,
            position=agent_steps[(index + 1) * len(agent_steps) // (READERS + 1)],
            fingerprint="0" * 32,
            author=user,
            author_key=f"user:{user.pk}",
        )
        for index, user in enumerate(users)
    )
    return len(ratings) + len(notes) + len(users)


def bench_feedback(trajectory, client_class, *, runs: int, timed, line, p95, target_ms) -> bool:
    """Returns whether the page with feedback, summary and first chunk's notes together stay
    within the page budget."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    url = trajectory.get_absolute_url()
    visitor = client_class()
    visitor.get(url)
    without, _ = timed(lambda: visitor.get(url), runs)
    rows = flood(trajectory)
    first_chunk = ",".join(str(step) for step in range(1, 101))
    summary_url = f"{url}feedback"
    notes_url = f"{url}feedback/notes?steps={first_chunk}"
    fetch = {"HTTP_X_REQUESTED_WITH": "fetch"}
    visitor.get(summary_url, **fetch)
    # Interleaved, run by run, so that the machine's load weighs on all of them alike.
    with_feedback: list[float] = []
    summary: list[float] = []
    notes: list[float] = []
    together: list[float] = []
    answer = fragment = None
    for _ in range(runs):
        page_ms, _page = timed(lambda: visitor.get(url), 1)
        summary_ms, answer = timed(lambda: visitor.get(summary_url, **fetch), 1)
        notes_ms, fragment = timed(lambda: visitor.get(notes_url, **fetch), 1)
        with_feedback += page_ms
        summary += summary_ms
        notes += notes_ms
        together.append(page_ms[0] + summary_ms[0] + notes_ms[0])
    counts = []
    for where in (url, summary_url, notes_url):
        with CaptureQueriesContext(connection) as captured:
            visitor.get(where, **fetch)
        counts.append(len(captured.captured_queries))
    print()
    print(f"feedback on every step: {rows:,} rows ({READERS} readers)")
    line("page before the feedback", without, f"  {counts[0]} queries")
    line("page, feedback on every step (floor)", with_feedback)
    line(
        "summary /feedback", summary, f"  {len(answer.content) / 1000:.1f} KB, {counts[1]} queries"
    )
    line(
        "notes of steps 1-100",
        notes,
        f"  {len(fragment.content) / 1000:.1f} KB, {counts[2]} queries",
    )
    line("page + summary + notes", together)
    ratio = statistics.median(together) / statistics.median(with_feedback)
    print(f"page + summary + notes / the page alone (same runs): {ratio:.2f}x")
    ok = p95(together) <= target_ms
    print(f"page + feedback p95 <= {target_ms:.0f} ms: {'PASS' if ok else 'FAIL'}")
    return ok
