from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A TrajHub account. Moderators are members of the "moderators" group or staff."""

    @property
    def is_moderator(self) -> bool:
        if self.is_staff or self.is_superuser:
            return True
        # Cached per instance: permission checks run on every page and API call.
        if not hasattr(self, "_is_moderator"):
            self._is_moderator = self.groups.filter(name="moderators").exists()
        return self._is_moderator


class ApiToken(models.Model):
    """A personal API token. Only a SHA-256 of the secret is stored; the secret is shown once."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise the token.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
