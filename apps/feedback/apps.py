from django.apps import AppConfig


class FeedbackConfig(AppConfig):
    name = "apps.feedback"
    label = "feedback"
    verbose_name = "Step feedback"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.models.signals import post_delete, post_save, pre_delete

        from apps.core.api.errors import ApiError, register_error
        from apps.feedback import accounts, models, receivers
        from apps.feedback.errors import FeedbackError
        from apps.trajectories.signals import trajectory_stored

        # A re-import or an update may change the steps feedback is anchored to.
        trajectory_stored.connect(receivers.reanchor, dispatch_uid="feedback.reanchor")
        for model in (
            models.StepRating,
            models.FirstWrongMark,
            models.StepNote,
            models.FeedbackSwitch,
        ):
            for signal in (post_save, post_delete):
                signal.connect(
                    receivers.forget_summary,
                    sender=model,
                    dispatch_uid=f"feedback.forget_summary.{model.__name__}.{id(signal)}",
                )
        # An erased account's marks and corrections leave the trajectories' counts.
        pre_delete.connect(
            receivers.account_deleting,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="feedback.account_deleting",
        )
        from apps.owners.export_sections import register_export_section

        register_export_section(
            "feedback",
            accounts.account_feedback,
            description="your ratings, first-wrong marks, corrections and comments on steps.",
        )
        register_error(FeedbackError, lambda exc: ApiError(exc.message, exc.where, exc.status_code))
