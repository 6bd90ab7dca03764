"""Learn-by-interact in Django admin: runs (start one, see its LLM usage and kept / dropped per
filter) and examples next to their source window with the filters' verdicts. Read-only: every
change goes through apps.learn.services."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from apps.core.admin import ReadOnlyAdmin
from apps.learn import services, tasks
from apps.learn.estimate import run_estimate
from apps.learn.llm import NOT_CONFIGURED, LLMNotConfigured
from apps.learn.models import Example, SynthesisRun

START_PERMISSION = "learn.add_synthesisrun"


def _warn_if_not_configured(request) -> None:
    if not services.llm_config().configured:
        messages.warning(request, NOT_CONFIGURED)


@admin.register(SynthesisRun)
class SynthesisRunAdmin(ReadOnlyAdmin):
    change_list_template = "admin/learn/synthesisrun/change_list.html"
    list_display = [
        "id",
        "state",
        "model",
        "progress",
        "llm_calls",
        "llm_retries",
        "llm_failures",
        "tokens",
        "cost",
        "stopped_because",
        "started_at",
    ]
    list_filter = ["state"]
    fields = [
        "state",
        "model",
        "judge_models",
        "prompt_version",
        "limit",
        "progress",
        "llm_calls",
        "llm_retries",
        "llm_failures",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "filter_report",
        "error",
        "started_at",
        "finished_at",
    ]
    readonly_fields = fields

    @admin.display(description="trajectories")
    def progress(self, run: SynthesisRun) -> str:
        return f"{run.trajectories_done} / {run.trajectories_total}"

    @admin.display(description="stopped because")
    def stopped_because(self, run: SynthesisRun) -> str:
        """Why a failed run stopped (an early stop says which model could not be read)."""
        return run.error[:160] + ("…" if len(run.error) > 160 else "") if run.error else ""

    @admin.display(description="tokens (prompt + completion)")
    def tokens(self, run: SynthesisRun) -> str:
        return f"{run.prompt_tokens} + {run.completion_tokens}"

    @admin.display(description="kept / dropped per filter")
    def filter_report(self, run: SynthesisRun) -> str:
        stats = run.stats or {}
        rows = [
            (name, counts.get("kept", ""), counts.get("dropped", ""))
            for name, counts in stats.items()
            if name not in ("repeats", "total")
        ]
        if not rows:
            return "-"
        total = stats.get("total", {})
        return format_html(
            "<table><tr><th>filter</th><th>kept</th><th>dropped</th></tr>{}</table>"
            "<p>{} repeated steps removed; {} examples: kept {}, dropped {}, not judged {}</p>",
            format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", rows),
            stats.get("repeats", {}).get("removed", 0),
            total.get("candidates", 0),
            total.get("kept", 0),
            total.get("dropped", 0),
            total.get("not_judged", 0),
        )

    def get_urls(self):
        return [
            path(
                "start/",
                self.admin_site.admin_view(self.start_view),
                name="learn_synthesisrun_start",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        _warn_if_not_configured(request)
        extra = {"can_start": _may_start(request.user)}
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def start_view(self, request):
        """POST: start a run on the workers (one task per trajectory), or (`dry_run`) say what
        it would spend without starting it."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        back = HttpResponseRedirect(reverse("admin:learn_synthesisrun_changelist"))
        if not _may_start(request.user):
            # A run spends LLM calls: viewing runs is not enough to start one.
            raise PermissionDenied("starting a synthesis run needs the permission to add one")
        if request.POST.get("dry_run"):
            messages.info(request, run_estimate().describe())
            return back
        try:
            run = services.run_start()
        except LLMNotConfigured as error:
            messages.error(request, str(error))
            return back
        transaction.on_commit(lambda: tasks.synthesis_run.delay(run.pk))
        messages.success(
            request, f"Run {run.pk} started over {run.trajectories_total} trajectories."
        )
        return back


def _may_start(user) -> bool:
    """A run spends money on LLM calls: staff with the permission to add runs only."""
    return user.is_active and user.is_staff and user.has_perm(START_PERMISSION)


@admin.register(Example)
class ExampleAdmin(ReadOnlyAdmin):
    list_display = ["id", "short_instruction", "state", "dropped_by", "prompt_type", "source"]
    list_filter = ["state", "dropped_by", "prompt_type"]
    search_fields = ["instruction"]
    list_select_related = ["window", "trajectory"]
    fields = [
        "instruction",
        "state",
        "dropped_by",
        "prompt_type",
        "prompt_version",
        "model",
        "source",
        "side_by_side",
        "created_at",
    ]
    readonly_fields = fields

    class Media:
        css = {"all": ["css/learn-admin.css"]}

    def changelist_view(self, request, extra_context=None):
        _warn_if_not_configured(request)
        return super().changelist_view(request, extra_context)

    @admin.display(description="instruction")
    def short_instruction(self, example: Example) -> str:
        text = example.instruction
        return text if len(text) <= 100 else text[:99] + "…"

    @admin.display(description="source window")
    def source(self, example: Example) -> str:
        window = example.window
        return format_html(
            '<a href="/t/{}/#step-{}">{}…</a> events {}–{} ({} actions)',
            example.trajectory.share_id,
            window.start_position + 1,
            example.trajectory.share_id[:12],
            window.start_position,
            window.end_position,
            window.num_actions,
        )

    @admin.display(description="window and verdicts")
    def side_by_side(self, example: Example) -> str:
        steps = format_html_join(
            "",
            '<tr><th>{}</th><td class="learn-at" title="event positions">{}</td>'
            "<td><pre>{}</pre></td></tr>",
            (
                (s.get("role"), _positions(s), s.get("text") or "(none)")
                for s in example.window.steps
            ),
        )
        verdicts = format_html_join(
            "",
            '<tr><th>{}</th><td class="{}">{}</td><td>{}</td></tr>',
            (
                (
                    v.get("filter"),
                    "learn-kept" if v.get("kept") else "learn-dropped",
                    "kept" if v.get("kept") else "dropped",
                    v.get("reason") or "",
                )
                for v in example.verdicts
            ),
        ) or format_html("<tr><td>{}</td></tr>", "not filtered yet")
        return format_html(
            '<div class="learn-side"><table class="learn-window"><caption>Source window (as the '
            'public page shows it)</caption>{}</table><table class="learn-verdicts"><caption>'
            "Filter verdicts</caption>{}</table></div>",
            steps,
            verdicts,
        )


def _positions(step: dict) -> str:
    first, last = step.get("first"), step.get("last")
    return str(first) if first == last else f"{first}–{last}"
