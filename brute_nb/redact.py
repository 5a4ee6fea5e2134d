"""Redaction: every API key brute_nb knows of is replaced by a recognisable mark before text leaves the process.

The keys known are the values of the environment variables the providers and their SDKs read (``KEY_VARIABLES``)
plus every ``api_key`` given to a provider (``remember``). Invariant: a cell output, a widget transcript, an error
message, a session line, a cassette line, an overflow file and a tool result the model reads hold ``sk-...REDACTED``
where the key was, never the key. The registry of explicit keys is process-wide on purpose: a key given to one
agent must not show through any other agent's output, an error raised outside a turn, or the kernel's cells.
Values shorter than ``MIN_LENGTH`` (placeholders such as Ollama's ``"ollama"``) are not secrets and are left alone,
so ordinary words are never blotted out.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, TypeVar

from brute_nb.providers import profiles

KEY_VARIABLES = profiles.secret_variables()
"""The variables the providers' SDKs (and the OpenAI-compatible servers users point them at) read keys from, as
their profiles list them; a value set in any of them is a secret wherever it shows up."""

MIN_LENGTH = 8
SUFFIX = "...REDACTED"
_PREFIX = re.compile(r"[A-Za-z]{1,4}-(?:[A-Za-z]{2,5}-)?")

E = TypeVar("E", bound=BaseException)

_lock = threading.Lock()
_given: set[str] = set()


def remember(*keys: str | None) -> None:
    """Add explicit keys (a provider's ``api_key=``) to the ones redacted everywhere from now on."""
    global _given_version
    with _lock:
        _given.update(k for k in keys if isinstance(k, str) and len(k.strip()) >= MIN_LENGTH)
        _given_version += 1


def _environment() -> tuple[Any, ...]:
    """The key variables' raw values, as cheaply as the platform allows: read on every chunk and every call, so
    ``os.environ.get`` (a str encode and decode a variable, 20 of them) would cost more than the redaction itself."""
    data = getattr(os.environ, "_data", None)
    if os.name == "posix" and isinstance(data, dict):  # CPython's bytes-keyed store behind os.environ
        return tuple(map(data.get, _ENCODED))
    return tuple(map(os.environ.get, KEY_VARIABLES))


_ENCODED = tuple(name.encode() for name in KEY_VARIABLES)
_cached: tuple[tuple[Any, ...], int, tuple[str, ...]] | None = None
_given_version = 0


def known(extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """Every key to redact right now, longest first (so a key containing another is replaced whole).

    Cached while the key variables' values and the remembered keys stay the same, so a key set in ``os.environ``
    at any moment (after a 401, with ``%env``) is redacted from the next call on.
    """
    global _cached
    env = _environment()
    cached = _cached
    if cached is None or cached[0] != env or cached[1] != _given_version:
        keys = {os.environ.get(name) or "" for name in KEY_VARIABLES}
        with _lock:
            keys |= _given
            version = _given_version
        cached = _cached = (env, version, _ordered(keys))
    more = [k for k in extra if k]
    return _ordered({*cached[2], *more}) if more else cached[2]


def _ordered(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted((k for k in set(keys) if len(k.strip()) >= MIN_LENGTH), key=lambda k: (-len(k), k)))


def mark(key: str) -> str:
    """``sk-...REDACTED`` for ``sk-…``: the key's public kind prefix stays readable, nothing of its secret part."""
    prefix = _PREFIX.match(key)
    return (prefix.group(0) if prefix else "") + SUFFIX


@lru_cache(maxsize=8)
def _pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(k) for k in keys))


def key_search(keys: tuple[str, ...]) -> Callable[[str], re.Match[str] | None] | None:
    """A function finding the first of ``keys`` (``known()``) in a text, or None when there is no key to find:
    cheaper than ``redact`` for asking whether a text needs it."""
    return _pattern(keys).search if keys else None


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every known key replaced by its mark."""
    keys = known(extra)
    if not keys or not text:
        return text
    return _pattern(keys).sub(lambda m: mark(m.group(0)), text)


def redact_stream(text: str) -> str:
    """``redact`` for text still arriving: a key's first characters at the very end are hidden too, since the
    rest of the key may be in the next delta and a live display would show the beginning meanwhile."""
    text = redact(text)
    for key in known():
        for size in range(len(key) - 1, 3, -1):
            if text.endswith(key[:size]):
                return text[:-size] + mark(key)
    return text


def key_prefix_at_end(text: str) -> int:
    """How many characters at the end of ``text`` could be the beginning of a known key (0 if none): a stream
    sent piece by piece holds them back until the next delta says whether the key follows."""
    best = 0
    for key in known():
        for size in range(min(len(key) - 1, len(text)), best, -1):
            if text.endswith(key[:size]):
                best = size
                break
    return best


def redact_value(value: Any) -> Any:
    """Every string inside a JSON-like value redacted (dict keys too); other values as they are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    return value


def redact_exception(exc: E) -> E:
    """Redact the messages of ``exc`` and of every exception chained to it, in place, and return it.

    An SDK error quoting an error body that echoes the key would otherwise show it in the cell's traceback
    ("The above exception was the direct cause of ..."), even when brute_nb's own message is clean.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.args = tuple(redact_value(a) for a in current.args)
        for attr in ("message", "body"):
            value = getattr(current, attr, None)
            if isinstance(value, str | dict | list):
                with contextlib.suppress(AttributeError):  # a read-only property: its text is in args
                    setattr(current, attr, redact_value(value))
        current = current.__cause__ or current.__context__
    return exc


def redact_fragments(parts: list[str], extra: Iterable[str | None] = ()) -> list[str]:
    """``parts`` (a streamed text, cut anywhere) with every key that spans them replaced: the mark goes where the
    key began, the key's other characters are dropped from whichever part held them. ``"".join`` of the result is
    ``redact("".join(parts))``."""
    joined = "".join(parts)
    keys = known(extra)
    spans = [(m.start(), m.end(), mark(m.group(0))) for m in _pattern(keys).finditer(joined)] if keys else []
    if not spans:
        return parts
    starts = {s: text for s, _, text in spans}
    hidden = {i for s, e, _ in spans for i in range(s, e)}
    out, pos = [], 0
    for part in parts:
        kept = []
        for i in range(pos, pos + len(part)):
            if i in starts:
                kept.append(starts[i])
            elif i not in hidden:
                kept.append(joined[i])
        out.append("".join(kept))
        pos += len(part)
    return out
