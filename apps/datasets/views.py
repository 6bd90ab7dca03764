"""Release pages: the list, one release (its card, files, ids added and removed), file
downloads, and the contributor's "in the next release" list with its take-out choice."""

from __future__ import annotations

import mimetypes

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from apps.datasets import selectors, services
from apps.datasets.optout_links import optout_token_read
from apps.datasets.services import storage
from apps.trajectories.models import Trajectory
from apps.trajectories.rendering.text import markdown


@require_GET
def release_list(request: HttpRequest) -> HttpResponse:
    releases = list(selectors.release_list_published().select_related("previous"))
    return render(
        request,
        "datasets/releases.html",
        {
            "releases": releases,
            "newest": releases[0] if releases else None,
            "in_progress": selectors.release_in_progress(),
        },
    )


def _card_body(card: str) -> str:
    """The card without its YAML front matter (shown apart, as text)."""
    if card.startswith("---\n"):
        end = card.find("\n---\n", 4)
        if end != -1:
            return card[end + 5 :]
    return card


def _front_matter(card: str) -> str:
    if card.startswith("---\n"):
        end = card.find("\n---\n", 4)
        if end != -1:
            return card[4:end]
    return ""


@require_GET
def release_detail(request: HttpRequest, version: int) -> HttpResponse:
    release = selectors.release_get_published(version)
    if release is None:
        raise Http404("no such release")
    return render(
        request,
        "datasets/release_detail.html",
        {
            "release": release,
            "newest": selectors.release_latest(),
            "in_progress": selectors.release_in_progress(),
            "files": list(selectors.release_files(release)),
            # The card is our own text, but it quotes agent and model names from uploads:
            # rendered like any untrusted Markdown (sanitized).
            "card_html": markdown(_card_body(release.card)),
            "front_matter": _front_matter(release.card),
        },
    )


@require_GET
def release_file(request: HttpRequest, version: int, path: str) -> HttpResponse:
    """A file of a published release: streamed from local storage, or a redirect to a signed,
    time-limited URL on S3."""
    release = selectors.release_get_published(version)
    if release is None or release.files_deleted:
        raise Http404("no such release file")
    item = release.files.filter(path=path).first()
    if item is None:
        raise Http404("no such release file")
    if not storage.is_local():
        return HttpResponseRedirect(storage.signed_url(release.prefix, item.path))
    content_type = "application/vnd.apache.parquet" if path.endswith(".parquet") else None
    response = FileResponse(
        storage.open_file(release.prefix, item.path),
        as_attachment=True,
        filename=f"{release.name}-{path.replace('/', '-')}",
        content_type=content_type or mimetypes.guess_type(path)[0] or "application/octet-stream",
    )
    response["Content-Length"] = str(item.size)
    return response


def _toggle(request: HttpRequest, trajectory: Trajectory) -> None:
    if request.POST.get("action") == "put_back":
        services.trajectory_put_back(trajectory=trajectory)
    else:
        user = request.user if request.user.is_authenticated else None
        services.trajectory_take_out(trajectory=trajectory, by=user)  # type: ignore[arg-type]


@login_required
@require_http_methods(["GET", "POST"])
def next_release(request: HttpRequest) -> HttpResponse:
    """The signed-in contributor's public trajectories: what the next release holds, what
    they took out, with the choice for each."""
    user = request.user
    if request.method == "POST":
        trajectory = (
            Trajectory.objects.filter(owner=user, share_id=request.POST.get("id", ""))
            .only("id")
            .first()
        )
        if trajectory is None:
            raise Http404("no such trajectory of yours")
        _toggle(request, trajectory)
        return redirect("release-next")
    announced = selectors.release_in_progress()
    return render(
        request,
        "datasets/next_release.html",
        {
            "items": selectors.next_release_list(user),  # type: ignore[arg-type]
            "announced": announced if announced and announced.status == "announced" else None,
            "form_action": "",
        },
    )


@require_http_methods(["GET", "POST"])
def release_optout(request: HttpRequest, token: str) -> HttpResponse:
    """The link an anonymous contributor got with the announcement: their trajectories in the
    announced release, each of which they can take out (or put back)."""
    read = optout_token_read(token)
    if read is None:
        raise Http404("this link has expired: the release it was for is published or gone")
    release, digest = read
    items = selectors.announced_items_for_email(release, digest)
    if request.method == "POST":
        share_id = request.POST.get("id", "")
        if share_id not in {item.share_id for item in items}:
            raise Http404("no such trajectory in this list")
        trajectory = Trajectory.objects.only("id").get(share_id=share_id)
        _toggle(request, trajectory)
        return redirect("release-optout", token=token)
    response = render(
        request,
        "datasets/next_release.html",
        {"items": items, "announced": release, "anonymous": True},
    )
    # The token is in the URL: it must not reach another site as a referrer. "same-origin",
    # not "no-referrer", which makes the browser send `Origin: null` with the page's own form
    # (and Django's CSRF check refuse it).
    response["Referrer-Policy"] = "same-origin"
    return response
