"""Provider options from the magic (``-o temperature=0.2 -o reasoning_effort=low``), checked against the SDK.

A value is JSON when it parses (numbers, booleans, objects such as ``thinking={"type":"enabled",...}``), else the
text itself. The check reads the signature of the installed SDK's own ``create`` method, so it follows the SDK
(anthropic 2.x's ``messages.create`` takes no ``temperature``, and says so here, before any request), and an
unknown name is refused with the close matches and every name the call takes. Arguments brute_nb itself sends
(model, messages, tools, stream...) cannot be overridden this way.
"""

from __future__ import annotations

import difflib
import inspect
import json
from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.errors import ProviderNotConfiguredError


class OptionError(ProviderNotConfiguredError, ValueError):
    """A provider option the SDK call does not take (or not written KEY=VALUE); the message lists what it takes."""

SET_BY_BRUTE = frozenset({"self", "model", "messages", "input", "system", "tools", "stream", "stream_options",
                          "extra_headers", "extra_query", "timeout"})
CREATE = {
    "openai": ("openai.resources.chat.completions", "AsyncCompletions", "chat.completions.create"),
    "openai-responses": ("openai.resources.responses", "AsyncResponses", "responses.create"),
    "anthropic": ("anthropic.resources.messages", "AsyncMessages", "messages.create"),
}


def parse_pairs(pairs: Iterable[str]) -> dict[str, Any]:
    """``["temperature=0.2", "stop=[\\"x\\"]"]`` -> ``{"temperature": 0.2, "stop": ["x"]}``."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"-o takes KEY=VALUE (e.g. -o temperature=0.2); {pair!r} is not one")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def accepted(kind: str) -> tuple[str, list[str]] | None:
    """The SDK call a provider kind makes and the options it takes (None when brute_nb cannot tell: llm)."""
    import importlib

    entry = CREATE.get("openai" if kind not in CREATE and kind != "llm" else kind)
    if entry is None:
        return None
    module, cls, label = entry
    create = getattr(importlib.import_module(module), cls).create
    names = [n for n in inspect.signature(create).parameters if n not in SET_BY_BRUTE]
    return label, names


def check(kind: str, options: Mapping[str, Any]) -> None:
    """Refuse, all at once, the options the provider's SDK call does not take."""
    found = accepted(kind) if options else None
    if found is None:
        return
    label, names = found
    problems = []
    for key in options:
        if key in SET_BY_BRUTE:
            problems.append(f"{key} is set by brute_nb itself")
        elif key not in names:
            close = difflib.get_close_matches(key, names, n=3)
            problems.append(f"{kind}'s {label} takes no {key!r}" + (f" (did you mean {', '.join(close)}?)"
                                                                     if close else ""))
    if problems:
        raise OptionError("-o: " + "; ".join(problems) + f". {label} takes: {', '.join(names)}")
