"""Provider profiles: everything brute_nb knows about a vendor, one frozen record each (pydantic-ai's
``ModelProfile``), found by the provider kind a ``-m KIND:MODEL`` names.

Generic code (usage, cost, redaction, the warm-up, ``map``'s batches, the notebook's help and key boxes) asks the
profile and names no vendor; a provider file owns only its client, and a transport only its wire. A new native
vendor is a profile, a transport and a provider class; an OpenAI-compatible endpoint is one profile entry.

Invariant: a profile is plain data and this package imports nothing heavy (no SDK, nothing of brute_nb above the
foundation), so any layer may read it, values included. Where a fact is code (the batch API, the token counter,
the SDK's error classes) the profile names it (``"module:attribute"``, a class name) and the caller imports it
when it needs it.

Registry: the built-ins are a table in code (``BUILTIN``) entered through ``_add``, the same function a third
party's profile reaches (through ``register``): a package declares ``[project.entry-points."brute_nb.profiles"] toy =
"toy_pkg:PROFILE"`` beside its ``brute_nb.providers`` factory, and ``of("toy")`` finds it. A built-in name always
means the built-in.
"""

from __future__ import annotations

import importlib
from typing import Any

from brute_nb.providers.profiles.profile import Profile

__all__ = ["Profile", "builtin", "every", "for_model", "installed", "key_like", "keyed", "of", "pasted_key",
           "register"]

BUILTIN = ("brute_nb.providers.profiles.anthropic", "brute_nb.providers.profiles.openai",
           "brute_nb.providers.profiles.compatible")
"""The modules holding brute_nb's own profiles (each a ``PROFILES`` tuple), in the order ``auto()`` tries them."""


_registry: dict[str, Profile] = {}
_missing: set[str] = set()
"""Kinds no entry point declared a profile for, asked already (a reply of an ``llm:`` model is priced often)."""


def register(profile: Profile) -> Profile:
    """Make ``profile`` the one for its kind (what ``of`` does with a profile an entry point declares). A built-in
    kind keeps its built-in profile, as a built-in provider name keeps its built-in factory (``plugins``)."""
    _builtins()
    if profile.kind in _builtin_kinds:
        return _registry[profile.kind]
    return _add(profile)


def _add(profile: Profile) -> Profile:
    """The one way into the registry, for the built-ins' table and a third party's profile alike."""
    if not isinstance(profile, Profile) or not profile.kind or ":" in profile.kind:
        raise TypeError(f"a profile is a Profile whose kind has no ':', not {profile!r}")
    _registry[profile.kind] = profile
    _missing.discard(profile.kind)
    return profile


_builtin_kinds: set[str] = set()


def _builtins() -> None:
    if _builtin_kinds:
        return
    for name in BUILTIN:
        for profile in importlib.import_module(name).PROFILES:
            _builtin_kinds.add(_add(profile).kind)


def of(kind: object) -> Profile | None:
    """The profile of ``kind`` (a built-in, else one an installed package declares), or None."""
    _builtins()
    if not isinstance(kind, str) or not kind:
        return None
    found = _registry.get(kind)
    if found is not None or kind in _missing:
        return found
    declared = _declared(kind)
    if declared is None:
        _missing.add(kind)
        return None
    return register(declared)


def _declared(kind: str) -> Profile | None:
    """The profile an installed package declares under ``kind``; one that is no ``Profile``, or the profile of
    another kind (a built-in's, with its key variables and host), is that package's mistake, named: taken as it
    is, ``-m KIND:...`` would read another vendor's key for this kind's server."""
    from brute_nb import plugins

    loaded: Any = plugins.load(plugins.PROFILES, kind)
    if loaded is None or (isinstance(loaded, Profile) and loaded.kind == kind):
        return loaded
    package = next((p.distribution for p in plugins.installed(plugins.PROFILES) if p.name == kind), "?")
    what = f"the profile of kind {loaded.kind!r}" if isinstance(loaded, Profile) else f"a {type(loaded).__name__}"
    raise plugins.PluginError(f"the {plugins.PROFILES} plugin {kind!r} (installed by {package}) is {what}, not a "
                              f"Profile of kind {kind!r}: fix or remove that package")


def refresh() -> None:
    """Ask the entry points again for the kinds none declared (a plugin installed into a running kernel)."""
    _missing.clear()


def installed() -> tuple[Profile, ...]:
    """Every profile, the ones installed packages declare included (each declared module is imported now: a
    profile module is data, so this is cheap; ``%brute models`` and ``%brute keys`` list them)."""
    from brute_nb import plugins

    refresh()
    for name in plugins.names(plugins.PROFILES):
        of(name)
    return every()


def builtin() -> tuple[Profile, ...]:
    """brute_nb's own profiles, in the order ``auto()`` tries them."""
    _builtins()
    return tuple(p for k, p in _registry.items() if k in _builtin_kinds)


def every() -> tuple[Profile, ...]:
    """Every profile known now: the built-ins, then those registered or looked up since."""
    _builtins()
    return tuple(_registry.values())


def keyed() -> tuple[Profile, ...]:
    """The profiles a key is stored for under their own kind (``%brute keys set KIND``), built-ins first."""
    return tuple(p for p in every() if p.key_variables and p.stored_as == p.kind)


def secret_variables() -> tuple[str, ...]:
    """Every variable a built-in profile reads a key or a secret from, once each."""
    names = (v for p in builtin() for v in (*p.key_variables, *p.secret_variables))
    return tuple(dict.fromkeys(names))


def for_model(spec: object) -> Profile | None:
    """The profile a ``--model`` names: its ``KIND:`` prefix, else a bare name's model prefix (None for anything
    else, as ``of``)."""
    if not isinstance(spec, str):
        return None
    kind, sep, _ = spec.partition(":")
    if sep:
        return of(kind)
    return next((p for p in every() if p.model_prefixes and spec.startswith(p.model_prefixes)), None)


KEY_LENGTH = 20
"""Characters from which a text with a key's prefix is taken for a key (the shortest real ones run past 40)."""


def key_like(text: object) -> Profile | None:
    """The profile whose key ``text`` (or a ``:``-separated part of it) looks like, by its ``key_prefixes``.

    A key pasted where a provider, model, alias or URL goes must be refused without being repeated: it is in no
    environment and no keys file yet, so the redaction cannot know it, and an error's text stays in the notebook."""
    if not isinstance(text, str):
        return None
    for part in (p.strip() for p in text.split(":")):
        found = next((p for p in every() if p.key_prefixes and part.startswith(p.key_prefixes)), None)
        if found is not None and len(part) >= KEY_LENGTH:
            return found
    return None


def pasted_key(what: str, profile: Profile) -> str:
    """The words of the error for a key given where ``what`` goes (it is not shown, and was not kept)."""
    return (f"{what} looks like {profile.title}'s API key, which is never a name: it was not kept and is not shown "
            f"here. To store the key: %brute keys set {profile.stored_as} (then paste it at the hidden prompt)")


def vendor_words() -> frozenset[str]:
    """The words that name a vendor (each profile's kind, key name and SDK package), lower case: the package's
    rule test finds them in code outside ``providers/``, ``transports/`` and ``testing/``."""
    words = {w for p in every() for w in (p.kind, p.stored_as, p.sdk or "")}
    return frozenset(w.lower() for w in words if w)


SERVER_KIND = "openai"
"""The kind a ``--base-url`` with no ``KIND:`` speaks (``auto()`` builds it; the notebook's settings assume it)."""
SERVERS = "an OpenAI-compatible server (vLLM, LM Studio, llama.cpp, Ollama)"
"""What ``--base-url`` may name, as help texts say it."""
FAST_MODEL = "anthropic:claude-haiku-4-5"
"""A small model's ``KIND:MODEL``, for help texts' examples (an alias named ``fast``, a comparison)."""


def model_examples() -> list[str]:
    """``KIND:MODEL`` of the first two providers a key is kept for (their default models), for help texts."""
    return [f"{p.kind}:{p.default_model}" for p in keyed()[:2]]


def key_names(count: int = 2) -> list[str]:
    """The first providers a key is kept for, in ``auto()``'s order (``%brute keys set NAME``'s examples)."""
    return [p.kind for p in keyed()[:count]]
