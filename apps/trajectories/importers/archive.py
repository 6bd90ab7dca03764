"""Zip archives: read the entries of an uploaded zip within limits. Pure Python, no Django.

Two formats arrive as zip archives: Inspect AI's `.eval` log and a Claude Code session folder
(`<session>.jsonl` with `<session>/subagents/agent-*.jsonl`); any other zip may hold one
trajectory file. An archive is untrusted input like any other upload, so before anything is
decompressed the central directory is checked, and while decompressing the output is capped:

- the number of entries, each entry's and the total decompressed size (the total is the gzip
  limit, TRAJHUB_MAX_DECOMPRESSED_BYTES), and each entry's compression ratio: a size or count
  over its limit is `ArchiveTooLarge` (413), like a gzip bomb;
- archives inside the archive (by name or by their first bytes), symbolic links, encrypted
  entries, duplicate names and names that climb out of the archive (`../`, `/etc/...`, `C:\\`)
  are refused (400), each naming the entry.

Entry names are labels only: nothing is ever written to disk, no name is joined to a path.
Sizes are enforced on what decompression produces, not on what the directory claims.
Inspect 0.3.x compresses its members with zstd (method 93), which Python's zipfile before 3.14
cannot read: those are inflated here with `zstandard` (already the raw copies' compressor).
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass

import zstandard

from apps.trajectories.importers.base import FormatError

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with entries, an empty zip
ZSTD_METHOD = 93
CHUNK = 256 * 1024
# Archives and compressed files inside the archive are refused: by name...
NESTED_SUFFIXES = (
    ".zip",
    ".eval",
    ".gz",
    ".tgz",
    ".tar",
    ".bz2",
    ".xz",
    ".zst",
    ".7z",
    ".rar",
    ".jar",
)
# ...and by their first bytes (zip, gzip, bzip2, xz, zstd, 7z, rar).
NESTED_MAGIC = (
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ\x00",
    b"\x28\xb5\x2f\xfd",
    b"7z\xbc\xaf\x27\x1c",
    b"Rar!\x1a\x07",
)
# Entries that operating systems add to archives they make: not part of what was shared.
JUNK = re.compile(r"(^|/)(__MACOSX/|\.DS_Store$|Thumbs\.db$|desktop\.ini$)")
# Below this size an entry's ratio is not judged: tiny files compress oddly either way.
RATIO_FLOOR = 1024 * 1024


class ArchiveTooLarge(FormatError):
    """An archive over a size or count limit: answered 413, as an oversized gzip body is."""

    status = 413


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int = 1000
    max_entry_bytes: int = 100 * 1024 * 1024
    max_total_bytes: int = 200 * 1024 * 1024
    max_ratio: int = 200


@dataclass
class Entry:
    name: str
    data: bytes


def is_zip(data: bytes) -> bool:
    return data[:4] in ZIP_MAGIC


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB" if size >= 1024 * 1024 else f"{size:,} bytes"


def read_zip(data: bytes, limits: ArchiveLimits = ArchiveLimits()) -> list[Entry]:
    """The file entries of the zip in `data` (directories and OS junk left out), in the
    archive's order, each checked and decompressed within `limits`."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise FormatError(f"not a valid zip archive ({exc})") from None
    infos = archive.infolist()
    if len(infos) > limits.max_entries:
        raise ArchiveTooLarge(
            f"the zip archive has {len(infos):,} entries, over the limit of {limits.max_entries:,}"
        )
    seen: set[str] = set()
    wanted: list[zipfile.ZipInfo] = []
    declared = 0
    for info in infos:
        _check_entry(info, seen, limits)
        if info.is_dir() or JUNK.search(info.filename):
            continue
        declared += info.file_size
        wanted.append(info)
    if declared > limits.max_total_bytes:
        raise ArchiveTooLarge(
            f"the zip archive's entries inflate to {_mb(declared)}, over the limit of "
            f"{_mb(limits.max_total_bytes)}"
        )
    entries: list[Entry] = []
    produced = 0
    for info in wanted:
        budget = min(limits.max_entry_bytes, limits.max_total_bytes - produced)
        content = _inflate(archive, data, info, budget, limits)
        produced += len(content)
        if content.startswith(NESTED_MAGIC):
            raise FormatError(
                "is an archive or compressed file inside the archive; nested archives are "
                "not accepted",
                _where(info),
            )
        entries.append(Entry(info.filename, content))
    return entries


def _where(info: zipfile.ZipInfo) -> str:
    return f"entry {info.filename!r}"


def _check_entry(info: zipfile.ZipInfo, seen: set[str], limits: ArchiveLimits) -> None:
    """Refuse an entry by what the central directory says of it, before inflating anything."""
    name = info.filename
    where = _where(info)
    parts = re.split(r"[/\\]", name)
    if (
        not name
        or "\x00" in name
        or name.startswith(("/", "\\"))
        or re.match(r"^[A-Za-z]:", name)
        or ".." in parts
    ):
        raise FormatError(
            "has a name that points outside the archive (an absolute path or '..'); such "
            "archives are refused",
            where,
        )
    if name in seen:
        raise FormatError("appears twice in the archive", where)
    seen.add(name)
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise FormatError("is a symbolic link; links are not accepted in archives", where)
    if info.is_dir():
        return
    if info.flag_bits & 0x1:
        raise FormatError("is encrypted; send the archive without a password", where)
    if name.lower().endswith(NESTED_SUFFIXES):
        raise FormatError(
            "is an archive or compressed file inside the archive; nested archives are not accepted",
            where,
        )
    if info.file_size > limits.max_entry_bytes:
        raise ArchiveTooLarge(
            f"inflates to {_mb(info.file_size)}, over the limit of "
            f"{_mb(limits.max_entry_bytes)} for one entry",
            where,
        )
    _check_ratio(info, info.file_size, limits)


def _check_ratio(info: zipfile.ZipInfo, size: int, limits: ArchiveLimits) -> None:
    if size <= RATIO_FLOOR:
        return
    if info.compress_size <= 0 or size / info.compress_size > limits.max_ratio:
        ratio = size / info.compress_size if info.compress_size > 0 else float("inf")
        raise ArchiveTooLarge(
            f"is compressed {ratio:,.0f} to 1, over the limit of {limits.max_ratio} to 1 "
            "(a zip bomb, or data too repetitive to accept)",
            _where(info),
        )


def _inflate(
    archive: zipfile.ZipFile,
    data: bytes,
    info: zipfile.ZipInfo,
    budget: int,
    limits: ArchiveLimits,
) -> bytes:
    """The entry's bytes, never producing more than `budget` + 1 whatever the directory says."""
    where = _where(info)
    try:
        if info.compress_type == ZSTD_METHOD:
            content = _inflate_zstd(data, info, budget)
        else:
            with archive.open(info) as handle:
                content = handle.read(budget + 1)
    except NotImplementedError:
        raise FormatError(
            f"uses compression method {info.compress_type}, which is not supported "
            "(use deflate, or store it)",
            where,
        ) from None
    except (zipfile.BadZipFile, zlib.error, zstandard.ZstdError, EOFError, OSError) as exc:
        raise FormatError(f"cannot be decompressed ({exc})", where) from None
    if len(content) > budget:
        limit = min(budget, limits.max_entry_bytes)
        if budget < limits.max_entry_bytes:
            raise ArchiveTooLarge(
                f"the zip archive's entries inflate past the limit of "
                f"{_mb(limits.max_total_bytes)}",
                where,
            )
        raise ArchiveTooLarge(
            f"inflates past the limit of {_mb(limit)} for one entry (the archive said "
            f"{_mb(info.file_size)})",
            where,
        )
    _check_ratio(info, len(content), limits)
    return content


def _inflate_zstd(data: bytes, info: zipfile.ZipInfo, budget: int) -> bytes:
    """A zstd-compressed member (method 93), read from its local header on."""
    start = info.header_offset
    header = data[start : start + 30]
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    name_length = int.from_bytes(header[26:28], "little")
    extra_length = int.from_bytes(header[28:30], "little")
    begin = start + 30 + name_length + extra_length
    raw = data[begin : begin + info.compress_size]
    if len(raw) < info.compress_size:
        raise zipfile.BadZipFile("the member is truncated")
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
    parts: list[bytes] = []
    produced = 0
    while produced <= budget:
        part = reader.read(min(CHUNK, budget + 1 - produced))
        if not part:
            break
        parts.append(part)
        produced += len(part)
    content = b"".join(parts)
    if len(content) <= budget and zlib.crc32(content) != info.CRC:
        raise zipfile.BadZipFile("CRC check failed")
    return content
