"""API tokens page: create one with a name (its secret shown once), see when each was last used,
revoke. Only a SHA-256 of each secret is stored (accounts.services)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts import selectors
from apps.accounts.forms import TokenCreateForm
from apps.accounts.services import api_token_create, api_token_revoke

TOKENS_MAX = 50  # per account: enough for every machine and script one has


def _page(request: HttpRequest, form: TokenCreateForm, *, status: int = 200, **context):
    response = render(
        request,
        "accounts/tokens.html",
        {
            "form": form,
            "tokens": list(selectors.tokens_for(request.user)),
            "unread": selectors.unread_notice_count(request.user),
            "tab": "tokens",
            **context,
        },
        status=status,
    )
    # The page may hold a secret shown once: no cache keeps it.
    add_never_cache_headers(response)
    return response


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, TokenCreateForm())
    form = TokenCreateForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    if selectors.tokens_for(request.user).count() >= TOKENS_MAX:
        form.add_error(None, f"You have {TOKENS_MAX} tokens: revoke one you no longer use first.")
        return _page(request, form, status=400)
    token, secret = api_token_create(user=request.user, name=form.cleaned_data["name"])
    # Rendered straight into this answer (not carried over a redirect): it is never stored.
    return _page(request, TokenCreateForm(), status=201, created=token, secret=secret)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = selectors.tokens_for(request.user).filter(pk=token_id).first()
    if token is None:
        raise Http404("no such token")
    api_token_revoke(token=token)
    messages.success(request, f"Token “{token.name or token.prefix}” revoked.")
    return redirect("me-tokens")
