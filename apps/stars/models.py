from django.conf import settings
from django.db import models


class Star(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    trajectory = models.ForeignKey(
        "trajectories.Trajectory", on_delete=models.CASCADE, related_name="stars"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "trajectory"], name="star_once_per_user")
        ]
        indexes = [
            # The week's most starred: stars given since a date, counted per trajectory.
            models.Index(fields=["created_at", "trajectory"], name="star_recent"),
        ]

    def __str__(self) -> str:
        return f"star {self.user_id} -> {self.trajectory_id}"
