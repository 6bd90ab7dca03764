"""Kingfisher (MongoDB's secret scanner, `kingfisher-secret-scanner` on PyPI): the vendor rules.

Its ~490 bundled rules (the Betterleaks successor of gitleaks' default set, plus Google's Veles
rules) run in Rust on Vectorscan, in-process and offline.
Compiling them takes seconds, so it happens once per process (`engine()`), and the compiled
database is kept in a directory (`cache_dir`, from the settings) so that the next process only
loads it. Findings come with byte offsets into the UTF-8 text; `find()` turns them into
character offsets and maps each rule id to a placeholder kind people understand.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from functools import lru_cache
from pathlib import Path

import kingfisher_sdk

from apps.moderation.scanning.detection import Detection

# Rule id (without its catalogue prefix) -> kind, for the rules whose automatic name would not
# read well as a placeholder; every other rule's kind is its id, `-` as `_` (`twilio_api_key`).
_KINDS_BY_PREFIX: tuple[tuple[str, str], ...] = (
    ("aws-access-token", "aws_access_key"),
    ("aws-secret-access-key", "aws_secret_key"),
    ("aws-session-token", "aws_session_token"),
    ("aws-amazon-bedrock", "aws_bedrock_key"),
    ("github-", "github_token"),
    ("gitlab-", "gitlab_token"),
    ("slack-webhook", "slack_webhook"),
    ("slack-", "slack_token"),
    ("stripe-", "stripe_key"),
    ("openai-", "openai_api_key"),
    ("anthropic-", "anthropic_api_key"),
    ("huggingface-", "huggingface_token"),
    ("gcp-api-key", "google_api_key"),
    ("private-key", "private_key"),
    ("jwt", "jwt"),
    ("generic-credential-uri", "url_credentials"),
    ("curl-auth-user", "url_credentials"),
    ("curl-auth-header", "bearer_token"),
    ("sendgrid", "sendgrid_api_key"),
    ("npmjsaccesstoken", "npm_token"),
    ("npm-", "npm_token"),
    ("digitaloceanapikey", "digitalocean_token"),
    ("digitalocean-", "digitalocean_token"),
    ("gcpserviceaccountkey", "gcp_service_account_key"),
    ("gcp", "gcp_credentials"),
    ("azure", "azure_credentials"),
    ("pypi", "pypi_token"),
)
_PREFIXES = ("betterleaks.", "kingfisher.", "veles.secrets/", "custom.")
# Rules that match a whole family of shapes (a password in a URI): a vendor rule wins over them.
GENERIC_KINDS = frozenset({"url_credentials"})
# The kinds the library's rule ids are mapped to (the engine prefers them in an overlap).
MAPPED_KINDS = frozenset(kind for _, kind in _KINDS_BY_PREFIX)
MAX_KIND = 40


@lru_cache(maxsize=2048)
def kind_for(rule_id: str) -> str:
    name = rule_id
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    name = name.lower()
    for prefix, kind in _KINDS_BY_PREFIX:
        if name.startswith(prefix):
            return kind
    kind = "".join(c if c.isalnum() else "_" for c in name).strip("_")
    return kind[:MAX_KIND] or "secret"


# Rules that report only in files of a path of their own, replaced by rules that match nothing
# (the file says why).
PATH_ONLY_RULES = Path(__file__).with_name("path_only_rules.yml")

_lock = threading.Lock()
_engines: dict[str | None, kingfisher_sdk.Scanner] = {}


def _private_dir(path: str) -> str:
    # Kingfisher refuses a cache directory others could write to.
    Path(path).mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def engine(cache_dir: str | None = None) -> kingfisher_sdk.Scanner:
    """The process's compiled scanner (built on first use; thread-safe)."""
    scanner = _engines.get(cache_dir)
    if scanner is None:
        with _lock:
            scanner = _engines.get(cache_dir)
            if scanner is None:
                overrides = [PATH_ONLY_RULES]
                if cache_dir:
                    rules = kingfisher_sdk.Rules(overrides, cache_dir=_private_dir(cache_dir))
                else:
                    rules = kingfisher_sdk.Rules(overrides)  # the user's cache directory
                # Base64 is decoded by the scan (normalize.base64_decoded), whose view the
                # library reads: its own decoding found a key only with the `=` padding, which
                # URL-safe Base64 drops, and found nothing the view misses (bench_scan's
                # corpora, and the gitleaks corpus encoded five ways).
                scanner = kingfisher_sdk.Scanner(rules, base64=False)
                _engines[cache_dir] = scanner
    return scanner


@lru_cache(maxsize=8)
def version(cache_dir: str | None = None) -> str:
    """The SDK version and a digest of the loaded rule ids: changes when an upgrade changes them."""
    ids = sorted(rule["id"] for rule in engine(cache_dir).rules.metadata())
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:12]
    return f"kingfisher-{kingfisher_sdk.__version__}+{len(ids)}.{digest}"


# Many rules end a secret only at a quote, whitespace or `;`, so a key followed by `&` in a URL
# query, by `)` in Markdown, or by a full stop ending a sentence is missed. The library reads a
# copy with those delimiters as spaces (same length, so offsets hold); none occurs in a secret,
# and the assignment operators its rules look for (`:`, `,`, `>`, `|`) are kept. NUL, which
# separates the strings of a batch, must end a secret too. The copy is the one eight `replace`
# calls made (`. `, `.\n`, `.\r`, `.\t`, then `! `, `? `, `!\n`, `?\n`, in that order), made in
# fewer passes over the text: `bytes.translate` runs in C at memory speed, the full stops are one
# `re.sub`, and the few `!` and `?` (a few hundred a megabyte) are looked at one by one where
# `bytes.find` finds them (four `re.sub` passes cost a tenth of the scan of real text).
_DELIMITERS = bytes.maketrans(b"&)]}\x00", b"     ")
_FULL_STOP = re.compile(rb"\.(?=[ \n\r\t])")


def _library_view(text: str, encoded: bytes | None = None) -> bytes:
    """`encoded`: `text` in UTF-8, if at hand."""
    if encoded is None:
        encoded = text.encode("utf-8", "surrogatepass")
    view = encoded.translate(_DELIMITERS)
    if b"." in view:  # one `memchr`
        view = _FULL_STOP.sub(b" ", view)
    return _closed(_exclamations_and_questions(view))


def _exclamations_and_questions(view: bytes) -> bytes:
    """The `replace` calls for `!` and `?`, in their order, on a copy whose full stops are done:
    `! ` (1), `? ` (2), `!\n` (3), `?\n` (4). A `!` goes by (1) or (3): it goes when a space or a
    line break follows it. A `?` goes by (2), when a space follows it or a `!` that (1) replaced,
    or by (4), when a line break follows it (a `!` that (3) replaced is a space only after (2))."""
    found = []
    for mark in (b"!", b"?"):
        at = view.find(mark)
        while at >= 0:
            after = view[at + 1 : at + 3]
            if after[:1] in (b" ", b"\n") or (mark == b"?" and after == b"! "):
                found.append(at)
            at = view.find(mark, at + 1)
    if not found:
        return view
    copy = bytearray(view)
    for at in found:
        copy[at] = 32  # a space
    return bytes(copy)


def _closed(view: bytes) -> bytes:
    # The text's last character ends a sentence too.
    if view.endswith((b".", b"!", b"?")):
        view = view[:-1] + b" "
    return view


# The library's cost per input grows with the input's length for every rule whose prefilter
# fired anywhere in it (a rule's full pattern then reads the whole input), and each call costs
# about 5 microseconds, so a long text is scanned in pieces: the strings of a batch are cut at
# the NUL between them (nothing matches across it) into pieces of at least STRINGS_CHUNK
# bytes, one long string at a line break into pieces of about CHUNK, with CONTEXT bytes of the
# text before the cut read again (a keyword on one line and its value on the next, a private key
# of a few lines). Each call costs about 17 microseconds before it reads a byte, so pieces of
# strings are no smaller than they need to be: in the whole scan of the bench corpus (quiet
# machine, three runs each, ratio to the floor) 4 KB pieces gave 0.77-0.81 on the real text
# alone and 0.33-0.35 with a secret in 1 string in 40, 16 KB pieces 0.80-0.87 and 0.36-0.38,
# whole batches 0.85-0.91 and 0.28-0.30; a whole 1 MB text runs at 0.25 of 16 KB pieces, and
# smaller pieces of one text lose to their overlaps.
STRINGS_CHUNK = 16 * 1024
CHUNK = 16 * 1024
CONTEXT = 4 * 1024


def _pieces(data: bytes) -> list[tuple[int, int]]:
    """(start, end) spans covering `data` (a text in UTF-8) whose findings together are the
    whole text's; each starts and ends between two characters."""
    if len(data) <= 2 * STRINGS_CHUNK:
        return [(0, len(data))]
    spans = []
    start = 0
    length = len(data)
    while length - start > 2 * STRINGS_CHUNK:
        cut = data.find(b"\x00", start + STRINGS_CHUNK, start + 2 * CHUNK)
        if cut >= 0:
            spans.append((start, cut))
            start = cut + 1
            continue
        if length - start <= 2 * CHUNK:
            break
        cut = data.find(b"\n", start + CHUNK, start + 2 * CHUNK)
        if cut < 0:
            cut = _character_start(data, start + CHUNK)  # a line longer than CHUNK
        spans.append((start, cut))
        start = max(_character_start(data, cut - min(CONTEXT, CHUNK // 2)), start + 1)
    spans.append((start, length))
    return spans


def _character_start(data: bytes, at: int) -> int:
    """`at`, or the start of the UTF-8 character it is inside."""
    while at > 0 and 0x80 <= data[at] < 0xC0:
        at -= 1
    return at


def find(text: str, cache_dir: str | None = None, encoded: bytes | None = None) -> list[Detection]:
    """Every match of the library's rules (component helpers too: an AWS secret key found as the
    partner of its key id is a secret all the same), as character offsets into `text`.

    `encoded`: `text` in UTF-8 (surrogates passed), if at hand.

    The text is encoded and its view (`_library_view`) made once, then cut in pieces: each
    piece's view is the same bytes (the sentence-end marks look only at the bytes after them,
    and a piece's last character ends a sentence as the text's does), and the findings of all
    pieces are turned into character offsets in one walk over the text, not one per piece."""
    if encoded is None:
        encoded = text.encode("utf-8", "surrogatepass")
    view = _library_view(text, encoded)
    spans = _pieces(encoded)
    if len(spans) == 1:
        return _find(text, cache_dir, view)
    scan = engine(cache_dir).scan
    located: list[tuple[int, int, kingfisher_sdk.Finding]] = []
    for low, high in spans:
        for finding in scan(_closed(view[low:high])):
            where = finding.location
            located.append((where["start_offset"] + low, where["end_offset"] + low, finding))
    # Found again in the overlap of two pieces: one of each (span, kind) is kept.
    return _detections(text, view, located, cache_dir, once=True)


def _find(text: str, cache_dir: str | None, data: bytes) -> list[Detection]:
    """The library's findings in `text`, whose view (`_library_view`) is `data`."""
    findings = engine(cache_dir).scan(data)
    if not findings:
        return []
    located = []
    for finding in findings:
        where = finding.location
        located.append((where["start_offset"], where["end_offset"], finding))
    return _detections(text, data, located, cache_dir)


def _detections(
    text: str,
    data: bytes,
    located: list[tuple[int, int, kingfisher_sdk.Finding]],
    cache_dir: str | None,
    once: bool = False,
) -> list[Detection]:
    """The library's findings (byte spans into `data`, the view of `text`) as detections in
    `text`, in order; `once`: one detection of each span and kind."""
    if not located:
        return []
    located.sort(key=lambda item: item[0])
    ascii_text = len(data) == len(text)
    out: list[Detection] = []
    seen: set[tuple[int, int, str]] = set()
    crossing: list[tuple[int, int]] = []  # matches that run from one string into the next
    # Byte -> character offsets, walking forward once (findings are sorted by start).
    byte_pos = char_pos = 0
    for start_b, end_b, finding in located:
        if ascii_text:
            start, end = start_b, end_b
        else:
            char_pos += len(data[byte_pos:start_b].decode("utf-8", "ignore"))
            byte_pos = start_b
            start = char_pos
            end = start + len(data[start_b:end_b].decode("utf-8", "ignore"))
        if not 0 <= start < end <= len(text):
            continue
        shown = text[start:end]
        if "\x00" in shown:
            crossing.append((start, end))
        secret = finding.secret
        value = ""
        if finding.is_base64_encoded:
            value = secret
        elif secret and secret != shown:
            inner = shown.find(secret)
            if inner >= 0:
                start, end = start + inner, start + inner + len(secret)
                shown = secret
        kind = kind_for(finding.rule_id)
        if once:
            key = (start, end, kind)
            if key in seen:
                continue
            seen.add(key)
        out.append(Detection(kind, shown, start, end, value))
    if crossing:
        out = _read_alone(text, out, crossing, cache_dir)
    return out


def _read_alone(
    text: str, out: list[Detection], crossing: list[tuple[int, int]], cache_dir: str | None
) -> list[Detection]:
    """The strings that a match ran across (the library reads the NUL between two strings of a
    batch as a space), read again one by one: such a match is no finding (a keyword in one
    output and a value in the next), and it may have taken the place of a real match of its
    rule in one of them. Each string's findings are then its own, whatever stands next to it,
    so that a string repeated elsewhere in the trajectory may be given the same findings
    (`memo.ScanMemo`). Rare: no match crosses two strings of the real trajectories."""
    regions: list[tuple[int, int]] = []
    for start, end in sorted(crossing):
        low = text.rfind("\x00", 0, start) + 1
        high = text.find("\x00", end)
        high = len(text) if high < 0 else high
        if regions and low <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(regions[-1][1], high))
        else:
            regions.append((low, high))
    kept = [
        detection
        for detection in out
        if not any(
            low <= detection.start < high or low < detection.end <= high for low, high in regions
        )
    ]
    for low, high in regions:
        at = low
        for part in text[low:high].split("\x00"):
            for found in _find(part, cache_dir, _library_view(part)) if len(part) >= 6 else ():
                kept.append(
                    Detection(found.kind, found.text, found.start + at, found.end + at, found.value)
                )
            at += len(part) + 1
    kept.sort(key=lambda detection: detection.start)
    return kept
