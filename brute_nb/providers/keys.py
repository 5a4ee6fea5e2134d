"""Stored API keys, kept the way simonw/llm's ``llm keys set`` keeps them: one JSON file in the user's config folder.

``%brute keys set anthropic`` (or ``brute-nb keys set anthropic`` in a terminal) asks with a hidden prompt and
saves the key here; ``%brute keys`` lists which providers have one and where it comes from, never a value. The file
is ``keys.json`` in ``config_dir()`` (the platform's user config folder, ``~/.config/brute_nb`` on Linux;
``BRUTE_NB_CONFIG_DIR`` overrides it), one JSON object of provider -> key.

Invariants: the folder is ``0700`` and the file ``0600`` (readable by the user only), and the file is only ever
replaced whole and durably (``confine.write_atomic``), so an interrupted save leaves the old keys; a file that cannot
be read is an error naming it, never read as empty (a later save would drop every key in it). The environment
wins: a stored key is used only when none of the provider's variables is set (``credentials.client_key``), and it
goes only to its provider's own host. Every key read from the file is redacted from then on, like the
environment's (``redact.remember``, the one redaction point).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from brute_nb import confine
from brute_nb.errors import BruteError
from brute_nb.providers.user_config import config_dir, read_object
from brute_nb.redact import remember

FILE_NAME = "keys.json"
MAX_BYTES = 64 << 10
NOTE = ("// Note", "This file holds secret API keys, readable by you only. Do not share it.")
"""llm's keys.json carries the same warning as its first entry; it is skipped when keys are read."""
FILE_MODE, FOLDER_MODE = 0o600, 0o700


class KeyFileError(BruteError, ValueError):
    """The keys file, or a key or provider name given to it, is unusable; the message says which and what to do."""


def path() -> Path:
    return config_dir() / FILE_NAME


def load() -> dict[str, str]:
    """Every stored key by provider name (``{}`` when there is no file); each is redacted from now on."""
    file = path()
    data = read_object(file, KeyFileError, "provider -> key", limit=MAX_BYTES, why="a keys file is a small JSON object")
    keys = {name: value for name, value in data.items() if name != NOTE[0]}
    remember(*keys.values())
    bad = sorted(name for name, value in keys.items() if not _clean(value))
    if bad:  # a line break in a key would split the request's headers
        raise KeyFileError(f"{file}: the key for {', '.join(bad)} has spaces or control characters inside; set it "
                           f"again with %brute keys set {bad[0]}, or fix or remove the file")
    return keys


def stored(provider: str) -> str | None:
    """``provider``'s stored key, or None."""
    return load().get(provider) or None


def check_key(provider: str, key: str) -> str:
    """A key as pasted (surrounding spaces and a trailing newline dropped); refused when empty or when it holds
    what no header may carry (a newline inside would split the request's headers)."""
    text = key.strip()
    if not text:
        raise KeyFileError(f"no key given for {provider}: nothing was saved")
    if not _clean(text):
        raise KeyFileError(f"the key given for {provider} has spaces or control characters inside; paste the key "
                           "alone, on one line")
    return text


def _clean(key: str) -> bool:
    return bool(key) and not any(ch.isspace() or not ch.isprintable() for ch in key)


def save(provider: str, key: str | None) -> Path:
    """Store ``key`` for ``provider`` (None removes it); returns the file. The folder is made ``0700`` and the
    file written ``0600`` whatever the umask, before any key is in it."""
    keys = load()
    if key is None:
        if provider not in keys:
            raise KeyFileError(f"no stored key for {provider}; stored: {', '.join(sorted(keys)) or 'none'}")
        del keys[provider]
    else:
        keys[provider] = check_key(provider, key)
        remember(keys[provider])
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, FOLDER_MODE)
    file = Path(confine.real(path()))  # the user's own config: a link to their dotfiles is followed
    data = {NOTE[0]: NOTE[1], **dict(sorted(keys.items()))}
    confine.write_atomic(file, (json.dumps(data, indent=2) + "\n").encode("utf-8"), mode=FILE_MODE)
    return file


_kernel: dict[str, str] = {}
"""Variable -> provider, for the keys ``use_for_kernel`` put in this process's environment (``%brute keys`` says so)."""


def use_for_kernel(provider: str, variable: str, key: str) -> None:
    """Use ``key`` for ``provider`` until the kernel ends, saving nothing: it goes into the kernel's environment as
    ``variable`` (the environment's rules then hold: it goes to its provider's host, and it is redacted)."""
    text = check_key(provider, key)
    remember(text)
    os.environ[variable] = text
    _kernel[variable] = provider


def set_in_kernel(variable: str) -> bool:
    """Whether ``variable`` holds a key ``use_for_kernel`` put there (and it is still that one's)."""
    return variable in _kernel and bool(os.environ.get(variable))


def fingerprint() -> tuple[int, int, int] | None:
    """What changes when the file does (inode, size, mtime), read without opening it: a session's model is rebuilt
    when a key is saved, as when one is set in the environment."""
    try:
        found = os.stat(path())
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


def loose(file: Path) -> bool:
    """Whether others than the user may read ``file`` (someone changed its mode since it was written)."""
    try:
        return bool(os.stat(file).st_mode & (stat.S_IRWXG | stat.S_IRWXO))
    except OSError:
        return False
