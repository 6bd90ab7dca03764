from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    # allauth's "account" app is "Accounts" in the admin too: one sidebar entry each, told apart.
    verbose_name = "Users and API tokens"

    def ready(self) -> None:
        from allauth.account.signals import user_logged_in
        from allauth.socialaccount.signals import social_account_added

        # schema registers the token scheme with drf-spectacular (extensions register on import);
        # tasks registers its tasks with Celery, for the services that queue them by name.
        from apps.accounts import receivers, schema, tasks  # noqa: F401
        from apps.accounts.tabs import Tab, register_tab

        # Identity's own tabs of the "Your account" bar; the apps above add theirs.
        register_tab(Tab("notices", "Notices", "me-notices", order=20, badge="unread"))
        register_tab(Tab("tokens", "API tokens", "me-tokens", order=50))

        post_migrate.connect(receivers.site_from_settings, dispatch_uid="accounts-site-name")
        user_logged_in.connect(receivers.github_signed_in, dispatch_uid="accounts-avatar-login")
        social_account_added.connect(
            receivers.github_signed_in, dispatch_uid="accounts-avatar-connect"
        )
