"""What ``%brute models`` and ``%brute keys`` show: the providers this environment configures (which have a key, from
where, and the model each would use), and the models one of them offers. ``keys_command`` is ``%brute keys`` and
``brute-nb keys`` (the same words, the same output), so a terminal and a notebook manage the keys one way.

Listing asks the provider's own models endpoint through its SDK (``client.models.list()``; an ``llm`` model asks
``llm``'s registry) with a short timeout. Invariant: listing never raises for an unreachable or refusing provider;
it returns the reason as text, because ``%brute models`` is a look around, not a turn.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio

from brute_nb.providers import keys, profiles
from brute_nb.providers.profiles.openai import CHAT

LIST_TIMEOUT = 10.0
KEYS_USAGE_HEAD = ("usage: %brute keys                 which providers have a key, and where it comes from\n"
                   "       %brute keys set PROVIDER    ask for a key (hidden) and save it, readable by you only\n"
                   "       %brute keys remove PROVIDER\n"
                   "       %brute keys path            where saved keys are kept\n")


def keyed() -> dict[str, tuple[str, ...]]:
    """The providers a key is stored for (``%brute keys set NAME``), and the variables that hold one in the
    environment (the SDK's own, and each hosted endpoint's): every profile that keeps a key under its own kind,
    the built-ins first, then those installed packages declare."""
    return {p.kind: p.key_variables for p in profiles.installed() if p in profiles.keyed()}


KEYED = {p.kind: p.key_variables for p in profiles.keyed()}
"""The built-in providers a key is stored for (``keyed()`` adds those installed packages declare)."""


def keys_usage() -> str:
    return KEYS_USAGE_HEAD + f"providers: {', '.join(keyed())}"


KEYS_USAGE = keys_usage()


def configured() -> list[tuple[str, str]]:
    """``(provider, how)`` for every provider the environment sets up: those a variable chooses, a server given in
    OpenAI's place (``OPENAI_BASE_URL``), then the hosted endpoints with their URL."""
    env = os.environ
    known = profiles.installed()
    hosted = [p for p in known if _hosted(p)]
    found = [(p.kind, f"{var} is set") for p in known if p not in hosted for var in p.chosen_by if env.get(var)]
    server = CHAT.base_url_variable or ""
    if env.get(server):
        found.append((CHAT.kind, f"{server}={env[server]}"))
    found += [(p.kind, f"{' or '.join(p.key_variables)} is set ({p.base_url})") for p in hosted if p.key()]
    named = {name for name, _ in found}
    found += [(name, f"key saved in {keys.path()}") for name in keys.load() if name not in named]
    return found


def _hosted(profile: profiles.Profile) -> bool:
    """An endpoint at a fixed URL that its own key chooses (no SDK variable may move it)."""
    return bool(profile.base_url and profile.key_variables and profile.chosen_by == profile.key_variables
                and profile.base_url_variable is None)


async def _list(provider: Any) -> list[str]:
    if getattr(provider, "provider", None) == "llm":
        import llm

        return sorted(m.model_id for m in llm.get_models())
    with anyio.fail_after(LIST_TIMEOUT):
        page = await provider.client.models.list()
        return sorted(str(m.id) for m in page.data)


def list_models(provider: Any) -> tuple[list[str], str | None]:
    """The models ``provider`` offers, or ``([], why not)``."""
    from brute_nb.event_loop import run_sync

    try:
        return run_sync(lambda: _list(provider)), None
    except TimeoutError:
        return [], f"no answer within {LIST_TIMEOUT:g} s"
    except Exception as exc:
        status = getattr(exc, "status_code", None)
        return [], f"HTTP {status}" if status else f"{type(exc).__name__}: {exc}"


def key_source(name: str) -> str | None:
    """Where ``name``'s key comes from (the environment wins over a saved key), or None; never the key."""
    variable = next((v for v in keyed().get(name, ()) if os.environ.get(v)), None)
    if variable is not None:
        return f"set in this kernel ({variable})" if keys.set_in_kernel(variable) else f"environment ({variable})"
    return f"saved ({keys.path()})" if keys.stored(name) else None


def model_of(name: str) -> str:
    """The model ``name`` would use when no ``-m`` names one."""
    profile = profiles.of(name)
    return profile.model() if profile is not None else ""


def key_lines() -> list[str]:
    """One line a provider: whether it has a key, from where, and the model it would use."""
    saved = keys.load()
    known = keyed()
    names = [*known, *(n for n in saved if n not in known)]
    lines = []
    for name in names:
        source = key_source(name) if name in known else f"saved ({keys.path()})"
        model = model_of(name) if name in known else ""
        lines.append(f"  {name:<12} {source or 'no key':<40} {model}".rstrip())
    return lines


def keys_command(words: list[str], ask: Callable[[str], str]) -> str:
    """``%brute keys [set|remove|path] [PROVIDER]``: the text to print. ``ask(prompt)`` reads a key without
    showing it (``getpass``)."""
    if not words:
        file = keys.path()
        warn = ("\n(the file can be read by others: chmod 600 it)" if keys.loose(file) else "")
        return "\n".join(["keys (the environment wins over a saved key; values are never shown):", *key_lines()]) + warn
    command, names = words[0], words[1:]
    if command == "path" and not names:
        return str(keys.path())
    if command not in ("set", "remove") or len(names) != 1:
        raise keys.KeyFileError(keys_usage())
    name = names[0]
    pasted = profiles.key_like(name)
    if pasted is not None:
        raise keys.KeyFileError(profiles.pasted_key(f"the provider name given to keys {command}", pasted))
    known = keyed()
    if name not in known and not (command == "remove" and name in keys.load()):
        raise keys.KeyFileError(f"unknown provider {name!r}; keys are kept for {', '.join(known)}")
    if command == "remove":
        return f"removed the saved {name} key from {keys.save(name, None)}"
    file = keys.save(name, ask(f"{name} key (hidden; it is saved in {keys.path()}): "))
    shadow = next((v for v in known[name] if os.environ.get(v)), None)
    note = f"; {shadow} is set in the environment, and it wins" if shadow else ""
    return f"saved the {name} key in {file} (readable by you only){note}"
