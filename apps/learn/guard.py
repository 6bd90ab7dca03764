"""A run that cannot read its models' answers stops early, and a dry run that says what a run
would spend before it spends anything.

An endpoint whose models answer in a shape the pipeline cannot read (no fenced block for an
instruction; a judge's yes/no not as the JSON the committee parses) used to spend every call of
the run and keep nothing, with no warning until the end. The guard counts, per run, phase and
model, the answers read and those that could not be: when the first
TRAJHUB_SYNTH_STOP_UNREADABLE answers of a model are all unreadable, the run stops with a
message that says so (SynthesisAborted, written to the run's `error`). One readable answer and
that model is trusted for the rest of the run. The counters live in the cache (Redis in
production) so that the workers of one run count together.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache

# Long enough for any run; the key holds the run's start time, so a reused id starts afresh.
_COUNTER_SECONDS = 7 * 24 * 3600


class SynthesisAborted(Exception):
    """The run cannot go on (the endpoint refuses every request, or its models' answers cannot
    be read): it stops, saying why."""


# What the pipeline could not read, by phase: said in the stop message.
UNREADABLE = {
    "synthesis": "none had the fenced block the instruction is read from",
    "judge": "none was the JSON of yes/no answers the committee filter reads",
}


class UnreadableGuard:
    """Counts one run's answers of one phase ("synthesis" or "judge"), per model."""

    def __init__(self, *, run_id: int, started: float, phase: str):
        self.limit = max(0, int(settings.TRAJHUB_SYNTH_STOP_UNREADABLE))
        self.phase = phase
        self.prefix = f"learn:run:{run_id}:{started}:unreadable:{phase}"
        # Set once the run must stop (the message): the worker threads that share this guard
        # read it before each call and send no more.
        self.stopped = ""

    def _key(self, model: str, what: str) -> str:
        digest = hashlib.sha256(model.encode()).hexdigest()[:16]
        return f"{self.prefix}:{digest}:{what}"

    def _incr(self, key: str) -> int:
        cache.add(key, 0, _COUNTER_SECONDS)
        try:
            return int(cache.incr(key))
        except ValueError:  # expired between add and incr
            cache.set(key, 1, _COUNTER_SECONDS)
            return 1

    def answered(self, model: str, *, readable: bool) -> None:
        """`watch`, raising SynthesisAborted when the run must stop."""
        if self.watch(model, readable=readable):
            raise SynthesisAborted(self.stopped)

    def check(self) -> None:
        """SynthesisAborted if a thread sharing this guard found the run must stop."""
        if self.stopped:
            raise SynthesisAborted(self.stopped)

    def watch(self, model: str, *, readable: bool) -> bool:
        """Count one answer of `model` (called right after the call, in the calling thread, so
        that the other threads send no more); True, with `stopped` set, when its first `limit`
        answers were all unreadable. A limit of 0 turns the guard off."""
        if not self.limit:
            return False
        if readable:
            self._incr(self._key(model, "read"))
            return bool(self.stopped)
        unread = self._incr(self._key(model, "unread"))
        if unread >= self.limit and not cache.get(self._key(model, "read")):
            self.stopped = self.stopped or (
                f"stopped early: the first {unread} answers of model {model!r} could not be "
                f"read ({UNREADABLE.get(self.phase, 'unreadable')}), so the run would spend its "
                "calls and keep nothing. Check that the model follows the prompt's format "
                "(TRAJHUB_LLM_MODEL, TRAJHUB_LLM_JUDGE_MODELS); TRAJHUB_SYNTH_STOP_UNREADABLE "
                f"(now {self.limit}) sets how many answers are tried first, 0 never stops."
            )
        return bool(self.stopped)
