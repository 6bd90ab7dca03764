from django.apps import AppConfig


class TrajectoriesConfig(AppConfig):
    name = "apps.trajectories"
    label = "trajectories"
