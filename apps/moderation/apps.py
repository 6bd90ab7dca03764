from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ModerationConfig(AppConfig):
    name = "apps.moderation"
    label = "moderation"
    verbose_name = "Moderation"

    def ready(self) -> None:
        from apps.moderation import receivers, tasks
        from apps.moderation.services import mail
        from apps.trajectories.signals import trajectory_deleted, trajectory_stored

        trajectory_stored.connect(receivers.queue_scan, dispatch_uid="moderation.queue_scan")
        trajectory_deleted.connect(
            receivers.record_deletion, dispatch_uid="moderation.record_deletion"
        )
        # Services never import tasks: the takedown mail task is handed to them here.
        mail.takedown_mail_queue_set(
            lambda request_id, what: tasks.takedown_email.delay(request_id, what)
        )
        post_migrate.connect(
            receivers.ensure_moderators_group,
            sender=self,
            dispatch_uid="moderation.moderators_group",
        )
