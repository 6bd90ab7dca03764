from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ModerationConfig(AppConfig):
    name = "apps.moderation"
    label = "moderation"
    verbose_name = "Moderation"

    def ready(self) -> None:
        # tasks: registered with Celery in every process, for the services' queueing by name.
        from apps.core.api.errors import ApiError, register_error
        from apps.moderation import receivers, tasks  # noqa: F401
        from apps.moderation.errors import ModerationError
        from apps.moderation.services.preview import preview_fields
        from apps.trajectories import preview
        from apps.trajectories.signals import trajectory_deleted, trajectory_stored

        trajectory_stored.connect(receivers.queue_scan, dispatch_uid="moderation.queue_scan")
        trajectory_deleted.connect(
            receivers.record_deletion, dispatch_uid="moderation.record_deletion"
        )
        # What the services refuse, the API answers as a 400 that says why.
        register_error(ModerationError, lambda exc: ApiError(str(exc)))
        # The upload preview shows what the scan would redact, before anything is stored.
        preview.register_report("redactions", preview_fields)
        post_migrate.connect(
            receivers.ensure_moderators_group,
            sender=self,
            dispatch_uid="moderation.moderators_group",
        )
