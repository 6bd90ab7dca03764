from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        # Registers the token scheme with drf-spectacular (extensions register on import).
        from apps.accounts import schema  # noqa: F401
