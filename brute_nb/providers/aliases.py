"""Model aliases (``%brute alias fast anthropic:claude-haiku-4-5``, then ``-m fast``), kept in the user's config.

The file is ``aliases.json`` in ``user_config.config_dir()`` (``~/.config/brute_nb/aliases.json`` on Linux), one JSON
object of alias -> ``provider:model``. Invariant: the file is only ever replaced whole and durably
(``confine.write_atomic``: written beside it, fsynced, renamed), so an interrupted save or a power cut leaves the
old aliases, never half a file; a file that cannot be read is an error naming it, never silently treated as empty
(a later save would otherwise drop every alias in it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from brute_nb import confine
from brute_nb.errors import BruteError
from brute_nb.providers import profiles
from brute_nb.providers.user_config import config_dir, read_object

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_BYTES = 1 << 20


class AliasError(BruteError, ValueError):
    """An alias name, target or file is unusable; the message says which and what to do."""


def path() -> Path:
    return config_dir() / "aliases.json"


def load() -> dict[str, str]:
    return read_object(path(), AliasError, 'alias -> "provider:model"', limit=MAX_BYTES,
                       why="an aliases file is a small JSON object")

def save(name: str, target: str | None) -> dict[str, str]:
    """Set ``name`` to ``target`` (or remove it when ``target`` is None); returns every alias."""
    pasted = profiles.key_like(name)
    if pasted is not None:
        raise AliasError(profiles.pasted_key("the alias name given", pasted))
    if not NAME.fullmatch(name) or ":" in name:
        raise AliasError(f"alias {name!r}: use letters, digits, '.', '_' or '-' (no ':', which marks a provider)")
    aliases = load()
    if target is None:
        if name not in aliases:
            raise AliasError(f"no alias {name!r}; aliases: {', '.join(sorted(aliases)) or 'none yet'}")
        del aliases[name]
    else:
        aliases[name] = target
    file = Path(confine.real(path()))  # the user's own config: a link to their dotfiles is followed
    confine.write_atomic(file, (json.dumps(aliases, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return aliases


def resolve(spec: str) -> str:
    """``spec`` with an alias replaced by what it names (a ``provider:model`` spec passes through)."""
    if ":" in spec:
        return spec
    return load().get(spec, spec)
