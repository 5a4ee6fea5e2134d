"""Token counts for compaction: how big the conversation is, as the next model call will see it.

The best number is the one the provider reported: the last assistant reply's ``meta["input_tokens"]`` is the exact
size of everything before it (tool schemas and formatting included). What was appended since (that reply, tool
results, a new prompt) is estimated, with a real tokenizer when one is importable (tiktoken) and characters/4
otherwise. The difference between the report and our estimate of the same prefix is kept as an ``overhead``, so
the compaction layers can measure a log they have changed with the same yardstick.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from brute_nb.message import Message, dumps, role_of

Tokenizer = Callable[[str], int]

MESSAGE_OVERHEAD = 4
"""Tokens every message costs beyond its text (role and separators), as the providers' own accounting does."""



def chars_per_four(text: str) -> int:
    """The fallback estimate: a token is about four characters of English or code."""
    return math.ceil(len(text) / 4)


@functools.cache
def default_tokenizer() -> Tokenizer:
    """tiktoken's o200k_base when it is installed and its tables load (no network needed), else chars/4."""
    try:
        import tiktoken  # type: ignore[import-not-found, unused-ignore]

        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # not installed, or its tables cannot be fetched offline: estimate instead
        return chars_per_four

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


@dataclass(frozen=True, slots=True)
class Measurement:
    tokens: int
    overhead: int
    """Reported minus estimated tokens of the prefix the report covers (never negative: we round up, not down)."""


class TokenCounter:
    """Estimates messages (each one once: messages are immutable) and reads what providers reported."""

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self.count_text: Tokenizer = tokenizer or default_tokenizer()
        self._cache: dict[int, tuple[Any, int]] = {}

    def message(self, message: Any) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        n = MESSAGE_OVERHEAD + self.count_text(message.content or "")
        for call in message.tool_calls or ():
            n += self.count_text(call.name) + self.count_text(dumps(call.arguments))
        if len(self._cache) > 50_000:
            self._cache.clear()
        # The message itself is kept in the cache so its id cannot be reused by another object while cached.
        self._cache[id(message)] = (message, n)
        return n

    def estimate(self, messages: Iterable[Any]) -> int:
        return sum(self.message(m) for m in messages)

    def measure(self, messages: Sequence[Any], *, stale: Any = None, overhead: int = 0) -> Measurement:
        """Reported input tokens of the last reply plus an estimate of the rest; all estimate without a report.

        ``stale`` is a reply whose report no longer describes the log (the history before it was compacted);
        without a usable report, ``overhead`` (the last one measured) is added to the estimate.
        """
        found = last_report(messages, stale=stale)
        if found is None:
            return Measurement(overhead + self.estimate(messages), overhead)
        index, reported = found
        overhead = max(0, reported - self.estimate(messages[:index]))
        return Measurement(reported + self.estimate(messages[index:]), overhead)


def reported_input(message: Message) -> int | None:
    """The prompt size a provider reported on an assistant reply, cache reads and writes included (``Usage``'s
    convention, which the reply's meta holds since its transport read it); None if absent."""
    usage = message.usage
    return None if usage is None or not isinstance(message.meta.get("input_tokens"), int) else usage.input_tokens


def last_report(messages: Sequence[Any], *, stale: Any = None) -> tuple[int, int] | None:
    """(index, reported input tokens) of the last assistant reply that carries a report, unless it is stale."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if role_of(m) != "assistant":
            continue
        reported = reported_input(m)
        if reported is None:
            continue
        if stale is not None and (m is stale or m == stale):
            return None
        return i, reported
    return None
