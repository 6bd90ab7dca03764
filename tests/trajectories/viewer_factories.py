"""Trajectories for the viewer tests and the page benchmark.

`ingest()` stores a real file through the ingest service (images moved out, as in production),
then sets the review state and redactions a scan would have set. `openhands_session()` generates
an OpenHands V0 event array of any length, with screenshots and long outputs.
"""

from __future__ import annotations

import base64
import io
import json
import zlib
from datetime import UTC, datetime, timedelta

from apps.trajectories.models import Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest


def ingest(
    data: bytes,
    *,
    owner=None,
    visibility: str = "private",
    review_state: str = "approved",
    redactions: dict[str, str] | None = None,
    title: str = "",
    index: int = 0,
    format: str | None = None,
) -> Trajectory:
    options = ShareOptions(
        visibility=visibility,
        license_agreed=visibility == "public",
        title=title,
        format=format,
        client_ip=f"10.9.{index // 250}.{index % 250 + 1}",
    )
    result = trajectory_ingest(data=data, user=owner, options=options)
    assert result.stored, result.errors
    trajectory = result.stored[index].trajectory
    # The envelope's own `permissions` may have chosen otherwise: the test says what it wants.
    Trajectory.objects.filter(pk=trajectory.pk).update(
        visibility=visibility, review_state=review_state, redactions=redactions or {}
    )
    trajectory.refresh_from_db()
    return trajectory


def png(width: int = 64, height: int = 40, shade: int = 0) -> bytes:
    """A small valid PNG (no Pillow needed): a gradient, different for each `shade`."""
    raw = b"".join(
        b"\x00"
        + b"".join(
            bytes(((x * 4 + shade * 37) % 256, (y * 6 + shade) % 256, (x + y + shade * 91) % 256))
            for x in range(width)
        )
        for y in range(height)
    )

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")
        )

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    out = io.BytesIO()
    out.write(b"\x89PNG\r\n\x1a\n")
    out.write(chunk(b"IHDR", header))
    out.write(chunk(b"IDAT", zlib.compress(raw)))
    out.write(chunk(b"IEND", b""))
    return out.getvalue()


def data_url(blob: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(blob).decode()


def openhands_session(
    steps: int, *, screenshots: int = 20, output_lines: int = 120, distinct_images: int = 20
) -> list[dict]:
    """An OpenHands V0 event array of `steps` events: a user message, then rounds of
    command + long output, edit + result, browse + screenshot, think; a finish at the end."""
    start = datetime(2025, 6, 2, 14, 0, tzinfo=UTC)
    images = [data_url(png(shade=n)) for n in range(max(distinct_images, 1))]
    events: list[dict] = []
    shots = 0

    def stamp(n: int) -> str:
        return (start + timedelta(seconds=3 * n)).replace(tzinfo=None).isoformat()

    def add(event: dict) -> None:
        event["id"] = len(events)
        event["timestamp"] = stamp(len(events))
        events.append(event)

    add(
        {
            "source": "user",
            "message": "Fix the failing tests",
            "action": "message",
            "args": {
                "content": "Fix the failing tests in `app/` and explain what was wrong.",
                "image_urls": [],
                "wait_for_response": False,
            },
        }
    )
    round_no = 0
    while len(events) < steps - 1:
        round_no += 1
        kind = round_no % 4
        if kind == 1:
            command = f"pytest -x tests/test_{round_no}.py"
            add(
                {
                    "source": "agent",
                    "message": f"Running command: {command}",
                    "action": "run",
                    "args": {
                        "command": command,
                        "thought": f"Run the tests of round {round_no}.",
                        "is_input": False,
                        "blocking": False,
                        "hidden": False,
                        "confirmation_state": "confirmed",
                        "security_risk": -1,
                    },
                    "llm_metrics": {
                        "accumulated_cost": round(0.01 * round_no, 4),
                        "accumulated_token_usage": {
                            "prompt_tokens": 1000 * round_no,
                            "completion_tokens": 50 * round_no,
                        },
                    },
                }
            )
            lines = "\n".join(
                f"tests/test_{round_no}.py::test_case_{n} PASSED   [{n * 100 // output_lines:3d}%]"
                for n in range(output_lines)
            )
            add(
                {
                    "source": "agent",
                    "message": f"Command `{command}` executed with exit code 1.",
                    "cause": len(events) - 1,
                    "observation": "run",
                    "content": lines,
                    "extras": {
                        "command": command,
                        "metadata": {"exit_code": 1, "working_dir": "/workspace"},
                    },
                    "success": False,
                }
            )
        elif kind == 2:
            path = f"/workspace/app/module_{round_no}.py"
            old = "\n".join(f"def f{n}(x):\n    return x + {n}" for n in range(20))
            new = old.replace("return x + 3", "return x - 3")
            add(
                {
                    "source": "agent",
                    "message": f"I edited the file {path}.",
                    "action": "edit",
                    "args": {
                        "path": path,
                        "command": "str_replace",
                        "old_str": "    return x + 3",
                        "new_str": "    return x - 3",
                        "thought": "Fix the sign.",
                    },
                }
            )
            add(
                {
                    "source": "agent",
                    "message": f"I edited the file {path}.",
                    "cause": len(events) - 1,
                    "observation": "edit",
                    "content": f"The file {path} has been edited.",
                    "extras": {
                        "path": path,
                        "prev_exist": True,
                        "old_content": old,
                        "new_content": new,
                    },
                }
            )
        elif kind == 3:
            url = f"http://localhost:8080/page/{round_no}"
            add(
                {
                    "source": "agent",
                    "message": f"I am browsing the URL: {url}",
                    "action": "browse",
                    "args": {"url": url, "thought": "Check the page."},
                }
            )
            extras = {
                "url": url,
                "trigger_by_action": "browse",
                "error": False,
                "open_pages_urls": [url],
                "active_page_index": 0,
            }
            if shots < screenshots:
                extras["screenshot"] = images[shots % len(images)]
                shots += 1
            add(
                {
                    "source": "environment",
                    "message": f"Visited {url}",
                    "cause": len(events) - 1,
                    "observation": "browse",
                    "content": f"# Page {round_no}\n" + "text line\n" * 30,
                    "extras": extras,
                }
            )
        else:
            add(
                {
                    "source": "agent",
                    "message": "I am thinking...",
                    "action": "think",
                    "args": {
                        "thought": f"Round {round_no}: the failure is **probably** in `module_{round_no}`."
                    },
                }
            )
    add(
        {
            "source": "agent",
            "message": "Done",
            "action": "finish",
            "args": {
                "final_thought": "All tests pass now.",
                "outputs": {"fixed": round_no},
                "thought": "",
            },
        }
    )
    return events[:steps]


def session_bytes(steps: int, **kwargs) -> bytes:
    return json.dumps(openhands_session(steps, **kwargs)).encode()
