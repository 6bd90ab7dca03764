"""Cards published before the redacted view printed raw agent and model names: make them again
(services/mend.py, also `manage.py mend_release_cards`). Nothing to do on a site without a
published release. It runs the current service (today's models): should a later schema
change break it, it says so and the command does the same work."""

from django.db import migrations, transaction


def mend(apps, schema_editor):
    Release = apps.get_model("datasets", "Release")
    if not Release.objects.filter(published_at__isnull=False).exists():
        return
    from apps.datasets.services.mend import release_cards_mend

    try:
        with transaction.atomic():  # a savepoint: a failure leaves the migration's transaction
            result = release_cards_mend()
    except Exception as exc:  # storage unreachable from a migration: the command can redo it
        print(f"\n  release cards not mended ({type(exc).__name__}: {exc}); run mend_release_cards")
        return
    print(f"\n  rebuilt the card of {len(result.releases)} releases from the redacted view")


class Migration(migrations.Migration):
    dependencies = [
        ("datasets", "0003_announced_as"),
        ("trajectories", "0009_shown_metadata"),
        ("moderation", "0006_release_card_rebuilt"),
        ("accounts", "0006_notice_kinds_secret_published_approved"),
    ]

    operations = [migrations.RunPython(mend, migrations.RunPython.noop)]
