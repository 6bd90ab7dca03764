from django.apps import AppConfig


class OwnersConfig(AppConfig):
    name = "apps.owners"
    label = "owners"
    verbose_name = "Owner features"

    def ready(self) -> None:
        # Registers the tasks with Celery, for the services that queue them by name.
        from apps.accounts.tabs import Tab, register_tab
        from apps.owners import tasks  # noqa: F401

        # The owner features' tabs of the "Your account" bar (apps.accounts.tabs).
        for tab in (
            Tab("trajectories", "Trajectories", "me", order=10),
            Tab("claim", "Claim a share", "me-claim", order=30),
            Tab("export", "Download my data", "me-export", order=60),
            Tab("profile", "Public profile", "profile", order=70, with_username=True),
            Tab("account-delete", "Delete my account", "me-account-delete", order=80),
        ):
            register_tab(tab)
