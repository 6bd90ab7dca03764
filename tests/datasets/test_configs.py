"""The registry of extra release configs: apps.learn's examples configs, registered from
LearnConfig.ready(), follow the trajectory configs as they did when they were written into the
row schema, and the release app imports nothing of apps.learn."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from apps.datasets import configs, row_schema
from apps.learn import exports


def test_the_examples_configs_follow_the_trajectory_configs():
    assert list(row_schema.CONFIGS) == [
        "default",
        "no_images",
        "openai",
        "sharegpt",
        "atif",
        "adp",
        "step_feedback",
        "preferences",
        "stepwise",
        "examples_openai",
        "examples_sharegpt",
    ]
    assert row_schema.TRAJECTORY_CONFIGS == (
        "default",
        "no_images",
        "openai",
        "sharegpt",
        "atif",
        "adp",
    )
    assert row_schema.CONFIG_DIRS["examples_sharegpt"] == "examples_sharegpt"
    assert "instruction" in row_schema.FREE_TEXT
    assert [extra.names for extra in configs.registered()] == [
        ("examples_openai", "examples_sharegpt")
    ]
    # The step feedback configs are made in the build's pass over the trajectories.
    assert [extra.names for extra in configs.alongside()] == [
        ("step_feedback", "preferences", "stepwise")
    ]


def test_dataset_info_is_llama_factorys_entry_for_the_sharegpt_examples():
    assert configs.dataset_info() == exports.dataset_info(file_name="examples_sharegpt")


def test_a_trajectory_config_cannot_be_registered_over():
    with pytest.raises(ValueError, match="trajectory config"):
        row_schema.add_config("default", {}, directory="x", description="x")


def test_the_release_app_imports_nothing_of_learn():
    root = Path(configs.__file__).parent
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            assert not any(name.startswith("apps.learn") for name in names), path
