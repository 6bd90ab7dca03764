from __future__ import annotations

from apps.trajectories.models import Trajectory
from tests.ingest_helpers import ingest_one


def session_events(task: str, commands: list[tuple[str, str]]) -> list[dict]:
    """An OpenHands V0 session: the user's task, then each command run and its output."""
    events: list[dict] = [
        {
            "id": 0,
            "timestamp": "2025-03-01T10:00:00",
            "source": "user",
            "message": task,
            "action": "message",
            "args": {"content": task, "image_urls": None, "wait_for_response": False},
        }
    ]
    for number, (command, output) in enumerate(commands):
        action_id = 1 + 2 * number
        events.append(
            {
                "id": action_id,
                "timestamp": "2025-03-01T10:01:00",
                "source": "agent",
                "message": f"Running command: {command}",
                "action": "run",
                "args": {"command": command, "thought": ""},
            }
        )
        events.append(
            {
                "id": action_id + 1,
                "timestamp": "2025-03-01T10:01:30",
                "source": "agent",
                "message": f"Command `{command}` executed with exit code 0.",
                "cause": action_id,
                "observation": "run",
                "content": output,
                "extras": {"command": command, "metadata": {"exit_code": 0}},
                "success": True,
            }
        )
    return events


def make_session(
    task: str,
    commands: list[tuple[str, str]],
    *,
    owner=None,
    visibility: str = "public",
    review_state: str = "approved",
    redactions: dict | None = None,
) -> Trajectory:
    trajectory = ingest_one(session_events(task, commands), user=owner)
    Trajectory.objects.filter(pk=trajectory.pk).update(
        visibility=visibility,
        review_state=review_state,
        redactions=redactions or {},
        license="MIT" if visibility == "public" else "",
    )
    trajectory.refresh_from_db()
    return trajectory


def make_example(
    trajectory: Trajectory,
    instruction: str,
    *,
    start: int = 0,
    end: int = 1,
    steps: list[dict] | None = None,
    state: str = "kept",
):
    """A window and a kept example, as a finished run leaves them (for retrieval tests)."""
    from apps.learn.models import Example, Window
    from apps.trajectories.selectors.redactions import map_digest

    steps = steps or [
        {"role": "observation", "text": trajectory.title or "task", "first": 0, "last": 0},
        {"role": "action", "text": instruction, "first": 1, "last": 1},
        {"role": "observation", "text": "done", "first": 2, "last": 2},
    ]
    window = Window.objects.create(
        trajectory=trajectory,
        start_step=start,
        end_step=end,
        start_position=steps[0]["first"],
        end_position=steps[-1]["last"],
        num_actions=end - start,
        steps=steps,
        redactions_hash=map_digest(trajectory.redactions),
        state="done",
    )
    return Example.objects.create(
        window=window,
        trajectory=trajectory,
        prompt_type="task",
        prompt_version=1,
        model="writer-1",
        instruction=instruction,
        state=state,
    )
