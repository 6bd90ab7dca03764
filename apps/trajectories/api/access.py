"""Who calls the trajectory API: the signed-in user (session or token), or the holder of an
anonymous share's deletion password, which the `X-Deletion-Password` header carries (DELETE and
the download)."""

from __future__ import annotations

from django.http import Http404
from rest_framework.request import Request

from apps.core.http import client_ip
from apps.trajectories import services
from apps.trajectories.models import Trajectory


def request_user(request: Request):
    """The signed-in user, or None for an anonymous caller."""
    return request.user if request.user and request.user.is_authenticated else None


PASSWORD_HEADER = "X-Deletion-Password"


def password_holder(request: Request, share_id: str) -> Trajectory | None:
    """The anonymous share `share_id` opened by the password in the X-Deletion-Password header;
    None when the request sends no such header.

    A wrong password and an unknown id are one answer (404), at one cost, so that guessing tells
    nothing about which ids exist; wrong passwords count in the per-address limit
    (services/passwords.py).
    """
    password = request.headers.get(PASSWORD_HEADER)
    if password is None:
        return None
    found = services.trajectory_by_password(
        share_id=share_id, password=password, client=client_ip(request)
    )
    if found is None:
        raise Http404("no trajectory with this id and deletion password")
    return found
