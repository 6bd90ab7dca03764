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
        from apps.learn import receivers, release_configs
        from apps.trajectories import signals

        # The synthesized examples go into every dataset release as configs of their own.
        release_configs.register()

        signals.trajectory_deleted.connect(
            receivers.trajectory_deleted, dispatch_uid="learn.trajectory_deleted"
        )
        # Sent after commit whenever trajectories may have entered or left public() or their
        # redactions changed (visibility, review state, moderation, redaction, deletion).
        signals.public_set_changed.connect(
            receivers.public_set_changed, dispatch_uid="learn.public_set_changed"
        )
