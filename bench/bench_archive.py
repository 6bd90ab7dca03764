"""Zip uploads vs the floor: what reading an archive within its limits adds to an import.

A Claude Code session of about 20 MB (the real 2.1.41 fixture's lines repeated, uuids made
unique) is imported in-process with `parse()` three ways: as the plain JSON Lines file, zipped
(deflate) as a session folder, and gzipped (the CLI's transport). The floor, measured in the same
run on the same bytes: inflating the zip entry with zlib alone, plus the plain import.

Target (issue 22: "the same size and decompression limits as gzip", and no slower than them):
the zipped import within 1.2x of (plain import + inflate floor), and within 1.2x of the gzipped
import.

    .venv/bin/python bench/bench_archive.py              # needs ../shared/fixtures/real
    .venv/bin/python bench/bench_archive.py --mb 5 --repeat 7
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import statistics
import sys
import time
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import orjson  # noqa: E402

from apps.trajectories.importers import parse  # noqa: E402
from apps.trajectories.importers.archive import ArchiveLimits  # noqa: E402

FIXTURE = (
    ROOT.parent / "shared/fixtures/real/claude_code_2_1_41_task_subagent_progress_entire_cli.jsonl"
)


def session(target: int) -> bytes:
    lines = [orjson.loads(line) for line in FIXTURE.read_bytes().splitlines() if line.strip()]
    out, size, round_ = [], 0, 0
    while size < target:
        for record in lines:
            copy = {**record, "uuid": f"{record.get('uuid')}-{round_}"}
            encoded = orjson.dumps(copy)
            out.append(encoded)
            size += len(encoded) + 1
        round_ += 1
    return b"\n".join(out) + b"\n"


def timed(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not FIXTURE.exists():
        print(f"skipped: {FIXTURE} is not here")
        return 0
    import django

    django.setup()
    from apps.trajectories.importers import Limits

    data = session(int(args.mb * 1_000_000))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("7d1e9f20.jsonl", data)
    zipped = buffer.getvalue()
    gzipped = gzip.compress(data, compresslevel=6)
    limits = Limits(archive=ArchiveLimits(max_entry_bytes=10**9, max_total_bytes=10**9))
    info = zipfile.ZipFile(io.BytesIO(zipped)).infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw = zipped[start : start + info.compress_size]

    def via_gzip() -> None:
        parse(zlib.decompress(gzipped, wbits=31), limits=limits)

    plain = timed(lambda: parse(data, limits=limits), args.repeat)
    inflate = timed(lambda: zlib.decompress(raw, wbits=-15), args.repeat)
    as_zip = timed(lambda: parse(zipped, limits=limits), args.repeat)
    as_gzip = timed(via_gzip, args.repeat)
    floor = plain + inflate
    print(
        f"session {len(data) / 1e6:.1f} MB, zip {len(zipped) / 1e6:.1f} MB, median of {args.repeat}"
    )
    print(f"  plain import          {plain:8.1f} ms")
    print(f"  inflate alone (zlib)  {inflate:8.1f} ms")
    print(f"  floor (plain+inflate) {floor:8.1f} ms")
    print(f"  gzip import           {as_gzip:8.1f} ms")
    ratio = as_zip / floor
    print(f"  zip import            {as_zip:8.1f} ms  {ratio:.2f}x the floor, "
          f"{as_zip / as_gzip:.2f}x gzip  ({'PASS' if ratio <= 1.2 else 'FAIL'} <= 1.2x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
