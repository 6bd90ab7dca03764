from django.urls import path

from apps.accounts.views import avatars, notices, tokens

# The owner's pages (dashboard, claims, export, deletion, profiles) are apps/owners/urls.py.
urlpatterns = [
    path("me/notices/", notices.notice_list, name="me-notices"),
    path("me/tokens/", tokens.tokens, name="me-tokens"),
    path("me/tokens/<int:token_id>/revoke", tokens.token_revoke, name="me-token-revoke"),
    # Without signing in
    path("u/<str:username>/avatar", avatars.avatar, name="profile-avatar"),
    path("notices/unsubscribe/<str:token>", notices.unsubscribe, name="notice-unsubscribe"),
]
