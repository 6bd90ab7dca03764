"""The OpenHands drop-in: what OpenHands' share (feedback) button posts, answered as it expects.

OpenHands posts the share payload (`{version, email, polarity, feedback, permissions,
trajectory, token?}`) as one plain JSON body, server to server, without auth or CSRF token, and
reads the answer's `body` as an object (see shared/OPENHANDS.md 1.2-1.6). It treats any status
but 200 as a failure, so errors keep the same envelope with a 4xx status and a message that the
older UIs show to the person.
"""

from __future__ import annotations

from typing import IO

from django.http import Http404, HttpRequest, HttpResponseRedirect, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.exceptions import AuthenticationFailed

from apps.accounts.authentication import ApiTokenAuthentication
from apps.core.http import BodyError, client_ip, read_request_body_file
from apps.core.ratelimit import RateLimited
from apps.trajectories import services
from apps.trajectories.importers import FORMATS, FormatError
from apps.trajectories.selectors import is_share_id

SUCCESS_MESSAGE = "Feedback submitted successfully"
PAYLOAD_SHAPE = (
    "expected the OpenHands share payload: a JSON object with version, email, polarity, "
    "permissions and trajectory"
)


# A byte-order mark may lead (Windows tools write one); the importers skip it, as the API does.
BOM = b"\xef\xbb\xbf"
HEAD_CHUNK = 64 * 1024


def _envelope(status: int, message: str, **body: object) -> JsonResponse:
    return JsonResponse({"statusCode": status, "body": {"message": message, **body}}, status=status)


def _success_message(warnings: list[dict]) -> str:
    """OpenHands shows `body.message` to the person in its toast and nothing else of the body,
    so events left out are said there too, briefly; `body.warnings` has them one by one."""
    if not warnings:
        return SUCCESS_MESSAGE
    where = ", ".join(w["where"] for w in warnings[:3]) + (", ..." if len(warnings) > 3 else "")
    count = f"{len(warnings)} event{'s' if len(warnings) != 1 else ''}"
    return f"{SUCCESS_MESSAGE}; {count} left out as not events ({where}): see body.warnings"


def _first_byte(file: IO[bytes]) -> bytes:
    """The body's first byte after a byte-order mark and whitespace: b"" for a body of
    whitespace alone, b"\xef" for a mark and nothing else (not a share payload either). Read
    from the file in chunks (it may be 50 MB), which is put back at its start."""
    bom = file.read(len(BOM)) == BOM
    if not bom:
        file.seek(0)
    first = b""
    while chunk := file.read(HEAD_CHUNK):
        stripped = chunk.lstrip()  # ASCII whitespace, what JSON allows around a value
        if stripped:
            first = stripped[:1]
            break
    file.seek(0)
    return BOM[:1] if bom and not first else first


def _share_format() -> str | None:
    """The share-payload importer, if registered; else detection decides."""
    for name in FORMATS:
        if name.startswith("openhands_share"):
            return name
    return None


@csrf_exempt
def share_od_trajectory(request: HttpRequest) -> JsonResponse:
    """POST /share_od_trajectory and /api/share: store one OpenHands share, answer the envelope."""
    if request.method != "POST":
        response = _envelope(405, "send the share payload with POST")
        response["Allow"] = "POST"
        return response
    user = None
    try:
        authenticated = ApiTokenAuthentication().authenticate(request)
    except AuthenticationFailed as exc:
        return _envelope(401, str(exc.detail))
    if authenticated is not None:
        user = authenticated[0]
    try:
        # To a temporary file when big: the payload is read from it as a stream.
        data = read_request_body_file(request)
    except BodyError as exc:
        return _envelope(exc.status, exc.message)
    first = _first_byte(data)
    if first != b"{":
        # OpenHands always sends one object; anything else is not a share payload.
        return _envelope(400, "the body is empty" if not first else PAYLOAD_SHAPE)
    options = services.ShareOptions(
        format=_share_format(),
        content_type="application/json",
        filename="share_payload.json",
        client_ip=client_ip(request),
    )
    try:
        result = services.trajectory_ingest(data=data, user=user, options=options)
    except FormatError as exc:
        message = f"{exc.where}: {exc.message}" if exc.where else exc.message
        return _envelope(400, message)
    except (services.SharingRefused, RateLimited) as exc:
        response = _envelope(exc.status_code, exc.message)
        if exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
        return response
    del data
    if not result.stored:
        error = result.errors[0] if result.errors else {"where": "", "message": "no trajectory"}
        where = error.get("where")
        return _envelope(400, f"{where}: {error['message']}" if where else error["message"])
    stored = result.stored[0]
    # `warnings` sits beside the two fields OpenHands' client reads (body.feedback_id and
    # body.password); it reads nothing else, so an extra key breaks none of its versions.
    return _envelope(
        200,
        _success_message(result.warnings),
        feedback_id=stored.trajectory.share_id,
        password=stored.password or "",
        warnings=result.warnings,
    )


def share_redirect(request: HttpRequest):
    """GET /share?share_id=<id> (the link OpenHands shows) leads to the trajectory page."""
    share_id = (request.GET.get("share_id") or request.GET.get("feedback_id") or "").strip().lower()
    if not is_share_id(share_id):
        raise Http404("no such trajectory")
    return HttpResponseRedirect(f"/t/{share_id}/")
