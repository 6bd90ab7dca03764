from django.apps import AppConfig


class LearnConfig(AppConfig):
    """Learn-by-interact (arXiv 2501.10893): synthesis, filters, exports and retrieval.

    An app of its own rather than a sub-package of apps.datasets: it has its own models, tasks,
    admin and API, and the release builder grows in apps.datasets at the same time.
    """

    name = "apps.learn"
    label = "learn"
    verbose_name = "Learn-by-interact"

    def ready(self) -> None:
        from apps.learn import receivers
        from apps.trajectories import signals

        signals.trajectory_deleted.connect(
            receivers.trajectory_deleted, dispatch_uid="learn.trajectory_deleted"
        )
        # Sent by trajectories when the public set or redactions may have changed (visibility,
        # review state, redaction); older mains lack it and rely on the query-time check.
        public_set_changed = getattr(signals, "public_set_changed", None)
        if public_set_changed is not None:
            public_set_changed.connect(
                receivers.public_set_changed, dispatch_uid="learn.public_set_changed"
            )
