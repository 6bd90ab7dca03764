"""Step feedback (issue 23) in the releases: `step_feedback`, `preferences` (TRL's
conversational preference format) and `stepwise` (TRL's stepwise supervision), read back with
`datasets` and checked with TRL's own helpers; only releasable feedback on the release's
trajectories; and a deleted piece of feedback, or a deleted account's, left out of the next
release and listed there as removed."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

from apps.datasets import services
from apps.datasets.models import Release, ReleaseFeedback
from apps.feedback import moderating
from apps.feedback import services as feedback
from apps.feedback.anchors import is_agent_step
from apps.feedback.models import FeedbackSwitch, NoteState, StepNote, StepRating
from apps.feedback.services import Author
from apps.owners.services.erasure import account_delete
from apps.trajectories.models import Event, Trajectory
from apps.trajectories.services.edits import trajectory_delete
from tests.conftest import REQUIRE_SERVICES
from tests.datasets.conftest import github_token, share

pytestmark = pytest.mark.django_db

CONFIGS = ("step_feedback", "preferences", "stepwise")


def read(folder, config: str) -> list[dict]:
    rows: list[dict] = []
    for path in sorted((folder / config).glob("train-*.parquet")):
        rows.extend(pq.read_table(path).to_pylist())
    return rows


def everything(release: Release, root) -> str:
    """Every row of every config of the release, as one text to search."""
    folder = root / release.prefix
    configs = sorted(path.name for path in folder.iterdir() if path.is_dir())
    return json.dumps([read(folder, config) for config in configs], default=lambda _bytes: "")


def agent_steps(trajectory: Trajectory) -> list[int]:
    events = Event.objects.filter(trajectory=trajectory).order_by("position")
    return [event.position + 1 for event in events if is_agent_step(event)]


def reader(django_user_model, name: str) -> Author:
    # Names no demo text holds: the test looks for them in every row.
    user = django_user_model.objects.create_user(f"zq{name}reader", password=f"pw-{name}")
    return Author(user=user, client_ip=f"10.0.{len(name)}.{ord(name[0])}")


def give(trajectory: Trajectory, step: int, author: Author, **fields):
    return feedback.step_feedback_give(trajectory=trajectory, step=step, author=author, **fields)


def agree(trajectory: Trajectory, author: Author, agreed: bool = True) -> None:
    feedback.feedback_licence_answer(trajectory=trajectory, author=author, agreed=agreed)


@pytest.fixture
def world(release_storage, owner, django_user_model):
    """A public trajectory whose every agent step two readers rated (the second agent step
    bad, the others good), one correction in words and one of an action, a comment, and
    text from a reader who declined the licence; a second public trajectory with a tied
    step."""
    rated = share(user=owner, seed=1)
    tied = share(user=owner, seed=2)
    ann, bob, cy = (reader(django_user_model, name) for name in ("ann", "bob", "cyrus"))
    agree(rated, ann)
    agree(rated, bob)
    agree(rated, cy, agreed=False)
    steps = agent_steps(rated)
    assert len(steps) >= 3
    for author in (ann, bob):
        for number, step in enumerate(steps):
            give(rated, step, author, rating="bad" if number == 1 else "good")
    give(rated, steps[1], ann, first_wrong=True, correction="Run the tests before editing.")
    # The action correction edits a command the agent ran.
    run = next(
        step
        for step in steps[2:]
        if Event.objects.get(trajectory=rated, position=step - 1).type == "run"
    )
    action = give(rated, run, bob, correction="pytest -x tests/", mode="action").correction
    give(rated, steps[0], bob, comment="A sensible first look.")
    give(rated, steps[0], cy, comment="Declined text, never released.")
    give(rated, steps[1], cy, correction="Declined correction, never released.")
    for step in agent_steps(tied):
        give(tied, step, ann, rating="good")
        give(tied, step, bob, rating="bad" if step == agent_steps(tied)[-1] else "good")
    return {
        "rated": rated,
        "tied": tied,
        "steps": steps,
        "readers": (ann, bob, cy),
        "action": action,
        "run": run,
    }


def latest() -> Release:
    return Release.objects.filter(status="published").order_by("-version").first()


def publish() -> Release:
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    return result.release


def test_step_feedback_rows_count_ratings_marks_and_released_text_only(world, release_storage):
    release = publish()
    folder = release_storage / release.prefix
    rows = {(row["id"], row["step"]): row for row in read(folder, "step_feedback")}
    rated, steps = world["rated"].share_id, world["steps"]
    first, second = (rows[(rated, step)] for step in steps[:2])
    third = rows[(rated, world["run"])]
    assert (first["good"], first["bad"], first["first_wrong"]) == (2, 0, 0)
    assert (second["good"], second["bad"], second["first_wrong"]) == (0, 2, 1)
    assert [c["text"] for c in second["corrections"]] == ["Run the tests before editing."]
    assert second["corrections"][0]["mode"] == "message"
    assert second["corrections"][0]["license"] == "MIT"
    assert [c["text"] for c in first["comments"]] == ["A sensible first look."]
    (edited,) = third["corrections"]
    assert edited["mode"] == "action" and edited["text"] == "pytest -x tests/"
    assert edited["original"] and edited["rejected_by_owner"] is False
    text = everything(release, release_storage)
    assert "Declined" not in text
    # No author's name or id anywhere.
    for author in world["readers"]:
        assert author.user.username not in text and f"user:{author.user.pk}" not in text
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["rows"]["step_feedback"] == len(rows)
    assert manifest["feedback_added"] == ReleaseFeedback.objects.filter(release=release).count()
    assert manifest["feedback_removed"] == []


def test_preferences_are_trl_conversational_and_render_with_a_chat_template(
    world, release_storage, tmp_path, monkeypatch
):
    datasets = _offline_datasets(monkeypatch, tmp_path)
    data_utils = _trl_data_utils()
    release = publish()
    folder = release_storage / release.prefix
    loaded = datasets.load_dataset(
        str(folder), "preferences", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert len(loaded) == 2  # the declined author's correction is not there
    by_mode = {row["mode"]: row for row in loaded}
    words, action = by_mode["message"], by_mode["action"]
    assert words["trajectory_id"] == world["rated"].share_id
    assert words["step"] == world["steps"][1] and action["id"] == world["action"].public_id
    tokenizer = _tiny_tokenizer()
    for row in loaded:
        assert data_utils.is_conversational(row)
        assert row["prompt"][0]["role"] in ("system", "user")
        assert row["rejected"][0]["role"] == row["chosen"][0]["role"] == "assistant"
        example = {key: row[key] for key in ("prompt", "chosen", "rejected")}
        rendered = data_utils.maybe_apply_chat_template(example, tokenizer)
        assert set(rendered) == {"prompt", "chosen", "rejected"}
        assert rendered["prompt"].startswith(f"<|{row['prompt'][0]['role']}|>")
        assert rendered["chosen"] != rendered["rejected"]
    assert words["chosen"][0]["content"] == "Run the tests before editing."
    rendered = data_utils.maybe_apply_chat_template(
        {key: words[key] for key in ("prompt", "chosen", "rejected")}, tokenizer
    )
    assert "Run the tests before editing." in rendered["chosen"]
    # The prompt is the conversation up to the corrected step: the task, never the step.
    prompt_text = json.dumps(words["prompt"])
    assert words["rejected"][0] not in words["prompt"]
    assert "Run the tests" not in prompt_text
    # An action correction is the same tool call with the edited command.
    (call,) = action["chosen"][0]["tool_calls"]
    (original,) = action["rejected"][0]["tool_calls"]
    assert call["function"]["name"] == original["function"]["name"]
    assert "pytest -x tests/" in json.loads(call["function"]["arguments"]).values()
    assert (
        "pytest -x tests/"
        in data_utils.maybe_apply_chat_template(
            {key: action[key] for key in ("prompt", "chosen", "rejected")}, tokenizer
        )["chosen"]
    )


def test_stepwise_rows_have_trls_columns_and_types(world, release_storage, tmp_path, monkeypatch):
    datasets = _offline_datasets(monkeypatch, tmp_path)
    release = publish()
    folder = release_storage / release.prefix
    loaded = datasets.load_dataset(
        str(folder), "stepwise", split="train", cache_dir=str(tmp_path / "cache")
    )
    # The tied trajectory is left out.
    assert loaded["id"] == [world["rated"].share_id]
    features = loaded.features
    assert features["prompt"] == datasets.Value("string")
    assert features["completions"].feature == datasets.Value("string")
    assert features["labels"].feature == datasets.Value("bool")
    (row,) = loaded
    assert row["steps"] == world["steps"]
    assert len(row["completions"]) == len(row["labels"]) == len(world["steps"])
    assert row["labels"] == [number != 1 for number in range(len(world["steps"]))]
    assert row["prompt"] and all(isinstance(text, str) for text in row["completions"])
    # Every config of the card loads.
    for config in CONFIGS:
        assert len(
            datasets.load_dataset(str(folder), config, split="train", cache_dir=str(tmp_path / "c"))
        )
    card = (folder / "README.md").read_text()
    for config in CONFIGS:
        assert f'config_name: "{config}"' in card and f"`{config}` ({config}/)" in card
    assert 'load_dataset("<this folder or Hub id>", "preferences"' in card


def test_too_few_ratings_leave_a_trajectory_out_of_stepwise(world, release_storage, settings):
    settings.TRAJHUB_STEPWISE_MIN_RATINGS = 3
    release = publish()
    assert read(release_storage / release.prefix, "stepwise") == []


def test_held_outdated_switched_off_and_owner_rejected_feedback(world, release_storage, moderator):
    rated = world["rated"]
    ann, bob, _cy = world["readers"]
    # A correction the scan held, then one a moderator rejected: neither is released.
    token = github_token()
    held = give(
        rated, world["steps"][0], ann, correction=f"Use the token {token} instead."
    ).correction
    assert held.state == NoteState.HELD
    comment = StepNote.objects.get(kind="comment", author=bob.user)
    moderating.note_decide(note=comment, moderator=moderator, approve=False)
    # The owner rejects the action correction: still feedback on the step, no preference.
    feedback.note_owner_reject(note=world["action"], author=Author(user=rated.owner))
    release = publish()
    folder = release_storage / release.prefix
    text = everything(release, release_storage)
    assert token not in text and "Use the token" not in text
    assert "A sensible first look." not in text
    assert [row["mode"] for row in read(folder, "preferences")] == ["message"]
    steps = {row["step"]: row for row in read(folder, "step_feedback")}
    assert steps[world["run"]]["corrections"][0]["rejected_by_owner"] is True

    # Outdated (the step changed) and switched off: nothing of it.
    StepRating.objects.filter(trajectory=rated).update(outdated=True)
    FeedbackSwitch.objects.create(trajectory=world["tied"])
    later = services.release_run(force=True).release
    rows = read(release_storage / later.prefix, "step_feedback")
    assert {row["id"] for row in rows} == {rated.share_id}
    assert all(row["good"] == row["bad"] == 0 for row in rows)
    assert read(release_storage / later.prefix, "stepwise") == []


@pytest.mark.parametrize("state", ["private", "pending", "held", "rejected", "deleted"])
def test_feedback_on_a_trajectory_outside_public_is_never_released(
    state, release_storage, owner, django_user_model
):
    public = share(user=owner, seed=1)
    other = share(user=owner, seed=5)
    ann = reader(django_user_model, "ann")
    agree(other, ann)
    step = agent_steps(other)[0]
    give(other, step, ann, rating="bad", first_wrong=True, correction="Never in a release.")
    give(other, step, Author(user=owner), comment="Owner's words, never released either.")
    agree(other, Author(user=owner))
    give(public, agent_steps(public)[0], ann, rating="good")
    if state == "private":
        Trajectory.objects.filter(pk=other.pk).update(visibility="private")
    elif state == "deleted":
        trajectory_delete(trajectory=other)
    else:
        Trajectory.objects.filter(pk=other.pk).update(review_state=state)
    release = publish()
    text = everything(release, release_storage)
    assert other.share_id not in text
    assert "Never in a release." not in text and "Owner's words" not in text
    assert not ReleaseFeedback.objects.filter(share_id=other.share_id).exists()
    assert [row["id"] for row in read(release_storage / release.prefix, "step_feedback")] == [
        public.share_id
    ]


def test_deleted_feedback_supersedes_and_is_listed_as_removed(
    world, release_storage, django_capture_on_commit_callbacks
):
    first = publish()
    ann, bob, _cy = world["readers"]
    note = StepNote.objects.get(author=ann.user, kind="correction")
    with django_capture_on_commit_callbacks(execute=True):
        feedback.note_delete(note=note, author=ann)
    # Superseded at once, and the removal-only build it queued ran (eagerly, here).
    first.refresh_from_db()
    assert first.is_superseded
    removal = latest()
    assert removal.removal_only and removal.num_rows == first.num_rows
    first.refresh_from_db()
    assert first.superseded_by == removal
    assert "Run the tests before editing." not in everything(removal, release_storage)
    manifest = json.loads((release_storage / removal.prefix / "manifest.json").read_text())
    assert manifest["feedback_removed"] == [
        {
            "kind": "correction",
            "id": note.public_id,
            "trajectory_id": world["rated"].share_id,
            "step": world["steps"][1],
        }
    ]
    assert manifest["feedback_added"] == 0 and manifest["removed_ids"] == []
    # Nothing else of the first release's feedback went.
    assert (
        ReleaseFeedback.objects.filter(release=first).count()
        == ReleaseFeedback.objects.filter(release=removal).count() + 1
    )


def test_deleting_an_account_removes_its_feedback_from_the_next_release(
    world, release_storage, django_capture_on_commit_callbacks
):
    first = publish()
    ann, _bob, _cy = world["readers"]
    correction = StepNote.objects.get(author=ann.user, kind="correction")
    ratings = StepRating.objects.filter(author=ann.user, trajectory=world["rated"]).count()
    with django_capture_on_commit_callbacks(execute=True):
        account_delete(user=ann.user)
    first.refresh_from_db()
    assert first.is_superseded
    removal = latest()
    assert removal.removal_only and first.superseded_by_id == removal.pk
    folder = release_storage / removal.prefix
    rows = {
        row["step"]: row
        for row in read(folder, "step_feedback")
        if row["id"] == world["rated"].share_id
    }
    second = rows[world["steps"][1]]
    assert (second["bad"], second["first_wrong"], second["corrections"]) == (1, 0, [])
    assert all(
        row["good"] + row["bad"] == 1 for row in rows.values() if row["step"] in world["steps"]
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    removed = manifest["feedback_removed"]
    assert {
        "kind": "correction",
        "id": correction.public_id,
        "trajectory_id": world["rated"].share_id,
        "step": world["steps"][1],
    } in removed
    counted = {item["kind"]: 0 for item in removed if "count" in item}
    for item in removed:
        if "count" in item:
            counted[item["kind"]] += item["count"]
    # Both trajectories' ratings (the tied one's too) and the first-wrong mark.
    assert counted["rating"] == ratings + len(agent_steps(world["tied"]))
    assert counted["first_wrong"] == 1
    assert all(ann.user.username not in json.dumps(item) for item in removed)
    # Stepwise: the rated trajectory now has one rating per step, fewer than the minimum.
    assert read(folder, "stepwise") == []


def test_a_release_built_in_shard_tasks_has_each_steps_feedback_once(
    world, release_storage, settings, django_capture_on_commit_callbacks
):
    settings.TRAJHUB_RELEASE_SHARD_TASK_ROWS = 1
    with django_capture_on_commit_callbacks(execute=True):
        result = services.release_run(force=True)
    assert result.action == "sharded", result.message
    release = result.release
    release.refresh_from_db()
    assert release.status == "published"
    rows = read(release_storage / release.prefix, "step_feedback")
    keys = [(row["id"], row["step"]) for row in rows]
    assert len(keys) == len(set(keys)) and {key[0] for key in keys} == {
        world["rated"].share_id,
        world["tied"].share_id,
    }
    assert len(read(release_storage / release.prefix, "preferences")) == 2


# --- the libraries, read the way a researcher reads the release ---------------------------


def _offline_datasets(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    assert os.environ["HF_HUB_OFFLINE"] == "1"
    return datasets


def _trl_data_utils():
    """TRL's data helpers. A test-only install (.ci/run installs it, as it does harbor): a
    machine without it skips, CI fails instead."""
    try:
        from trl import data_utils
    except ImportError:
        if REQUIRE_SERVICES:
            raise
        pytest.skip("trl is not installed (pip install trl==1.16.0; .ci/run installs it)")
    return data_utils


CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}"
    "{% if m['tool_calls'] %}{% for c in m['tool_calls'] %}"
    "<call>{{ c['function']['name'] }} {{ c['function']['arguments'] }}</call>"
    "{% endfor %}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _tiny_tokenizer():
    """A WordLevel tokenizer built here (no download), wrapped as transformers wraps any fast
    tokenizer, with a chat template set on it."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "<|end|>": 1, "<|assistant|>": 2, "<|user|>": 3, "<|tool|>": 4}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def test_new_feedback_alone_makes_a_new_release(world, release_storage):
    first = publish()
    assert services.release_run(force=True).action == "nothing_new"
    ann, _bob, _cy = world["readers"]
    give(world["rated"], world["steps"][0], ann, comment="Seen later, released next time.")
    result = services.release_run(force=True)
    assert result.action == "published", result.message
    second = result.release
    assert second.added_ids == second.removed_ids == [] and second.feedback_added == 1
    assert second.previous_id == first.pk and not second.removal_only
    assert "Seen later, released next time." in everything(second, release_storage)
    assert "Seen later" not in everything(first, release_storage)


def test_a_correction_a_moderator_rejects_after_publishing_is_removed(
    world, release_storage, moderator, django_capture_on_commit_callbacks
):
    first = publish()
    ann, _bob, _cy = world["readers"]
    note = StepNote.objects.get(author=ann.user, kind="correction")
    with django_capture_on_commit_callbacks(execute=True):
        moderating.note_decide(note=note, moderator=moderator, approve=False)
    first.refresh_from_db()
    assert first.is_superseded
    removal = latest()
    assert removal.removal_only and removal.pk != first.pk
    assert "Run the tests before editing." not in everything(removal, release_storage)
    assert [item["id"] for item in removal.feedback_removed] == [note.public_id]


def test_a_scheduled_run_finds_feedback_no_signal_told_of(world, release_storage):
    first = publish()
    # Outdated by a write that sends no signal: the next run still finds it.
    StepNote.objects.filter(kind="comment").update(outdated=True)
    result = services.release_run(removals_only=True)
    assert result.action == "published", result.message
    first.refresh_from_db()
    assert first.superseded_by == result.release
    assert "A sensible first look." not in everything(result.release, release_storage)
