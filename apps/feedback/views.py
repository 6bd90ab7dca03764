"""The feedback pages: one step's feedback with its forms (/t/<id>/steps/<n>/feedback, which
works without JavaScript), the notes fragment and the summary the viewer's feedback.js loads.

Access is the trajectory page's (`trajectory_access`: visible_to() plus the password holder who
unlocked the share in this session); anything the caller may not see is the page's one 404.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods, require_safe

from apps.core.http import client_ip
from apps.core.ratelimit import RateLimited
from apps.feedback import moderating, selectors, services
from apps.feedback.accounts import public_feedback_of
from apps.feedback.errors import FeedbackError
from apps.feedback.models import CorrectionMode, ReportReason
from apps.feedback.rendering import notes_html
from apps.trajectories.rendering import ViewContext, card_html, present_event
from apps.trajectories.rendering.text import marks_for
from apps.trajectories.selectors.viewer import Access, trajectory_access

DONE = {
    "rating": "Your rating is saved.",
    "first_wrong": "Your mark is saved.",
    "correction": "Your correction is saved.",
    "comment": "Your comment is saved.",
    "deleted": "Deleted.",
    "rejected": "The correction is marked rejected.",
    "restored": "The correction is no longer marked rejected.",
    "reported": "Thank you: a moderator will look at it.",
    "switched": "Saved.",
}


def _private(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Cookie"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _opened(request: HttpRequest, share_id: str) -> tuple[Access, selectors.Reader]:
    access = trajectory_access(request, share_id)
    user: Any = getattr(request, "user", None)
    return access, selectors.reader_for(access.trajectory, user, is_holder=access.is_holder)


def _author(request: HttpRequest, reader: selectors.Reader) -> services.Author:
    return services.Author(
        user=reader.user, is_holder=reader.is_holder, client_ip=client_ip(request)
    )


def _step_number(step: str) -> int:
    number = int(step)
    if number < 1:
        raise Http404("no such step")
    return number


def _page(
    request: HttpRequest,
    access: Access,
    reader: selectors.Reader,
    number: int,
    *,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    trajectory = access.trajectory
    try:
        event = services.step_event(trajectory, number)
    except FeedbackError:
        raise Http404("no such step") from None
    marks = marks_for(trajectory, show_original=access.show_original, shown=[event])
    ctx = ViewContext(
        share_id=trajectory.share_id,
        marks=marks,
        started_at=trajectory.started_at,
        dropped_images=frozenset(trajectory.dropped_images or ()),
    )
    base = f"/t/{trajectory.share_id}/"
    feedback = selectors.step_feedback(trajectory, event, reader)
    if request.headers.get("X-Requested-With") == "fetch" and request.GET.get("part") == "notes":
        return _private(
            render(request, "feedback/_notes.html", {"feedback": feedback, "base": base})
        )
    mine = {note.kind: note for note in feedback.corrections + feedback.comments if note.mine}
    context = {
        "trajectory": trajectory,
        "title": marks.plain(trajectory.title) or f"Trajectory {trajectory.share_id[:12]}",
        "card": mark_safe(card_html(present_event(event, ctx), base)),  # escaped by card_html
        "feedback": feedback,
        "reader": reader,
        "base": base,
        "step": number,
        "total": trajectory.num_events,
        "my_correction": mine.get("correction"),
        "my_comment": mine.get("comment"),
        "modes": CorrectionMode.choices,
        "report_reasons": ReportReason.choices,
        "done": DONE.get(request.GET.get("done", ""), ""),
        "error": error,
        "is_owner": reader.is_owner,
        "site_license": settings.TRAJHUB_LICENSE,
    }
    return _private(render(request, "feedback/step.html", context, status=status))


@require_http_methods(["GET", "HEAD", "POST"])
def step_feedback_page(request: HttpRequest, share_id: str, step: str) -> HttpResponse:
    access, reader = _opened(request, share_id)
    number = _step_number(step)
    if request.method != "POST":
        return _page(request, access, reader, number)
    try:
        done = _post(request, access, reader, number)
    except RateLimited as exc:
        response = _page(request, access, reader, number, error=exc.message, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    except FeedbackError as exc:
        if exc.status_code == 404:
            raise Http404(exc.message) from None
        return _page(request, access, reader, number, error=exc.message, status=exc.status_code)
    return redirect(f"/t/{access.trajectory.share_id}/steps/{number}/feedback?done={done}")


def _note(access: Access, reader: selectors.Reader, public_id: str) -> Any:
    note = selectors.note_for(access.trajectory, public_id, reader)
    if note is None:
        raise FeedbackError("no such correction or comment", "note", status_code=404)
    return note


def _post(request: HttpRequest, access: Access, reader: selectors.Reader, number: int) -> str:
    """One form's write; returns what to say it did."""
    what = request.POST.get("what", "")
    author = _author(request, reader)
    trajectory = access.trajectory
    if what == "rating":
        value = request.POST.get("rating") or None
        services.step_feedback_give(trajectory=trajectory, step=number, author=author, rating=value)
    elif what == "first_wrong":
        on = request.POST.get("first_wrong") == "on"
        services.step_feedback_give(
            trajectory=trajectory, step=number, author=author, first_wrong=on
        )
    elif what in ("correction", "comment"):
        text = "" if "delete" in request.POST else request.POST.get("text", "")
        if "license_asked" in request.POST:
            services.feedback_licence_answer(
                trajectory=trajectory,
                author=author,
                agreed=request.POST.get("license_agreed") == "on",
            )
        extra = {"mode": request.POST.get("mode") or CorrectionMode.MESSAGE}
        services.step_feedback_give(
            trajectory=trajectory,
            step=number,
            author=author,
            **{what: text},
            **(extra if what == "correction" else {}),
        )
        return "deleted" if not text else what
    elif what in ("reject", "restore"):
        services.note_owner_reject(
            note=_note(access, reader, request.POST.get("note", "")),
            author=author,
            rejected=what == "reject",
        )
        return "rejected" if what == "reject" else "restored"
    elif what == "report":
        moderating.note_report(
            note=_note(access, reader, request.POST.get("note", "")),
            reason=request.POST.get("reason", ""),
            text=request.POST.get("text", ""),
            user=reader.user,
            client_ip=author.client_ip,
        )
        return "reported"
    elif what == "switch":
        services.feedback_switch(
            trajectory=trajectory, author=author, on=request.POST.get("on") == "on"
        )
        return "switched"
    else:
        raise FeedbackError("unknown form", "what")
    return what


NOTES_MAX_STEPS = 500


@require_safe
def trajectory_feedback_notes(request: HttpRequest, share_id: str) -> HttpResponse:
    """The corrections and comments of the steps in `steps` (comma-separated page numbers, at
    most NOTES_MAX_STEPS), one escaped <section data-step> each: what feedback.js puts next to
    the cards of a chunk in one request."""
    access, reader = _opened(request, share_id)
    steps: list[int] = []
    for part in request.GET.get("steps", "").split(",")[:NOTES_MAX_STEPS]:
        if part.strip().isdigit() and int(part) >= 1:
            steps.append(int(part))
    rows = selectors.notes_of_steps(access.trajectory, reader, steps) if steps else []
    body = notes_html(rows, f"/t/{access.trajectory.share_id}/")
    return _private(HttpResponse(body, content_type="text/html; charset=utf-8"))


@require_safe
def trajectory_feedback_summary(request: HttpRequest, share_id: str) -> HttpResponse:
    """What viewer's feedback.js draws: per step counts, the reader's own, whether it may give."""
    access, reader = _opened(request, share_id)
    return _private(JsonResponse(selectors.trajectory_summary(access.trajectory, reader)))


@require_safe
def profile_feedback(request: HttpRequest, username: str) -> HttpResponse:
    """/u/<username>/feedback: the account's public corrections and comments."""
    from apps.accounts.selectors import profile_user

    user = profile_user(username)
    if user is None:
        raise Http404("no such user")
    return render(
        request,
        "feedback/profile.html",
        {"profile": user, "rows": public_feedback_of(user)},
    )
