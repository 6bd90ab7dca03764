from django.apps import AppConfig


class OwnersConfig(AppConfig):
    name = "apps.owners"
    label = "owners"
    verbose_name = "Owner features"
