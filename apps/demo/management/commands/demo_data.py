"""manage.py demo_data: fill the site with realistic made-up OpenHands sessions.

Each session goes through the real ingest service, as if a demo user had shared it from
OpenHands: about 70 % public (scanned by the worker, then approved) and the rest private.
Sessions are deterministic per --seed, and each carries a session id, so running the command
again updates the same trajectories instead of adding copies.
"""

from __future__ import annotations

import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.demo import generator as demo
from apps.trajectories.importers import FormatError
from apps.trajectories.models import Trajectory
from apps.trajectories.services import ShareOptions, trajectory_ingest

DEMO_USERNAME = "demo"


class Command(BaseCommand):
    help = "Generate realistic OpenHands sessions and share them through the ingest service."

    def add_arguments(self, parser):
        parser.add_argument("--count", type=int, default=36, help="number of sessions (36)")
        parser.add_argument("--seed", type=int, default=1, help="same seed, same sessions (1)")
        parser.add_argument("--events", type=int, help="events per session (varied if unset)")
        parser.add_argument("--screenshots", type=int, help="browser screenshots per session")
        parser.add_argument("--plots", type=int, help="IPython plots per session")
        parser.add_argument("--target-bytes", type=int, help="grow each payload to this size")
        parser.add_argument(
            "--screenshot-bytes",
            type=int,
            default=0,
            help="extra incompressible bytes per screenshot (real ones: 50-300 KB)",
        )
        parser.add_argument(
            "--format",
            choices=["share", "v0"],
            default="share",
            help="OpenHands share payload (default) or V0 event array",
        )
        parser.add_argument("--user", default=DEMO_USERNAME, help="owner of the sessions (demo)")
        parser.add_argument("--private", action="store_true", help="make every session private")
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="do nothing when any trajectory exists (used by `make run`)",
        )

    def handle(self, *args, **options):
        if options["if_empty"] and Trajectory.objects.exists():
            self.stdout.write("Trajectories exist already; no demo data added.")
            return
        if options["count"] < 0:
            raise CommandError("--count must be 0 or more")
        user, made = get_user_model().objects.get_or_create(
            username=options["user"], defaults={"first_name": "Demo"}
        )
        if made:
            # Nobody logs in as the demo user; it only owns the sessions.
            user.set_unusable_password()
            user.save(update_fields=["password"])
        generator = demo.sessions(
            options["seed"],
            options["count"],
            events=options["events"],
            screenshots=options["screenshots"],
            plots=options["plots"],
            target_bytes=options["target_bytes"],
            screenshot_bytes=options["screenshot_bytes"],
        )
        created = updated = public = total_bytes = 0
        started = time.monotonic()
        try:
            for index, session in enumerate(
                tqdm(generator, total=options["count"], unit="session", disable=None)
            ):
                public_share = session["permissions"] == "public" and not options["private"]
                if options["format"] == "v0":
                    data = demo.v0_array(session, include_screenshots=True)
                else:
                    data = demo.share_payload(
                        session, permissions="public" if public_share else "private"
                    )
                result = trajectory_ingest(
                    data=data,
                    user=user,
                    options=ShareOptions(
                        visibility="public" if public_share else "private",
                        polarity=session["polarity"],
                        session_id=f"demo-{options['seed']}-{index}",
                        title=session["title"],
                        license_agreed=public_share,
                        filename=f"demo-{index}.json",
                        content_type="application/json",
                    ),
                )
                if result.errors:
                    raise CommandError(f"session {index} was refused: {result.errors}")
                for item in result.stored:
                    created += item.created
                    updated += not item.created
                public += public_share
                total_bytes += len(data)
        except (FormatError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        seconds = time.monotonic() - started
        self.stdout.write(
            self.style.SUCCESS(
                f"{created} demo trajectories created, {updated} updated ({public} public, "
                f"{options['count'] - public} private; {total_bytes / 1e6:.1f} MB in "
                f"{seconds:.1f} s), owned by '{user.username}'. Public ones appear once the "
                "worker has scanned them."
            )
        )
