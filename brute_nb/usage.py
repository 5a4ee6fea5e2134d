"""Usage: the tokens of a reply, or of many replies added up, in one convention whoever reported them.

The invariant: every number brute_nb calls "tokens" (the cell footer, the chat panel, ``Budget(tokens=...)``,
``brute_nb.map``'s columns and progress bar, compaction's size of the conversation, the price) is read from a
``Usage``, so they all count the same thing. The convention is genai-prices' (the price table reads it as is):
``input_tokens`` is every token the model read, cache reads and writes included; ``cache_read_tokens`` and
``cache_write_tokens`` say how many of those were read from or written to the prompt cache; ``output_tokens`` is
every token it wrote (reasoning included). ``tokens`` is input plus output.

``reasoning_tokens`` says how many of the output tokens were the model's reasoning (thinking), as the provider
reported it: OpenAI's ``completion_tokens_details.reasoning_tokens`` (Chat Completions) or
``output_tokens_details.reasoning_tokens`` (Responses), Anthropic's ``output_tokens_details.thinking_tokens``. It is
a part of ``output_tokens``, never added to it, and it is None when the provider did not say (an older API version,
a compatible server, a session written before it was kept): unknown, not zero. A sum that includes an unknown is
unknown, so a total never claims a count nobody reported.

Providers report differently, and a message's ``meta`` keeps what its provider reported: OpenAI's input already
includes the cached part (``cached_tokens``), Anthropic's leaves out both cache reads (``cached_tokens``) and
writes (``cache_write_tokens``). ``Usage.of_meta`` is the one place that difference is known.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Protocol

INPUT_EXCLUDES_CACHE = frozenset({"anthropic"})
"""Providers whose reported ``input_tokens`` leave out cache reads and writes."""


class Counted(Protocol):
    """What ``Usage.total`` reads of a message (this module sits below ``message``, so it names no class)."""

    @property
    def role(self) -> str: ...

    @property
    def usage(self) -> Usage | None: ...


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _add(one: int | None, other: int | None) -> int | None:
    return None if one is None or other is None else one + other


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts in genai-prices' shape; ``Usage() + reply.usage`` adds replies up."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int | None = 0
    """Of ``output_tokens``, those spent reasoning; None when the provider did not report them (see the module)."""

    @property
    def tokens(self) -> int:
        """Every token read or written: what a token budget, the footer and the progress bar count."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        added: dict[str, Any] = {f.name: _add(getattr(self, f.name), getattr(other, f.name)) for f in fields(Usage)}
        return Usage(**added)

    def to_dict(self) -> dict[str, int]:
        """The counts as genai-prices' ``Usage(**...)`` takes them (cache counts only when there are some).

        Reasoning is left out: it is billed as the output it is part of, and the price table takes no such field.
        """
        out = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        if self.cache_read_tokens:
            out["cache_read_tokens"] = self.cache_read_tokens
        if self.cache_write_tokens:
            out["cache_write_tokens"] = self.cache_write_tokens
        return out

    @classmethod
    def of_meta(cls, meta: Mapping[str, Any]) -> Usage | None:
        """A reply's usage from its ``meta`` as its provider reported it; None when it reported no counts.

        A count that is not a non-negative integer (a hand-edited session line) counts as not reported, and so
        does a reasoning count larger than the output it is part of.
        """
        reported_input, output = _count(meta.get("input_tokens")), _count(meta.get("output_tokens"))
        if reported_input is None and output is None:
            return None
        reads = _count(meta.get("cached_tokens")) or 0
        writes = _count(meta.get("cache_write_tokens")) or 0
        total = reported_input or 0
        if meta.get("provider") in INPUT_EXCLUDES_CACHE:
            total += reads + writes
        reasoning = _count(meta.get("reasoning_tokens"))
        if reasoning is not None and reasoning > (output or 0):
            reasoning = None
        return cls(total, output or 0, reads, writes, reasoning)

    @classmethod
    def total(cls, messages: Iterable[Counted]) -> Usage | None:
        """The usage of the replies among ``messages`` added up; None when none of them reported counts."""
        found = [u for m in messages if m.role == "assistant" and (u := m.usage) is not None]
        return sum(found, cls()) if found else None
