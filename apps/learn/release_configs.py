"""The synthesized examples as configs of every dataset release, registered with
apps.datasets.configs from LearnConfig.ready(): `examples_openai` (TRL conversational) and
`examples_sharegpt` (LLaMA-Factory ShareGPT), one row per kept example whose source trajectory is
in the release, with where it came from (`source_id`, `window`: first and last event,
inclusive); their rows are exports.release_example_rows, and the release's `dataset_info.json`
is LLaMA-Factory's entry for `examples_sharegpt`."""

from __future__ import annotations

from typing import Any

from apps.datasets import configs
from apps.datasets.row_schema import MESSAGE, Type
from apps.learn import exports

_EXAMPLE: dict[str, Type] = {
    "id": "int64",
    "source_id": "string",
    "window": ["int64"],
    "instruction": "string",
    "prompt_type": "string",
}
EXAMPLES_OPENAI = configs.ReleaseConfig(
    name="examples_openai",
    columns={**_EXAMPLE, "messages": [MESSAGE], "tools": "string", "license": "string"},
    directory="examples_openai",
    description="synthesized examples (an instruction written for a window of a trajectory, "
    "then the window) as TRL conversations; `source_id` and `window` say where each came from",
    free_text=frozenset({"instruction"}),
)
EXAMPLES_SHAREGPT = configs.ReleaseConfig(
    name="examples_sharegpt",
    columns={
        **_EXAMPLE,
        "conversations": [{"from": "string", "value": "string"}],
        "system": "string",
        "tools": "string",
        "license": "string",
    },
    directory="examples_sharegpt",
    description="the same examples as LLaMA-Factory ShareGPT (`dataset_info.json` has their entry)",
    free_text=frozenset({"instruction"}),
)
# The configs built from synthesized examples rather than from whole trajectories.
EXAMPLE_CONFIGS = (EXAMPLES_OPENAI.name, EXAMPLES_SHAREGPT.name)


def llama_factory_info() -> dict[str, Any]:
    """LLaMA-Factory's entry for the ShareGPT config: its folder of Parquet files, the
    release's root as dataset_dir."""
    return exports.dataset_info(file_name=EXAMPLES_SHAREGPT.directory)


def register() -> None:
    """Make the examples configs part of every release (LearnConfig.ready())."""
    configs.register(
        EXAMPLES_OPENAI,
        EXAMPLES_SHAREGPT,
        rows=exports.release_example_rows,
        dataset_info=llama_factory_info,
    )
