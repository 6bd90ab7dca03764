"""Backward construction's steps and windows (pure functions)."""

from dataclasses import dataclass

from apps.learn.windows import (
    ACTION,
    OBSERVATION,
    actions_in,
    build_steps,
    choose_windows,
    cut,
    drop_repeats,
    window_steps,
)


@dataclass
class Ev:
    position: int
    source: str
    kind: str
    text: str


def test_alternating_steps_fold_consecutive_actions_and_add_synthetic_ends():
    events = [
        Ev(0, "agent", "system", "you are an agent"),
        Ev(1, "agent", "action", "think"),
        Ev(2, "agent", "action", "ls"),
        Ev(3, "environment", "observation", "a.txt"),
        Ev(4, "agent", "message", "done"),
    ]
    steps = build_steps(events, limit=100)
    assert [s.role for s in steps] == [OBSERVATION, ACTION, OBSERVATION, ACTION, OBSERVATION]
    assert steps[0].synthetic and steps[0].text == ""
    assert steps[1].text == "think\nls" and (steps[1].first, steps[1].last) == (1, 2)
    assert steps[-1].synthetic
    assert actions_in(steps) == 2


def test_first_user_message_is_o0():
    events = [
        Ev(0, "user", "message", "fix it"),
        Ev(1, "agent", "action", "ls"),
        Ev(2, "environment", "observation", "x"),
    ]
    steps = build_steps(events, limit=100)
    assert steps[0].text == "fix it" and not steps[0].synthetic
    assert [s.as_dict()["first"] for s in window_steps(steps, 0, 1)] == [0, 1, 2]


def test_cut_keeps_head_and_tail_and_says_how_much_went():
    text = "HEAD" + "x" * 1000 + "TAIL"
    out = cut(text, 90)
    assert out.startswith("HEAD") and out.endswith("TAIL")
    assert "[... 918 characters cut ...]" in out
    assert cut("short", 90) == "short"


def test_repeated_identical_pairs_are_removed():
    events = [Ev(0, "user", "message", "go")]
    for n in range(3):
        events += [
            Ev(1 + 2 * n, "agent", "action", "ls"),
            Ev(2 + 2 * n, "environment", "observation", "a"),
        ]
    events += [Ev(7, "agent", "action", "cat a"), Ev(8, "environment", "observation", "hello")]
    steps, removed = drop_repeats(build_steps(events, limit=100))
    assert removed == 2
    assert [s.text for s in steps] == ["go", "ls", "a", "cat a", "hello"]
    assert steps[2].last == 6  # the folded pairs stay inside the window bounds


def test_window_choice_is_capped_deterministic_mixed_and_favours_short():
    chosen = choose_windows(200, cap=20, short_max=4, short_share=0.6, seed="abc")
    assert chosen == choose_windows(200, cap=20, short_max=4, short_share=0.6, seed="abc")
    assert len(chosen) == 20 == len(set(chosen))
    assert (0, 200) in chosen  # the whole trajectory
    lengths = [j - i for i, j in chosen]
    assert all(0 <= i < j <= 200 for i, j in chosen)
    assert sum(1 for n in lengths if n <= 4) >= 12
    assert {1, 2, 3, 4} <= set(lengths)
    assert sum(1 for n in lengths if n > 4) >= 4  # some of the long lengths too


def test_small_trajectory_gets_every_window():
    chosen = choose_windows(3, cap=20, short_max=4, short_share=0.6, seed="x")
    assert sorted(chosen) == [(i, j) for i in range(3) for j in range(i + 1, 4)]
