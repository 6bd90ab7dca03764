"""manage.py mend_release_cards: make every published card again from the redacted view."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from tqdm import tqdm

from apps.datasets.services.mend import release_cards_mend


class Command(BaseCommand):
    help = (
        "Rebuild the card (README.md, the release page, the API) of every published release "
        "from the redacted view, replace it in storage where it changed (recorded in "
        "manifest.json and the audit log) and tell the owners whose secrets an old card printed."
    )

    def handle(self, *args, **options):
        bar = tqdm(total=0, unit="release", desc="cards", file=self.stderr, leave=False)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        result = release_cards_mend(progress=progress)
        bar.close()
        if not result.releases:
            self.stdout.write("every published card already comes from the redacted view")
            return
        self.stdout.write(
            f"rebuilt the card of {len(result.releases)} releases "
            f"({', '.join(f'v{v}' for v in result.releases)}); replaced README.md and "
            f"manifest.json in storage for {result.files_replaced}; {result.trajectories} "
            f"trajectories' raw values had been printed, {result.notices} owners told"
        )
