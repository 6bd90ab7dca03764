"""/stats/: the public collection at a glance, as server-rendered SVG charts and tables."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from apps.stats import charts
from apps.stats.first_wrong import first_wrong_histogram
from apps.stats.selectors import cached_rendering, collection_stats
from apps.trajectories.templatetags.trajhub_site import format_label


@require_safe
def stats_page(request: HttpRequest) -> HttpResponse:
    stats = collection_stats()
    # The charts and tables are the same for everyone until the numbers change, and drawing
    # them was most of a warm page's time: kept as HTML beside the numbers they show.
    collection = cached_rendering(stats, "page", lambda: _collection_html(stats))
    first_wrong = first_wrong_histogram()
    response = render(
        request,
        "stats/stats.html",
        {
            "collection": mark_safe(collection),
            "first_wrong": first_wrong,
            "first_wrong_chart": charts.linked_columns(
                [
                    [
                        f"{bar['label']} of the steps",
                        bar["marks"],
                        bar["browse"],
                        f"{bar['decile'] * 10}%",
                    ]
                    for bar in first_wrong["bars"]
                ],
                title="First-wrong marks by where in the run they are",
            ),
        },
    )
    # Public numbers, the same for everyone; shared caches may keep them briefly.
    response["Cache-Control"] = "public, max-age=60"
    return response


def _collection_html(stats: dict[str, Any]) -> str:
    formats = [[format_label(name), count] for name, count in stats["by_format"]]
    releases = [[f"v{version} · {day}", rows] for version, day, rows in stats["releases"]]
    sections = [
        (
            "per-week",
            f"Shared per week (last {len(stats['per_week'])} weeks)",
            "Week of",
            stats["per_week"],
            charts.columns(stats["per_week"], title="Public trajectories shared per week"),
        ),
        (
            "by-agent",
            "By agent",
            "Agent",
            stats["by_agent"],
            charts.bars(stats["by_agent"], title="Trajectories by agent"),
        ),
        (
            "by-model",
            "By model",
            "Model",
            stats["by_model"],
            charts.bars(stats["by_model"], title="Trajectories by model"),
        ),
        (
            "by-format",
            "By format",
            "Format",
            formats,
            charts.bars(formats, title="Trajectories by format"),
        ),
        (
            "by-polarity",
            "By rating",
            "Rating",
            stats["by_polarity"],
            charts.bars(stats["by_polarity"], title="Trajectories by the sharer's rating"),
        ),
        (
            "length",
            "Length (steps)",
            "Steps",
            stats["length"],
            charts.bars(stats["length"], title="Trajectories by number of steps"),
        ),
        (
            "duration",
            f"Duration ({stats['with_duration']:,} with timestamps)",
            "Duration",
            stats["duration"],
            charts.bars(stats["duration"], title="Trajectories by duration"),
        ),
        (
            "releases",
            "Dataset releases (rows)",
            "Release",
            releases,
            charts.bars(releases, title="Rows in each published release"),
        ),
    ]
    return render_to_string(
        "stats/_collection.html",
        {"stats": stats, "sections": sections, "success_sections": _success_sections(stats)},
    )


def _success_sections(stats: dict[str, Any]) -> list[tuple[str, str, str, list, Any]]:
    """The success-rate cards: (id, heading, column, rows with their links, chart)."""
    success = [
        (
            "success-by-model",
            "Success rate by model",
            "Model",
            "model",
            _linked(stats["success_by_model"], "model"),
        ),
        (
            "success-by-agent",
            "Success rate by agent",
            "Agent",
            "agent",
            _linked(stats["success_by_agent"], "agent"),
        ),
    ]
    return [
        (id_, heading, column, rows, charts.rates(rows, title=heading))
        for id_, heading, column, _name, rows in success
    ]


def _linked(rows: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Each rate with the browse pages it counts: its resolved runs (the bar), and its resolved
    and unresolved ones apart (the table). Runs that do not name a model or agent cannot be
    picked out by the filter: no links."""
    linked = []
    for row in rows:
        row = dict(row)
        row["unresolved"] = row["runs"] - row["resolved"]
        row["rate_text"] = f"{row['rate']:.0%}"
        row["interval_text"] = f"{row['low']:.0%}–{row['high']:.0%}"
        if row["value"]:
            base = {name: row["value"]}
            row["href"] = "/browse/?" + urlencode({**base, "outcome": "resolved"})
            row["href_unresolved"] = "/browse/?" + urlencode({**base, "outcome": "unresolved"})
        linked.append(row)
    return linked
