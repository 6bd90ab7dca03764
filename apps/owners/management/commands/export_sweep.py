"""export_sweep: delete data export archives older than TRAJHUB_EXPORT_KEEP_DAYS (beat runs it
hourly as the task apps.accounts.tasks.export_expired_sweep, in apps/owners/tasks.py)."""

from django.core.management.base import BaseCommand

from apps.owners.services.export import export_expired_sweep


class Command(BaseCommand):
    help = "Delete data export archives older than TRAJHUB_EXPORT_KEEP_DAYS."

    def handle(self, *args, **options):
        count = export_expired_sweep()
        self.stdout.write(f"{count} expired export archive{'s' if count != 1 else ''} deleted.")
