from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo data generator and `manage.py demo_data` (a dev tool; see the package docstring)."""

    name = "apps.demo"
    label = "demo"
