from django.urls import path, re_path

from apps.owners.views import claims, dashboard, data, email_deletion, profiles

SHARE_ID = r"(?P<share_id>[0-9a-f]{64})"

# The notices and tokens pages, the avatar and the unsubscribe link are apps/accounts/urls.py.
urlpatterns = [
    # The dashboard (views/dashboard.py)
    path("me/", dashboard.me, name="me"),
    path("me/bulk", dashboard.me_bulk, name="me-bulk"),
    re_path(rf"^me/t/{SHARE_ID}/edit$", dashboard.me_edit, name="me-edit"),
    re_path(rf"^me/t/{SHARE_ID}/visibility$", dashboard.me_visibility, name="me-visibility"),
    re_path(rf"^me/t/{SHARE_ID}/delete$", dashboard.me_delete, name="me-delete"),
    path("me/claim/", claims.claim, name="me-claim"),
    path("me/export/", data.export, name="me-export"),
    path("me/export/<int:export_id>/download", data.export_download, name="me-export-download"),
    path("me/delete-account/", data.account_delete_view, name="me-account-delete"),
    # Without signing in
    path("u/<str:username>/", profiles.profile, name="profile"),
    path("delete-by-email/", email_deletion.email_deletion, name="email-deletion"),
    path(
        "delete-by-email/<str:token>",
        email_deletion.email_deletion_confirm_view,
        name="email-deletion-confirm",
    ),
]
