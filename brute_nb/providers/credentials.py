"""Credentials follow the host: which key a provider's client is built with, decided in one place.

A key read from the environment (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, a hosted endpoint's variable) goes only
to its provider's own host, or to the base URL set in the same environment (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``): a notebook someone else wrote may name any ``--base-url``, and the user's key must not
follow it there. Any other base URL needs a key given for it: ``api_key=`` (``%brute config api_key=...``),
``api_key="env:NAME"`` (a variable the user names), or ``api_key="none"`` for a local server that wants none. The
SDKs read the environment (and Anthropic's profiles on disk) whenever no key is passed, so for another host a key
is always passed explicitly.

A key stored with ``%brute keys set`` (``providers.keys``) is used only when none of the provider's variables is set
(the environment wins), and only for the provider's own host: a base URL from the environment or a notebook gets
no stored key, and the error says how to give one for it.

Redirects never carry keys: the SDKs follow them (``follow_redirects=True``), and httpx2 strips only
``Authorization`` when a redirect leaves the origin (both SDKs send the key there today, Anthropic's as a bearer
token; its ``x-api-key`` and the ``api-key`` of Azure-style servers would go on); ``strip_keys_off_origin`` is a
request hook on every client brute_nb builds that drops every key header from a request to any other origin.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from brute_nb.errors import ProviderNotConfiguredError
from brute_nb.redact import remember

NO_KEY = "none"
"""``api_key="none"``: a local server that takes no key (the SDKs insist on one, so this text is sent)."""
ENV_PREFIX = "env:"
KEY_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")
"""The headers the SDKs (and the compatible endpoints) carry a key in."""


def origin(url: str | None) -> tuple[str, str, int | None] | None:
    """``(scheme, host, port)`` of a URL (default ports filled in), None for no URL or one without a host."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    return scheme, parts.hostname.lower(), port or {"https": 443, "http": 80}.get(scheme)


def is_key(api_key: str | None) -> bool:
    """Whether ``api_key`` is a key itself (to redact from then on), not ``none`` or an ``env:NAME`` reference:
    remembering those as keys hid the words (and, in a stream, any trailing "e" or "n") wherever they appeared."""
    if not api_key:
        return False
    return api_key.strip().lower() != NO_KEY and not api_key.startswith(ENV_PREFIX)


def given_key(api_key: str) -> str:
    """A key the user gave: ``none``, ``env:NAME`` (read now, so a variable set later counts) or the key itself."""
    if api_key.strip().lower() == NO_KEY:
        return NO_KEY
    if api_key.startswith(ENV_PREFIX):
        name = api_key[len(ENV_PREFIX):].strip()
        value = os.environ.get(name)
        if not value:
            raise ProviderNotConfiguredError(
                f"api_key={api_key}: the variable {name} is not set in the kernel; set it (os.environ[{name!r}] = "
                "'...') and run the cell again")
        remember(value)
        return value
    return api_key


def client_key(*, provider: str, key_variables: tuple[str, ...], homes: tuple[str | None, ...],
               base_url: str | None, api_key: str | None,
               stored: Callable[[], str | None] | None = None) -> str | None:
    """The key to build the client with; None lets the SDK read its own variable (the URL is a home).

    ``homes`` are the URLs a key from the environment may go to (the provider's own first, then the base URL
    variable's value); no ``base_url`` means the SDK's default, the provider's own. ``key_variables`` are the
    variables the key may come from; ``stored`` reads the provider's stored key, asked only when none is set.
    """
    if api_key:
        return given_key(api_key)
    if stored is not None and not any(os.environ.get(name) for name in key_variables):
        key = stored()
        if key:
            return stored_key(provider, key, own=homes[0], goes_to=base_url or next(filter(None, homes[1:]), None))
    target = origin(base_url)
    if target is None or target in {origin(home) for home in homes}:
        return None
    found = [name for name in key_variables if os.environ.get(name)]
    if not found:
        return NO_KEY  # nothing of the user's to send; and the SDK must not look for a key of its own
    raise ProviderNotConfiguredError(
        f"{base_url} is not {provider}'s own host, so {found[0]} (a key from the environment) is not sent there. "
        f"Give a key for that server: %brute config api_key=... (or api_key=env:VARIABLE to read another variable, "
        f"or api_key=none for a local server that takes no key); from Python, pass api_key=...")


def key_source(*, api_key: str | None, key_variables: tuple[str, ...], stored_name: str | None = None,
               stored: Callable[[], str | None] | None = None) -> str:
    """Where the key a client was built with came from (``client_key``'s order), in words a 401 can end with: the
    variable or setting to change. Never the key."""
    if api_key and api_key.startswith(ENV_PREFIX):
        return f"the variable {api_key[len(ENV_PREFIX):].strip()} (api_key={api_key.strip()})"
    if api_key:
        return "the api_key setting (%brute config api_key=..., or api_key=... from Python)"
    found = [name for name in key_variables if os.environ.get(name)]
    if found:
        return f"the environment variable {found[0]}"
    if stored_name and stored is not None and stored():
        return f"your saved {stored_name} key (%brute keys set {stored_name} replaces it)"
    return "the SDK's own configuration (none of " + (", ".join(key_variables) or "its key variables") + " is set)"


def stored_key(provider: str, key: str, *, own: str | None, goes_to: str | None) -> str:
    """A stored key, for a client whose requests go to ``goes_to`` (None: the SDK's default, the provider's own
    host): refused for any host but ``own``."""
    if goes_to is None or (own is not None and origin(goes_to) == origin(own)):
        return key
    raise ProviderNotConfiguredError(
        f"{goes_to} is not {provider}'s own host, so your saved {provider} key is not sent there. Give a key for "
        "that server: %brute config api_key=... (or api_key=env:VARIABLE, or api_key=none for a local server that "
        "takes no key); from Python, pass api_key=...")


def strip_keys_off_origin(home: str) -> Callable[[Any], Awaitable[None]]:
    """An httpx2 request hook: a request to another origin than ``home`` (a redirect) carries no key header."""
    allowed = origin(home)

    async def hook(request: Any) -> None:
        target = origin(str(request.url))
        upgrade = allowed is not None and target == ("https", allowed[1], 443) and allowed[0] == "http"
        if target != allowed and not upgrade:  # httpx2's own exception: http to https on the same host
            for name in KEY_HEADERS:
                request.headers.pop(name, None)

    return hook
