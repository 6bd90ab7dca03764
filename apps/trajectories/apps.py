from django.apps import AppConfig


class TrajectoriesConfig(AppConfig):
    name = "apps.trajectories"
    label = "trajectories"

    def ready(self) -> None:
        from apps.core.api.errors import ApiError, register_error
        from apps.trajectories import receivers
        from apps.trajectories.importers import FormatError
        from apps.trajectories.services.errors import SharingRefused
        from apps.trajectories.signals import (
            public_set_changed,
            redaction_index_stale,
            trajectory_deleted,
        )

        public_set_changed.connect(
            receivers.forget_public_facets, dispatch_uid="trajectories.forget_public_facets"
        )
        trajectory_deleted.connect(
            receivers.forget_compare_steps, dispatch_uid="trajectories.forget_compare_steps"
        )
        redaction_index_stale.connect(
            receivers.queue_redaction_index_refresh,
            dispatch_uid="trajectories.queue_redaction_index_refresh",
        )
        # The API's one error handler answers the importers' and the services' errors too.
        register_error(FormatError, lambda exc: ApiError(exc.message, exc.where, exc.status))
        register_error(
            SharingRefused,
            lambda exc: ApiError(
                exc.message, exc.where, exc.status_code, retry_after=exc.retry_after
            ),
        )
