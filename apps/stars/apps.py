from django.apps import AppConfig


class StarsConfig(AppConfig):
    name = "apps.stars"
    label = "stars"
    verbose_name = "Stars"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from apps.stars import parts, receivers
        from apps.stars.models import Star
        from apps.trajectories import extensions

        # An account or a trajectory deleted takes its stars with it; the counts follow.
        post_delete.connect(receivers.star_deleted, sender=Star, dispatch_uid="stars.deleted")
        extensions.add_page_context(parts.page_star)
        extensions.add_home_context(parts.home_most_starred)
