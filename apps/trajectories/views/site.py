"""The public site around the trajectory viewer: home, browse, upload, the anonymous sharer's
link-and-password page, and the static pages (the dashboard is accounts').

Views are thin: reads come from selectors/site.py (every public one from `public()`), writes from
services. Everything a template shows is escaped by the template; nothing is marked safe.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.functional import cached_property
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.http import BodyError, check_declared_length, client_ip
from apps.core.ratelimit import RateLimited
from apps.trajectories import extensions
from apps.trajectories.filters import DECILE_CHOICES, ORDERINGS, TrajectoryFilter
from apps.trajectories.forms import UploadForm, format_choices
from apps.trajectories.models import Outcome, Polarity, ReviewState, Visibility
from apps.trajectories.selectors import search as search_selectors
from apps.trajectories.selectors import site as site_selectors
from apps.trajectories.selectors.search import RELEVANCE
from apps.trajectories.selectors.viewer import UNLOCKED_SESSION_KEY
from apps.trajectories.services import (
    FormatError,
    SharingRefused,
    StoredTrajectory,
    trajectory_by_password,
    trajectory_delete,
    trajectory_ingest,
)

UPLOAD_RESULT_KEY = "upload_result"
BROWSE_PAGE_SIZES = (25, 50, 100)
FILTER_FIELDS = (
    "agent",
    "model",
    "polarity",
    "source_format",
    "outcome",
    "date_from",
    "date_to",
    "has_corrections",
    "flagged",
    "flagged_at",
)
SEARCH_COUNT_CAP = 1_000  # matches counted for a search; past it, "more than 1,000"
LIST_COUNT_CAP = 10_000  # rows counted for the list without search
# The FilterSet's orderings, in words (the best match only offered with words to match).
BROWSE_ORDERINGS = [
    (key, label)
    for key, label in (
        (RELEVANCE, "Best match"),
        ("-created", "Newest first"),
        ("created", "Oldest first"),
        ("-stars", "Most starred"),
        ("-corrections", "Most corrected"),
        ("-events", "Most events"),
        ("events", "Fewest events"),
    )
    if key in ORDERINGS
]


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "trajectories/home.html",
        {
            "stats": site_selectors.public_stats(),
            "latest": site_selectors.public_latest(limit=8),
            **extensions.home_context(request),
        },
    )


class CappedPaginator(Paginator):
    """A paginator that counts at most `cap` rows.

    Counting every match of a common word among 100,000 trajectories reads them all (a second on
    PostgreSQL); nobody pages that far. Past the cap the page says "more than", and offers the
    first `cap` rows in pages.
    """

    def __init__(self, object_list, per_page: int, *, cap: int, matches=None):
        super().__init__(object_list, per_page)
        self.cap = cap
        self.capped = False
        # What is counted, when the list is a part of it (a search's ranked candidates).
        self.matches = matches

    @cached_property
    def count(self) -> int:
        counted_from = self.object_list if self.matches is None else self.matches
        counted = counted_from.order_by()[: self.cap + 1].count()
        self.capped = counted > self.cap
        return min(counted, self.cap)


def _browse_filter_data(query: QueryDict) -> tuple[QueryDict, dict[str, str]]:
    """The browse form's parameters as the shared FilterSet takes them.

    The page offers calendar days (date_from, date_to, both inclusive); the FilterSet, shared with
    the API, takes instants (created_after inclusive, created_before exclusive).
    """
    data = query.copy()
    errors: dict[str, str] = {}
    for name, target, shift in (
        ("date_from", "created_after", 0),
        ("date_to", "created_before", 1),
    ):
        raw = data.pop(name, [""])[-1].strip()
        if not raw:
            continue
        try:
            day = date.fromisoformat(raw)
        except ValueError:
            errors[name] = f"“{raw}” is not a date (YYYY-MM-DD)."
            continue
        if shift and day == date.max:
            # Inclusive means "before the next day", and the calendar has none after this one.
            errors[name] = f"“{raw}” is past the last day that can be searched."
            continue
        data[target] = (day + timedelta(days=shift)).isoformat() + "T00:00:00+00:00"
    return data, errors


@require_GET
def browse(request: HttpRequest) -> HttpResponse:
    data, errors = _browse_filter_data(request.GET)
    filterset = TrajectoryFilter(data, queryset=site_selectors.public_list())
    try:
        per_page = int(request.GET.get("per_page", BROWSE_PAGE_SIZES[0]))
    except ValueError:
        per_page = BROWSE_PAGE_SIZES[0]
    if per_page not in BROWSE_PAGE_SIZES:
        per_page = BROWSE_PAGE_SIZES[0]
    ordering = ""
    matches = None
    if filterset.is_valid() and not errors:
        queryset = filterset.qs
        ordering, matches = filterset.ordering_key, filterset.matches
    else:
        errors.update({name: " ".join(messages) for name, messages in filterset.errors.items()})
        queryset = site_selectors.public_list().none()
    searching = bool(request.GET.get("q", "").strip())
    paginator = CappedPaginator(
        queryset, per_page, cap=SEARCH_COUNT_CAP if searching else LIST_COUNT_CAP, matches=matches
    )
    if searching and not errors and paginator.count < paginator.cap:
        paginator.object_list = site_selectors.sorted_after_matching(queryset)
    page = paginator.get_page(request.GET.get("page"))
    trajectories = list(page.object_list)
    if searching and not errors:
        # A passage of each result's (redacted) text around the words: why it matched.
        snippets = search_selectors.search_snippets(trajectories, request.GET.get("q", ""))
        for trajectory in trajectories:
            if trajectory.pk in snippets:
                trajectory.snippet = search_selectors.snippet_html(
                    snippets[trajectory.pk], trajectory
                )
    return render(
        request,
        "trajectories/browse.html",
        {
            "query": request.GET,
            "errors": errors,
            "page": page,
            "trajectories": trajectories,
            "facets": site_selectors.public_facets(),
            "formats": format_choices(),
            "polarities": Polarity.choices,
            "outcomes": Outcome.choices,
            "deciles": DECILE_CHOICES,
            "orderings": [
                (key, label) for key, label in BROWSE_ORDERINGS if searching or key != RELEVANCE
            ],
            "ordering": ordering,
            "sort_links": _sort_links(request.GET, ordering) if searching and not errors else [],
            "per_page": per_page,
            "page_sizes": BROWSE_PAGE_SIZES,
            "filtered": any(
                value
                for key, value in request.GET.items()
                if key not in ("page", "per_page", "ordering")
            ),
            # Filters other than the search words: they unfold the filter panel on phones.
            "filters_active": any(request.GET.get(name) for name in FILTER_FIELDS),
        },
        # Filters that could not be used: the page explains them, and says so to machines too.
        status=400 if errors else 200,
    )


# A search's results reorder with one click: these beside the count (the form has them all).
SORT_LINKS = ((RELEVANCE, "Best match"), ("-created", "Newest"), ("-stars", "Most starred"))


def _sort_links(query: QueryDict, current: str) -> list[tuple[str, str, bool]]:
    """(label, link, is the current one) for each of SORT_LINKS, the other parameters kept
    (but the page: another order starts at its first)."""
    links = []
    for key, label in SORT_LINKS:
        if key not in ORDERINGS:
            continue
        params = query.copy()
        params.pop("page", None)
        params["ordering"] = key
        links.append((label, f"/browse/?{params.urlencode()}", key == current))
    return links


# --- Upload ----------------------------------------------------------------------------------


@csrf_exempt  # checked by _upload (csrf_protect), after the size check below
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest) -> HttpResponse:
    """GET: the upload form. POST: share the file (works without JavaScript; upload.js previews
    the file first, then lets the same form post here).

    The CSRF check reads the form, which means reading the whole body: a body announced over the
    size limit is refused before that, unread. Nothing is stored in that case, so the unchecked
    CSRF token does not matter.
    """
    if request.method == "POST":
        try:
            check_declared_length(request)
        except BodyError as exc:
            message = _sentence(exc.message)
            if exc.status == 413:
                message = f"The file is too large: {message[:1].lower()}{message[1:]}"
            return _upload_form_page(request, UploadForm(), status=exc.status, error=message)
    return _upload(request)


@csrf_protect
def _upload(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _upload_form_page(request, UploadForm())
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        status = 413 if form.has_error("file", code="too_large") else 400
        return _upload_form_page(request, form, status=status)
    user = request.user if request.user.is_authenticated else None
    try:
        result = trajectory_ingest(
            data=form.cleaned_data.pop("data"),
            user=user,
            options=form.share_options(client_ip=client_ip(request)),
        )
    except (SharingRefused, RateLimited) as exc:
        response = _upload_form_page(
            request, form, status=exc.status_code, error=_sentence(exc.message)
        )
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
        return response
    except FormatError as exc:
        return _upload_form_page(
            request,
            form,
            status=exc.status,
            error=_cannot_share(exc.message, exc.where),
            format_hint=True,
        )
    if not result.stored:
        errors = result.errors
        if len(errors) == 1 and not errors[0].get("where"):  # the file is one record
            error, errors = _cannot_share(errors[0]["message"]), []
        else:
            error = "Nothing in this file could be shared:"
        return _upload_form_page(
            request, form, status=400, error=error, record_errors=errors, format_hint=True
        )
    if user is None:
        _remember_unlocked(request, [item.trajectory.share_id for item in result.stored])
    # Post/redirect/get: reloading the result must not upload the file again. The result (with
    # the one-time passwords) waits in the session for the one page that shows it.
    request.session[UPLOAD_RESULT_KEY] = {
        "shared": [_shared_item(item) for item in result.stored],
        "record_errors": result.errors,
        "record_warnings": result.warnings,
        "anonymous": user is None,
    }
    response = redirect("upload-done")
    response.status_code = 303
    return response


@require_GET
def upload_done(request: HttpRequest) -> HttpResponse:
    """The result of the upload just made, once: the passwords leave the session as they are
    shown, so a reload (or a later visit) finds nothing and goes back to the form."""
    result = request.session.pop(UPLOAD_RESULT_KEY, None)
    if not isinstance(result, dict):
        messages.info(
            request,
            "That upload's result was shown once (its passwords are not kept). Open or delete "
            "an anonymous share from its page with its password.",
        )
        return redirect("upload")
    response = render(request, "trajectories/upload_done.html", result)
    # The page holds the one-time passwords: no cache may keep it.
    add_never_cache_headers(response)
    return response


def _upload_form_page(
    request: HttpRequest, form: UploadForm, *, status: int = 200, **context
) -> HttpResponse:
    response = render(
        request,
        "trajectories/upload.html",
        {
            "form": form,
            "max_bytes": settings.TRAJHUB_MAX_BODY_BYTES,
            "anonymous_allowed": settings.TRAJHUB_ANONYMOUS_SHARING,
            **context,
        },
        status=status,
    )
    if request.method == "POST":
        add_never_cache_headers(response)
    return response


def _cannot_share(message: str, where: str = "") -> str:
    return f"This file cannot be shared: {message}{f' ({where})' if where else ''}."


def _sentence(message: str) -> str:
    message = message.strip()
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")


def _shared_item(item: StoredTrajectory) -> dict:
    """What the result page shows of one stored trajectory, as plain values (it waits in the
    session between the upload and the page)."""
    trajectory = item.trajectory
    if trajectory.visibility != Visibility.PUBLIC:
        state = "private"
    elif trajectory.review_state == ReviewState.APPROVED:
        state = "public"
    elif trajectory.review_state == ReviewState.PENDING:
        state = "public once the automatic scan has passed"
    else:
        state = "public once a moderator has reviewed it"
    path = trajectory.get_absolute_url()
    return {
        "title": trajectory.title,
        "num_events": trajectory.num_events,
        "created": item.created,
        "password": item.password,
        "path": path,
        # The same base as the share API's `url`: the address people will share.
        "url": settings.SITE_URL + path,
        "manage_url": f"{settings.SITE_URL}{path}unlock",
        "state": state,
    }


# --- The anonymous sharer's link-and-password page ------------------------------------------


def _client_address(request: HttpRequest) -> str:
    return client_ip(request) or "unknown"


def _holder_trajectory(request: HttpRequest, share_id: str):
    """The anonymous trajectory when the posted password is one of its deletion passwords, else
    None. An unknown id and a wrong password cost the same and count against one limit, shared
    with the API's DELETE (services/passwords.py); over it, RateLimited."""
    return trajectory_by_password(
        share_id=share_id,
        password=request.POST.get("password", ""),
        client=_client_address(request),
    )


def _unlock_page(request: HttpRequest, share_id: str, *, status: int = 200, **context):
    return render(
        request,
        "trajectories/unlock.html",
        {"share_id": share_id, **context},
        status=status,
    )


def _refused(request: HttpRequest, share_id: str) -> HttpResponse:
    """The one answer to a wrong password, an unknown id, or any trajectory one may not touch."""
    return _unlock_page(request, share_id, status=404, failed=True)


def _rate_limited(request: HttpRequest, share_id: str, exc: RateLimited) -> HttpResponse:
    response = _unlock_page(request, share_id, status=429, rate_limited=True)
    response["Retry-After"] = str(exc.retry_after)
    return response


@require_http_methods(["GET", "POST"])
def trajectory_unlock(request: HttpRequest, share_id: str) -> HttpResponse:
    """GET: the form (the same for every id). POST: remember the unlock in the session."""
    if request.method == "GET":
        return _unlock_page(request, share_id)
    try:
        trajectory = _holder_trajectory(request, share_id)
    except RateLimited as exc:
        return _rate_limited(request, share_id, exc)
    if trajectory is None:
        return _refused(request, share_id)
    _remember_unlocked(request, [trajectory.share_id])
    return redirect(trajectory.get_absolute_url())


def _remember_unlocked(request: HttpRequest, share_ids: list[str]) -> None:
    """This browser session may open these trajectories as their holder (who has the password:
    it unlocked them, or just shared them and was shown the password)."""
    unlocked = [
        sid for sid in request.session.get(UNLOCKED_SESSION_KEY, []) if sid not in share_ids
    ]
    # Bounded: a session is not a place to collect every id one ever opened.
    request.session[UNLOCKED_SESSION_KEY] = [*unlocked, *share_ids][-50:]
    # A new session key with the new rights: a key planted before (session fixation) gains none.
    request.session.cycle_key()


@require_POST
def trajectory_holder_delete(request: HttpRequest, share_id: str) -> HttpResponse:
    """Delete with the deletion password, from the link-and-password page."""
    if request.POST.get("confirm") != "yes":
        return _unlock_page(request, share_id, status=400, confirm_missing=True)
    try:
        trajectory = _holder_trajectory(request, share_id)
    except RateLimited as exc:
        return _rate_limited(request, share_id, exc)
    if trajectory is None:
        return _refused(request, share_id)
    trajectory_delete(trajectory=trajectory, reason="password")
    unlocked = [sid for sid in request.session.get(UNLOCKED_SESSION_KEY, []) if sid != share_id]
    request.session[UNLOCKED_SESSION_KEY] = unlocked
    return render(request, "trajectories/deleted.html", {"share_id": share_id})


# --- Static pages --------------------------------------------------------------------------------


def _static_page(template: str):
    @require_GET
    def view(request: HttpRequest) -> HttpResponse:
        return render(
            request,
            template,
            {
                "license_name": settings.TRAJHUB_LICENSE,
                "contact_email": getattr(settings, "TRAJHUB_CONTACT_EMAIL", ""),
            },
        )

    view.__name__ = template.rsplit("/", 1)[-1].removesuffix(".html")
    return view


terms = _static_page("trajectories/terms.html")
privacy = _static_page("trajectories/privacy.html")
license_page = _static_page("trajectories/license.html")
removal = _static_page("trajectories/removal.html")
