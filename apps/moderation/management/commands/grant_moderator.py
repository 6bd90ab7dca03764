"""Make an account a moderator: staff (Django admin admits only staff) + the "moderators" group."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from apps.moderation.receivers import ensure_moderators_group


class Command(BaseCommand):
    help = 'Give an account the moderator role (staff + "moderators" group), or take it away.'

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--revoke", action="store_true", help="remove the group and the staff flag"
        )

    @transaction.atomic
    def handle(self, *args, username: str, revoke: bool, **options) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no account named {username!r}")
        ensure_moderators_group(sender=None)
        group, _ = Group.objects.get_or_create(name="moderators")
        if revoke:
            user.groups.remove(group)
            if not user.is_superuser:
                user.is_staff = False
            verb = "is no longer"
        else:
            user.groups.add(group)
            user.is_staff = True
            verb = "is now"
        user.save(update_fields=["is_staff"])
        self.stdout.write(f"{username} {verb} a moderator")
