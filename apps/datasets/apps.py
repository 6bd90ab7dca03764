from django.apps import AppConfig


class DatasetsConfig(AppConfig):
    name = "apps.datasets"
    label = "datasets"

    def ready(self) -> None:
        # tasks registers the tasks the services queue (apps.core.queueing).
        from apps.accounts.tabs import Tab, register_tab
        from apps.datasets import feedback_configs, receivers, tasks  # noqa: F401
        from apps.feedback.signals import feedback_changed
        from apps.trajectories.signals import public_set_changed

        # The step feedback (apps.feedback, below this app) as configs of every release.
        feedback_configs.register()
        # Sent after the commit of every change of step feedback (a deletion, an account's
        # deletion included): a release holding what may no longer be released is superseded.
        feedback_changed.connect(
            receivers.feedback_changed, dispatch_uid="datasets.feedback_changed"
        )

        # What of the user's own is in the next release: a tab of the "Your account" bar.
        register_tab(Tab("releases", "In the next release", "release-next", order=40))
        # Sent after the commit of every deletion and every change of visibility or review
        # state: a release holding such a trajectory is superseded at once.
        public_set_changed.connect(
            receivers.public_set_changed, dispatch_uid="datasets.public_set_changed"
        )
