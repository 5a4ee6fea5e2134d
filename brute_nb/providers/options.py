"""Provider options from the magic (``-o temperature=0.2 -o reasoning_effort=low``), checked against the SDK.

A value is JSON when it parses (numbers, booleans, objects such as ``thinking={"type":"enabled",...}``), else the
text itself. The check reads the signature of the installed SDK's own ``create`` method, so it follows the SDK
(anthropic 2.x's ``messages.create`` takes no ``temperature``, and says so here, before any request), and an
unknown name is refused with the close matches and every name the call takes. Arguments brute_nb itself sends
(model, messages, tools, stream...) cannot be overridden this way. Anthropic's beta parameters (``betas``,
``mcp_servers``, ``context_management``...) are taken too: the provider then calls the beta ``messages.create``.
``extra_headers`` passes headers the SDK sends as given (``anthropic-beta``, a proxy's own), never a key header.
"""

from __future__ import annotations

import difflib
import inspect
import json
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from brute_nb.errors import ProviderNotConfiguredError
from brute_nb.providers import profiles


class OptionError(ProviderNotConfiguredError, ValueError):
    """A provider option the SDK call does not take (or not written KEY=VALUE); the message lists what it takes."""

SET_BY_BRUTE = frozenset({"self", "model", "messages", "input", "system", "tools", "stream", "stream_options",
                          "extra_query", "timeout"})
KEY_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key", "proxy-authorization")
"""Headers that carry a key: never set through ``extra_headers``, which would send it to whatever host the client
talks to (a key goes only to its provider's host: ``credentials``); ``api_key=`` is the way to give one."""
SECRET_WORDS = frozenset({"auth", "authorization", "key", "apikey", "token", "secret", "password", "cookie",
                          "session", "signature", "credential", "credentials"})
"""Words of a header's name that say its value is a secret (``X-Portkey-Api-Key``, ``Cookie``): a gateway's key,
sent to the host the user gave it for, and redacted wherever it would show."""
SCHEMES = ("bearer ", "basic ", "token ")
"""Values that say they are credentials whatever the header's name."""


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
    """The SDK call a provider kind makes (``Profile.options_call``, and its beta one's parameters too) and the
    options it takes; None when brute_nb cannot tell (``llm``, a plugin without a profile)."""
    profile = profiles.of(kind)
    entry = profile.options_call if profile is not None else None
    if entry is None:
        return None
    names = [n for n in _parameters(entry) if n not in SET_BY_BRUTE]
    if profile is not None and profile.beta_options_call is not None:
        names += [n for n in _parameters(profile.beta_options_call) if n not in names and n not in SET_BY_BRUTE]
    return entry[2], names


def _parameters(entry: tuple[str, str, str]) -> list[str]:
    import importlib

    module, cls, _ = entry
    return list(inspect.signature(getattr(importlib.import_module(module), cls).create).parameters)


@cache
def beta_only(kind: str) -> frozenset[str]:
    """The parameters of ``kind``'s beta call its plain call does not take (the provider then calls the beta one)."""
    profile = profiles.of(kind)
    if profile is None or profile.options_call is None or profile.beta_options_call is None:
        return frozenset()
    return frozenset(_parameters(profile.beta_options_call)) - frozenset(_parameters(profile.options_call))


def check(kind: str, options: Mapping[str, Any]) -> None:
    """Refuse, all at once, the options the provider's SDK call does not take."""
    found = accepted(kind) if options else None
    if found is None:
        return
    label, names = found
    problems = header_problems(options.get("extra_headers"))
    for key in options:
        if key in SET_BY_BRUTE:
            problems.append(f"{key} is set by brute_nb itself")
        elif key not in names:
            close = difflib.get_close_matches(key, names, n=3)
            problems.append(f"{kind}'s {label} takes no {key!r}" + (f" (did you mean {', '.join(close)}?)"
                                                                     if close else ""))
    if problems:
        raise OptionError("-o: " + "; ".join(problems) + f". {label} takes: {', '.join(names)}")


def header_problems(headers: Any) -> list[str]:
    """What is wrong with ``extra_headers``: not a mapping of names to strings, or a header that carries a key."""
    if headers is None:
        return []
    if not isinstance(headers, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in headers.items()):
        return ['extra_headers takes an object of header names to strings (-o extra_headers=\'{"anthropic-beta": '
                '"..."}\')']
    problems = []
    keys = [k for k in headers if k.strip().lower() in KEY_HEADERS]
    if keys:
        problems.append(f"extra_headers cannot set {', '.join(keys)}: a key goes only to its provider's host; give "
                        "it as api_key=... (%brute config api_key=...)")
    broken = [k for k, v in headers.items() if any(c in k + v for c in "\r\n\0")]
    if broken:  # the HTTP client would refuse it later, quoting the value (and a secret after the break) in its error
        problems.append(f"extra_headers {', '.join(map(repr, broken))}: a line break in a header would add headers "
                        "of its own to the request; give each header as its own entry")
    return problems


def remember_secret_headers(options: Mapping[str, Any]) -> None:
    """Redact, from now on wherever they show (``%brute config``, errors, sessions), the values of the
    ``extra_headers`` in ``options`` that carry a secret: by their header's name, or a credential scheme."""
    from brute_nb.redact import remember

    headers = options.get("extra_headers")
    if not isinstance(headers, Mapping):
        return
    for name, value in headers.items():
        if not isinstance(value, str) or not isinstance(name, str):
            continue
        words = {w for w in name.lower().replace("_", "-").split("-") if w}
        scheme = next((p for p in SCHEMES if value.lower().startswith(p)), None)
        if words & SECRET_WORDS or scheme:
            secret = value[len(scheme):].strip() if scheme else value
            remember(value, secret, *(part.partition("=")[2] for part in value.split(";")))
