from django.apps import AppConfig


class StatsConfig(AppConfig):
    """The whole collection in charts (/stats/, GET /api/v1/stats): downstream of trajectories
    and datasets, which it reads and never writes."""

    name = "apps.stats"
    label = "stats"

    def ready(self) -> None:
        from apps.stats import receivers
        from apps.trajectories.signals import public_set_changed

        public_set_changed.connect(receivers.forget_stats, dispatch_uid="stats.forget_stats")
        from apps.feedback.counts import flagged_deciles_changed

        flagged_deciles_changed.connect(
            receivers.forget_first_wrong, dispatch_uid="stats.forget_first_wrong"
        )
