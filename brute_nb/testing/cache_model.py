"""The fake provider's prompt cache: which part of a request's prompt is billed as a cache read or write.

Modelled on what the APIs document, so a caching strategy measured against the fake means something:

* A prompt is a sequence of blocks (tools, system, then each message's content blocks) costing
  ``len(canonical JSON) // 4`` tokens each (the fake's usual unit); cache marks are not part of a block's text.
* Anthropic caches only at ``cache_control`` breakpoints. A prefix ending at a breakpoint of an earlier request is
  a cache read when this request has a breakpoint at most ``LOOKBACK`` blocks after it; the prompt from the read
  up to the last breakpoint is a cache write; the rest is plain input (``input_tokens`` excludes both). A request
  without breakpoints is not cached at all.
* OpenAI caches every prompt of at least ``MIN_TOKENS`` on its own; a later prompt (same ``prompt_cache_key``)
  reads the longest whole-block prefix it shares with an earlier one, counted in steps of ``STEP`` tokens.
  ``input_tokens`` includes the cached ones.
* Prefixes shorter than ``MIN_TOKENS`` are never cached, as on both APIs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MIN_TOKENS = 1024
LOOKBACK = 20
STEP = 128


@dataclass(frozen=True)
class Bill:
    """One request's prompt: total tokens, the part read from cache, the part written to it."""

    total: int
    read: int = 0
    written: int = 0


def _canonical(block: Any) -> str:
    if isinstance(block, Mapping):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, ensure_ascii=False)


def blocks(api: str, body: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The prompt as (canonical block, marked as a breakpoint) pairs, in the order the API caches it."""
    out: list[tuple[str, bool]] = []

    def add(block: Any) -> None:
        out.append((_canonical(block), isinstance(block, Mapping) and "cache_control" in block))

    for tool in body.get("tools") or ():
        add(tool)
    system = body.get("system") if api == "anthropic" else body.get("instructions")
    for block in system if isinstance(system, list) else ([system] if system else []):
        add(block)
    messages = body.get("messages") if "messages" in body else body.get("input")
    for m in messages if isinstance(messages, list) else ([messages] if messages else []):
        content = m.get("content") if isinstance(m, Mapping) else None
        if api == "anthropic" and isinstance(content, str):
            content = [{"type": "text", "text": content}]  # the API reads a string turn as that one text block
        if api == "anthropic" and isinstance(content, list):
            for block in content:
                add({"role": m.get("role"), **block} if isinstance(block, Mapping) else block)
        else:
            add(m)
    return out


@dataclass
class PromptCache:
    """What the fake server has cached so far: prefix digests and their token counts, per cache key."""

    seen: dict[str, dict[str, int]] = field(default_factory=dict)

    def bill(self, api: str, body: Mapping[str, Any]) -> Bill:
        prompt = blocks(api, body)
        digests, tokens = _prefixes(prompt)
        total = tokens[-1] if tokens else 0
        cache = self.seen.setdefault(str(body.get("prompt_cache_key") or ""), {})
        if api == "anthropic":
            return self._anthropic(prompt, digests, tokens, total, cache)
        return self._openai(digests, tokens, total, cache)

    @staticmethod
    def _anthropic(prompt: list[tuple[str, bool]], digests: list[str], tokens: list[int], total: int,
                   cache: dict[str, int]) -> Bill:
        marks = [i for i, (_, marked) in enumerate(prompt) if marked]
        if not marks:
            return Bill(total)
        read_at = max((j for i in marks for j in range(max(0, i - LOOKBACK + 1), i + 1) if digests[j] in cache),
                      default=-1)
        read = tokens[read_at] if read_at >= 0 else 0
        written = 0
        for i in marks:
            if tokens[i] >= MIN_TOKENS and i > read_at:
                cache[digests[i]] = tokens[i]
                written = tokens[i] - read
        return Bill(total, read, max(written, 0))

    @staticmethod
    def _openai(digests: list[str], tokens: list[int], total: int, cache: dict[str, int]) -> Bill:
        if total < MIN_TOKENS:
            return Bill(total)
        hit = max((i for i, d in enumerate(digests) if d in cache), default=-1)
        read = tokens[hit] // STEP * STEP if hit >= 0 and tokens[hit] >= MIN_TOKENS else 0
        for d, t in zip(digests, tokens, strict=True):
            if t >= MIN_TOKENS:
                cache[d] = t
        return Bill(total, read)


def prompt_tokens(api: str, body: Mapping[str, Any]) -> int:
    """The whole prompt's tokens as ``bill`` counts them, without touching the cache (the token-count endpoint)."""
    _, tokens = _prefixes(blocks(api, body))
    return tokens[-1] if tokens else 0


def _prefixes(prompt: list[tuple[str, bool]]) -> tuple[list[str], list[int]]:
    """For each block, the digest of the prompt up to and including it, and its token count."""
    digests, tokens = [], []
    h = hashlib.sha256()
    count = 0
    for text, _ in prompt:
        h.update(text.encode())
        h.update(b"\x00")
        digests.append(h.copy().hexdigest())
        count += len(text) // 4
        tokens.append(count)
    return digests, tokens
