"""manage.py export_examples OUT [--format trl,sharegpt,jsonl,parquet]"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.learn.exports import FORMATS, export_examples
from apps.learn.selectors import examples_public


class Command(BaseCommand):
    help = (
        "Write the kept synthesized examples of public trajectories as training files: TRL "
        "conversational (trl.jsonl), LLaMA-Factory ShareGPT (sharegpt.jsonl + dataset_info.json), "
        "JSON Lines and Parquet (examples.*). Every row names its source trajectory and window."
    )

    def add_arguments(self, parser):
        parser.add_argument("out", type=Path, help="folder to write into")
        parser.add_argument("--format", default=",".join(FORMATS), help="comma-separated")

    def handle(self, *args, out: Path, format: str, **options):
        formats = tuple(f.strip() for f in format.split(",") if f.strip())
        bar = tqdm(total=examples_public().count(), unit="example", disable=None)
        try:
            written = export_examples(out=out, formats=formats, on_row=lambda: bar.update(1))
        except ValueError as error:
            raise CommandError(str(error)) from None
        finally:
            bar.close()
        self.stdout.write(f"{written['examples']} examples written to {out} ({', '.join(formats)})")
