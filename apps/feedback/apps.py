from django.apps import AppConfig


class FeedbackConfig(AppConfig):
    name = "apps.feedback"
    label = "feedback"
    verbose_name = "Step feedback"

    def ready(self) -> None:
        from apps.core.api.errors import ApiError, register_error
        from apps.feedback import receivers
        from apps.feedback.errors import FeedbackError
        from apps.trajectories.signals import trajectory_stored

        # A re-import or an update may change the steps feedback is anchored to.
        trajectory_stored.connect(receivers.reanchor, dispatch_uid="feedback.reanchor")
        register_error(FeedbackError, lambda exc: ApiError(exc.message, exc.where, exc.status_code))
