"""Parts of "download all my data" that apps above owners hold (step feedback, issue 23): each
registers a named function of the account from its AppConfig.ready(), and the archive gets
`<name>.json` with what it returns. Owners never import those apps."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apps.accounts.models import User

Section = Callable[["User"], Any]
_SECTIONS: dict[str, tuple[Section, str]] = {}


def register_export_section(name: str, section: Section, *, description: str) -> None:
    """Add `<name>.json` (what `section(user)` returns, JSON-serialisable) to every archive;
    `description` is its line in the archive's README."""
    _SECTIONS[name] = (section, description)


def export_sections() -> list[tuple[str, Section, str]]:
    return [(name, section, text) for name, (section, text) in sorted(_SECTIONS.items())]
