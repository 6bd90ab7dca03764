from django.apps import AppConfig


class OwnersConfig(AppConfig):
    name = "apps.owners"
    label = "owners"
    verbose_name = "Owner features"

    def ready(self) -> None:
        # Registers the tasks with Celery, for the services that queue them by name.
        from apps.owners import tasks  # noqa: F401
