"""The registry of extra release configs: configs whose rows another app builds (apps.learn's
synthesized examples), registered from that app's `AppConfig.ready()`, so that the release app
never imports it.

A registered config gets its columns, folder and card line in row_schema's tables (after the
trajectory configs, in the order registered); the build writes the rows its source yields for
each release (or shard's id range), and the release's `dataset_info.json` holds what its
`dataset_info` returns.

Configs whose rows need the trajectory as the release shows it (its redacted events, the
conversation the chat configs are written from) register with `register_alongside`: their
source is asked once per batch of the build's trajectories, before the batch's events stream,
and then gives each trajectory's rows from what the build made of it, in the same pass (the
release app's own step feedback configs, feedback_configs.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from apps.datasets import row_schema

if TYPE_CHECKING:
    from apps.datasets.models import Release
    from apps.trajectories.exporters.common import Conversation
    from apps.trajectories.importers.base import CanonicalEvent


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


def _add_to_schema(configs: tuple[ReleaseConfig, ...]) -> None:
    """Give each config its columns, folder and card line in row_schema's tables."""
    for config in configs:
        row_schema.add_config(
            config.name,
            config.columns,
            directory=config.directory,
            description=config.description,
            free_text=config.free_text,
        )


def register(
    *configs: ReleaseConfig,
    rows: RowSource,
    dataset_info: Callable[[], dict[str, Any]] = dict,
) -> None:
    """Add `configs` to every release from now on, their rows yielded by `rows`, and
    `dataset_info()`'s entries to the release's `dataset_info.json`. Registering the same names
    again replaces them."""
    extra = ExtraConfigs(configs=tuple(configs), rows=rows, dataset_info=dataset_info)
    _add_to_schema(configs)
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


@dataclass(frozen=True)
class BuiltTrajectory:
    """What the build made of one trajectory: its key, share id and licence, its redacted
    events (a list index is the event's position), the conversation the chat configs were
    written from (`messages` its `openai` messages, one per turn after the system message),
    the `openai` row's `tools`, its whole redaction map and the release's redactor for it."""

    id: int
    share_id: str
    license: str
    events: list[CanonicalEvent]
    talk: Conversation
    messages: list[dict[str, Any]]
    tools: str | None
    redactions: dict[str, Any]
    redact: Callable[[str], str]


# Given one trajectory as built: {config name: its rows} (any number, in order).
TrajectoryRows = Callable[[BuiltTrajectory], dict[str, list[dict[str, Any]]]]


class BatchSource(Protocol):
    def __call__(self, release: Release, ids: list[int]) -> TrajectoryRows:
        """Read what the rows of these trajectories (one batch, in id order) need; the
        returned function is then called for each of them, with no query in between."""
        ...


@dataclass(frozen=True)
class AlongsideConfigs:
    """Configs registered together, whose rows are made from each trajectory as built."""

    configs: tuple[ReleaseConfig, ...]
    batch: BatchSource

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(config.name for config in self.configs)


_alongside: list[AlongsideConfigs] = []


def register_alongside(*configs: ReleaseConfig, batch: BatchSource) -> None:
    """Add `configs` to every release from now on, their rows made in the build's pass over
    the trajectories by what `batch` returns. Registering the same names again replaces them."""
    extra = AlongsideConfigs(configs=tuple(configs), batch=batch)
    _add_to_schema(configs)
    _alongside[:] = [other for other in _alongside if not set(other.names) & set(extra.names)]
    _alongside.append(extra)


def alongside() -> list[AlongsideConfigs]:
    """What was registered with register_alongside, in order."""
    return list(_alongside)
