"""The registry of extra release configs: configs whose rows another app builds (apps.learn's
synthesized examples), registered from that app's `AppConfig.ready()`, so that the release app
never imports it.

A registered config gets its columns, folder and card line in row_schema's tables (after the
trajectory configs, in the order registered); the build writes the rows its source yields for
each release (or shard's id range), and the release's `dataset_info.json` holds what its
`dataset_info` returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from apps.datasets import row_schema

if TYPE_CHECKING:
    from apps.datasets.models import Release


class RowSource(Protocol):
    def __call__(
        self, release: Release, *, first_id: int = 0, last_id: int | None = None
    ) -> Iterable[dict[str, dict[str, Any]]]:
        """For each item (e.g. one example) of the release's trajectories with ids in
        [first_id, last_id], in trajectory id order: {config name: its row}."""
        ...


@dataclass(frozen=True)
class ReleaseConfig:
    """One config of every release: its name, columns (row_schema.Type), folder, the line the
    card gives it, and which of its top-level columns are free text (no Parquet statistics)."""

    name: str
    columns: dict[str, row_schema.Type]
    directory: str
    description: str
    free_text: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ExtraConfigs:
    """Configs registered together, whose rows one source yields."""

    configs: tuple[ReleaseConfig, ...]
    rows: RowSource
    dataset_info: Callable[[], dict[str, Any]] = field(default=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(config.name for config in self.configs)


_registered: list[ExtraConfigs] = []


def register(
    *configs: ReleaseConfig,
    rows: RowSource,
    dataset_info: Callable[[], dict[str, Any]] = dict,
) -> None:
    """Add `configs` to every release from now on, their rows yielded by `rows`, and
    `dataset_info()`'s entries to the release's `dataset_info.json`. Registering the same names
    again replaces them."""
    extra = ExtraConfigs(configs=tuple(configs), rows=rows, dataset_info=dataset_info)
    for config in configs:
        row_schema.add_config(
            config.name,
            config.columns,
            directory=config.directory,
            description=config.description,
            free_text=config.free_text,
        )
    _registered[:] = [other for other in _registered if not set(other.names) & set(extra.names)]
    _registered.append(extra)


def registered() -> list[ExtraConfigs]:
    """What was registered, in order."""
    return list(_registered)


def dataset_info() -> dict[str, Any]:
    """The release's `dataset_info.json` (LLaMA-Factory's entries): every registration's."""
    info: dict[str, Any] = {}
    for extra in _registered:
        info.update(extra.dataset_info())
    return info
