"""The dataset card (README.md with YAML front matter, as the Hugging Face Hub reads it) and
manifest.json of a release."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db.models import Case, CharField, Count, F, Value, When

from apps.datasets import configs, feedback_configs, row_schema
from apps.datasets.models import Release, ReleaseEntry
from apps.datasets.parquet import WrittenFile
from apps.trajectories.image_rule import image_rule
from apps.trajectories.services.redaction_index import trajectory_redaction_index_refresh
from apps.trajectories.shown import SHOWN_FIELDS

RULES = {
    "broken_import": "the stored events do not match what the import recorded",
    "too_short": "empty or near-empty (fewer than {min_events} events or {min_chars} characters)",
    "duplicate": "exact or near duplicates, and all but the longest of a chain of continuations",
    "stale_scan": "scanned by older rules than the current ones",
}


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """YAML block style for dicts / lists of scalars; strings are JSON-quoted (valid YAML)."""
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, Mapping | list) and item:
                lines.append(f"{pad}{key}:")
                lines.extend(_yaml(item, indent + 1))
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
    else:
        for item in value:
            if isinstance(item, Mapping) and item:
                first, *rest = _yaml(item, indent + 1)
                lines.append(f"{pad}- {first.strip()}")
                lines.extend(rest)
            elif isinstance(item, list) and item:
                lines.append(f"{pad}-")
                lines.extend(_yaml(item, indent + 1))
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    return lines


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return json.dumps(str(value))


def size_category(rows: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if rows < limit:
            return name
    return "100K<n<1M" if rows < 1_000_000 else "n>1M"


def _counts(release: Release, field: str) -> list[tuple[str, int]]:
    """Entries per value of `field`: a column of our own (format, polarity) or of the
    redacted view (`shown_agent`, `shown_model`: current because the build refreshed every
    entry's index first, `index_entries`), never a raw field."""
    column: Any = F(f"trajectory__{field}")
    if field in SHOWN_FIELDS:
        # A map changed since that refresh: its stale values count as unknown, never raw.
        column = Case(
            When(trajectory__indexed_at__isnull=False, then=column),
            default=Value(""),
            output_field=CharField(),
        )
    rows = (
        ReleaseEntry.objects.filter(release=release)
        .annotate(value=column)
        .values_list("value")
        .annotate(n=Count("id"))
        .order_by("-n", "value")
    )
    return [(value or "(unknown)", n) for value, n in rows]


def index_entries(release: Release) -> int:
    """Bring the redaction index (and so the redacted view's columns) of every entry whose
    index is not current up to date: the card counts by them. Returns how many were rebuilt."""
    stale = ReleaseEntry.objects.filter(
        release=release, trajectory__isnull=False, trajectory__indexed_at__isnull=True
    ).values_list("trajectory_id", flat=True)
    done = 0
    for pk in list(stale):
        done += trajectory_redaction_index_refresh(trajectory_id=pk)
    return done


def front_matter(release: Release, files: list[WrittenFile]) -> dict:
    configs = []
    infos = []
    for config in row_schema.CONFIGS:
        mine = [f for f in files if f.config == config]
        if not any(f.num_rows for f in mine):
            # An empty config (no synthesized examples yet) keeps its zero-row file, which
            # pyarrow and pandas read, but is not offered to `datasets`: 5.2 refuses to load a
            # split without rows ("Instruction 'train' corresponds to no data!").
            continue
        configs.append(
            {
                "config_name": config,
                **({"default": True} if config == "default" else {}),
                "data_files": [
                    {"split": "train", "path": f"{row_schema.CONFIG_DIRS[config]}/train-*.parquet"}
                ],
            }
        )
        # As `datasets` fills them: a split's `num_bytes` and `dataset_size` are the data in
        # Arrow memory (what loading it takes), `download_size` the files.
        in_memory = sum(f.num_bytes for f in mine)
        infos.append(
            {
                "config_name": config,
                "features": row_schema.card_features(config),
                "splits": [
                    {
                        "name": "train",
                        "num_bytes": in_memory,
                        "num_examples": sum(f.num_rows for f in mine),
                    }
                ],
                "download_size": sum(f.size for f in mine),
                "dataset_size": in_memory,
            }
        )
    return {
        "license": settings.TRAJHUB_LICENSE.lower(),
        "pretty_name": f"{settings.TRAJHUB_RELEASE_NAME} {release.name}",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "size_categories": [size_category(release.num_rows)],
        "tags": ["agents", "trajectories", "openhands", "tool-use", "code"],
        "configs": configs,
        "dataset_info": infos,
    }


def _table(rows: list[tuple[str, int]], heading: str) -> str:
    if not rows:
        return "(none)\n"
    lines = [f"| {heading} | trajectories |", "|---|---|"]
    lines += [f"| {table_cell(value)} | {count} |" for value, count in rows]
    return "\n".join(lines) + "\n"


def table_cell(value: str) -> str:
    # Agent and model names come from uploads: keep them from breaking the table or the markup.
    return value.replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")[:100]


def card_text(release: Release, files: list[WrittenFile], previous: Release | None) -> str:
    """The card: YAML front matter, then the Markdown body. Long because its template is most
    of it: one f-string, kept whole so that it reads as the card does."""
    site = settings.SITE_URL
    name = settings.TRAJHUB_RELEASE_NAME
    min_events = settings.TRAJHUB_RELEASE_MIN_EVENTS
    min_chars = settings.TRAJHUB_RELEASE_MIN_TEXT_CHARS
    gate = "\n".join(
        f"- {RULES[rule].format(min_events=min_events, min_chars=min_chars)}: "
        f"{release.excluded.get(rule, 0)} left out"
        for rule in RULES
    )
    filled = {f.config for f in files if f.num_rows}
    config_lines = "\n".join(
        f"- `{config}` ({row_schema.CONFIG_DIRS[config]}/): {row_schema.CONFIG_DESCRIPTIONS[config]}"
        + (
            ""
            if config in filled
            else " Empty in this release: its folder holds one zero-row file with the schema,"
            " and the config is left out of the list above so that `load_dataset` does not"
            " fail on it."
        )
        for config in row_schema.CONFIGS
    )
    if previous is None:
        since = f"This is the first release: {len(release.added_ids)} trajectories."
    elif release.removal_only:
        since = (
            f"A removal-only release: {previous.name} less the {len(release.removed_ids)} "
            "trajectories deleted by their contributors, made private, taken out, or hidden by "
            f"moderators since, and less the {len(release.feedback_removed)} entries of step "
            "feedback removed (see Step feedback); nothing was added. "
            f"{previous.name} is superseded by it. "
            "`manifest.json` lists what was removed."
        )
    else:
        since = (
            f"Since {previous.name}: {len(release.added_ids)} trajectories added, "
            f"{len(release.removed_ids)} removed (deleted by their contributors, made private, "
            "taken out, or hidden by moderators). `manifest.json` lists both."
        )
    if release.announced_as:
        since += (
            f" It was announced as v{release.announced_as}: a removal-only release published "
            "during its opt-out window took that number."
        )
    contact = settings.TRAJHUB_CONTACT_EMAIL
    body = f"""# {name} {release.name}

Trajectories of AI agents (OpenHands first; also SWE-agent, ShareGPT-style and OpenAI-style
conversations) that their contributors shared on [{settings.SITE_NAME}]({site}/) and made public.
{release.num_rows} trajectories. The row schema extends the
[OpenHands feedback dataset](https://huggingface.co/datasets/all-hands/openhands-feedback):
`version, feedback, permissions, timestamp, trajectory` (OpenHands steps, `args` and `extras` as
JSON text), plus `id, polarity, feedback_text, agent, model, source_format, num_events, license`.

## Configs

{config_lines}

```python
from datasets import load_dataset
rows = load_dataset("parquet", data_files="data/train-*.parquet", split="train")
```

## Step feedback

{feedback_configs.card_section(release)}
## How it was collected

Contributors shared their sessions with OpenHands' share button, by uploading an exported file
or through the API. A trajectory is in this release only when its contributor made it public and
agreed to the {settings.TRAJHUB_LICENSE} licence. Contributors with an email address were told
before the release and could take any of their trajectories out; taking out is for good until
they put it back.

## How it was cleaned

Every trajectory was scanned for secrets and personal data ({release.scanner_version}) and is
redacted exactly as on the public pages (consistent placeholders such as `<EMAIL_1>`); contact
email addresses never appear. Trajectories with secrets were held for a moderator, who approved,
rejected or hid them. The quality gate then left out:

{gate}

## Screenshots and plots

{_images_section(release)}

## What is in it

By agent:

{_table(_counts(release, "shown_agent"), "agent")}
By model:

{_table(_counts(release, "shown_model"), "model")}
By source format:

{_table(_counts(release, "source_format"), "format")}
By polarity (the contributor's thumbs up / down):

{_table(_counts(release, "polarity"), "polarity")}
## Changes

{since}

## Citation

```bibtex
@misc{{trajhub_{release.version},
  title = {{{name} {release.name}}},
  howpublished = {{\\url{{{site}/releases/{release.version}/}}}},
  year = {{{(release.published_at or release.created_at).year}}}
}}
```

## Removal

Contributors delete their trajectories at any time on {site}/me/ (or with the deletion password
of an anonymous share); anyone can ask for removal at {site}/removal/{f" or by writing to {contact}" if contact else ""}.
A deleted trajectory is left out of every later release, which lists it as removed, and this
release is then marked superseded.
"""
    return "---\n" + "\n".join(_yaml(front_matter(release, files))) + "\n---\n\n" + _unwrap(body)


def _images_section(release: Release) -> str:
    """Which image rule applied (apps/trajectories/image_rule.py) and how many of the release's
    images it withheld, each a 1x1 placeholder PNG in the `images` column."""
    from apps.datasets.selectors import images_withheld

    rule = image_rule()
    ids = ReleaseEntry.objects.filter(release=release, trajectory__isnull=False).values(
        "trajectory_id"
    )
    total, withheld = images_withheld(ids)
    if not total:
        return f"{rule.summary} This release holds no images."
    return (
        f"{rule.summary} Of the {total} images of this release, {withheld} "
        f"{'were' if withheld != 1 else 'was'} withheld: a 1x1 placeholder PNG stands in "
        f"{'their' if withheld != 1 else 'its'} place in the `images` column (rule: "
        f"`{rule.name}`)."
    )


def _unwrap(text: str) -> str:
    """Join the lines of each paragraph (the source wraps them; Markdown renderers that keep
    line breaks, the site's and the Hub's, would show them): lists, tables, headings and code
    stay as they are."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            out.append(line)
            continue
        plain = line and not line.startswith(("#", "-", "|", " ", "@", "}"))
        previous = out[-1] if out else ""
        joinable = previous and not previous.startswith(("#", "|", "```", "@", "}"))
        if not fenced and plain and joinable and not previous.endswith(":"):
            out[-1] = previous + " " + line
        else:
            out.append(line)
    return "\n".join(out)


def llama_factory_info() -> dict:
    """The release's `dataset_info.json`: LLaMA-Factory's entries of the registered configs
    (apps.learn's for the synthesized examples: ShareGPT, the `examples_sharegpt` folder of
    Parquet files, the release's root as dataset_dir)."""
    return configs.dataset_info()


def manifest(release: Release, files: list[dict], previous: Release | None, built_at: str) -> dict:
    return {
        "release": release.version,
        "name": release.name,
        "built_at": built_at,
        "previous_release": previous.version if previous is not None else None,
        "removal_only": release.removal_only,
        "scanner_version": release.scanner_version,
        "num_rows": release.num_rows,
        "rows": {
            config: sum(f["num_rows"] for f in files if f["config"] == config)
            for config in row_schema.CONFIGS
        },
        "files": files,
        "added_ids": release.added_ids,
        "removed_ids": release.removed_ids,
        "feedback_added": release.feedback_added,
        "feedback_removed": release.feedback_removed,
        "excluded": release.excluded,
    }
