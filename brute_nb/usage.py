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

Providers report differently (OpenAI's input already includes the cached part, Anthropic's leaves out both cache
reads and writes), so the counts are put in this convention once, when a transport reads a reply
(``reported``, pydantic-ai's ``RequestUsage.extract`` idiom): a reply's ``meta`` holds ``input_tokens``,
``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens`` and ``reasoning_tokens`` as this module means
them, and no reader downstream sees a vendor's raw count. ``cache_read_tokens`` in a meta marks that convention.
A session line written before it has ``cached_tokens`` instead and its provider's raw input (``LEGACY_*``): it is
read the old way, here and only here (``Usage.of_meta``, ``in_convention``), and the file is never rewritten for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Protocol

CONVENTION_KEY = "cache_read_tokens"
"""The meta key whose presence says the counts beside it are in this module's convention (every reply read now)."""
LEGACY_READS = "cached_tokens"
"""Where a session line written before the convention kept its cache reads."""


def input_excludes_cache(provider: object) -> bool:
    """Whether ``provider``'s old session lines hold an ``input_tokens`` without cache reads and writes (the API's
    raw count): its profile says (``Profile.input_excludes_cache``)."""
    from brute_nb.providers import profiles

    profile = profiles.of(provider)
    return profile is not None and profile.input_excludes_cache


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
        """A reply's usage from its ``meta``; None when it holds no counts. A line written before the convention
        (no ``cache_read_tokens``) is read the old way: its cache reads from ``cached_tokens``, and its provider's
        input without the cache made whole.

        A count that is not a non-negative integer (a hand-edited session line) counts as not reported, and so
        does a reasoning count larger than the output it is part of.
        """
        reported_input, output = _count(meta.get("input_tokens")), _count(meta.get("output_tokens"))
        if reported_input is None and output is None:
            return None
        legacy = CONVENTION_KEY not in meta
        reads = _count(meta.get(LEGACY_READS if legacy else CONVENTION_KEY)) or 0
        writes = _count(meta.get("cache_write_tokens")) or 0
        total = (reported_input or 0) + (left_out(meta) if legacy else 0)
        reasoning = _count(meta.get("reasoning_tokens"))
        if reasoning is not None and reasoning > (output or 0):
            reasoning = None
        return cls(total, output or 0, reads, writes, reasoning)

    @classmethod
    def reported(cls, *, input_tokens: object, output_tokens: object, cache_read_tokens: object = None,
                 cache_write_tokens: object = None, reasoning_tokens: object = None,
                 input_includes_cache: bool = True) -> dict[str, int]:
        """A reply's counts for its ``meta``, in this convention, from what its API reported (a transport calls
        this as it reads the reply; ``input_includes_cache=False`` for an API whose input leaves the cache out).

        A count the API did not report is left out (reasoning then reads as unknown); once any count is there,
        ``cache_read_tokens`` is too (0 when none were reported), the mark of the convention.
        """
        given = {"input_tokens": input_tokens, "output_tokens": output_tokens, CONVENTION_KEY: cache_read_tokens,
                 "cache_write_tokens": cache_write_tokens, "reasoning_tokens": reasoning_tokens}
        out = {k: int(v) for k, v in given.items() if isinstance(v, int | float) and not isinstance(v, bool)}
        if not out:
            return out
        out.setdefault(CONVENTION_KEY, 0)
        if not input_includes_cache and "input_tokens" in out:
            out["input_tokens"] += out[CONVENTION_KEY] + out.get("cache_write_tokens", 0)
        return out

    @classmethod
    def total(cls, messages: Iterable[Counted]) -> Usage | None:
        """The usage of the replies among ``messages`` added up; None when none of them reported counts."""
        found = [u for m in messages if m.role == "assistant" and (u := m.usage) is not None]
        return sum(found, cls()) if found else None


def left_out(meta: Mapping[str, Any]) -> int:
    """What an old line's ``input_tokens`` left out and the convention counts: its cache reads and writes when its
    provider reported them apart (``input_excludes_cache``), else 0. The one rule for old lines, which
    ``Usage.of_meta`` and the frame's row-by-row pass (``frames.meta_columns``) both apply."""
    if not input_excludes_cache(meta.get("provider")):
        return 0
    return (_count(meta.get(LEGACY_READS)) or 0) + (_count(meta.get("cache_write_tokens")) or 0)


def in_convention(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``meta`` with its counts in the convention: an old line's read the old way and written under the
    new keys (what a count edited in a frame is written beside, so the old reading is not applied to it again);
    a meta already in it, or with no counts, comes back as it is."""
    out = dict(meta)
    usage = Usage.of_meta(out)
    if CONVENTION_KEY in out or usage is None:
        return out
    out.pop(LEGACY_READS, None)
    if _count(out.get("input_tokens")) is not None:
        out["input_tokens"] = usage.input_tokens
    out[CONVENTION_KEY] = usage.cache_read_tokens
    return out
