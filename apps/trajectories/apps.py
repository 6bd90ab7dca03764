from django.apps import AppConfig


class TrajectoriesConfig(AppConfig):
    name = "apps.trajectories"
    label = "trajectories"

    def ready(self) -> None:
        from apps.trajectories import receivers
        from apps.trajectories.signals import public_set_changed

        public_set_changed.connect(
            receivers.forget_public_facets, dispatch_uid="trajectories.forget_public_facets"
        )
