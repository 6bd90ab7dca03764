"""Say whether OCR reads images, and which image rule that puts in force (image_rule.py).

`make run` runs it before the site starts, so that whoever starts it learns that without
tesseract screenshots are not read for text. Exit status 0 either way: it informs, it does
not refuse to start (`--require` makes a missing OCR an error, for a deploy script).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from apps.trajectories.image_rule import image_rule


class Command(BaseCommand):
    help = "Say whether OCR (tesseract) reads images, and which rule makes an image public."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--require", action="store_true", help="fail (status 1) when OCR does not read images"
        )

    def handle(self, *args, require: bool, **options) -> None:
        rule = image_rule()
        if rule.ocr:
            self.stdout.write(f"OCR is on. {rule.summary}")
            return
        message = f"OCR is off. {rule.summary}"
        if require:
            raise CommandError(message)
        self.stdout.write(self.style.WARNING(message))
        self.stdout.write(
            "  To read images: apt install tesseract-ocr, and TRAJHUB_OCR=true (the default)."
        )
