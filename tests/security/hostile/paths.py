"""Hostile cases: paths (see the package docstring).

Two shapes, because entry points take paths two ways:

- ``PLANTS`` put something at the very place an entry point opens or writes (a session file, an attachments
  folder, a skill, a tool's file): ``case.data`` is a ``Plant`` whose ``make(where, outside)`` turns ``where`` into
  the hostile thing. ``outside`` is a folder beside the root holding ``SECRET`` in every file, so a test can tell
  whether anything from it was read (the secret shows up) or written (a new file appears there).
- ``NAMES`` are strings a model or a notebook may hand a tool as a path: ``case.data`` is a function of
  ``outside`` giving the string.

Tags say what a case attacks, so an entry point can state what it must refuse: ``escape`` (a way out of the root),
``special`` (not a regular file: reading it would block or never end), ``huge`` (2 GiB, sparse: costs no disk),
``write`` (only meaningful for an entry point that writes), ``shared`` (the file inside the root shares its content
with one outside, so that content may show; only the outside file must stay unchanged).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.security.hostile.case import Case

SECRET = "HOSTILE-SECRET-4f1c"
"""What every file outside the root holds: it must never appear in anything an entry point returns or sends."""
HUGE = 2 << 30


@dataclass(frozen=True)
class Plant:
    """Builds the hostile thing at ``where`` (the path the entry point uses) with ``outside`` beside the root."""

    make: Callable[[Path, Path], None]


def make_outside(base: Path) -> Path:
    """The folder beside the root that nothing may read or write: a secret file, and a folder of them."""
    outside = base / "outside"
    (outside / "folder").mkdir(parents=True, exist_ok=True)
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (outside / "folder" / "secret.txt").write_text(f"{SECRET}\n")
    return outside


def outside_files(outside: Path) -> dict[str, bytes]:
    """Everything outside, to compare before and after: nothing may be added, removed or changed."""
    return {str(p.relative_to(outside)): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


def _clear(where: Path) -> None:
    where.parent.mkdir(parents=True, exist_ok=True)
    if where.is_symlink() or where.is_file():
        where.unlink()


def _link_out(where: Path, outside: Path) -> None:
    _clear(where)
    target = outside / where.name
    target.write_text(f"{SECRET}\n")
    where.symlink_to(target)


def _dangling_out(where: Path, outside: Path) -> None:
    _clear(where)
    where.symlink_to(outside / f"new-{where.name}")


def _chain_out(where: Path, outside: Path) -> None:
    _clear(where)
    hop = where.with_name(where.name + ".hop")
    target = outside / where.name
    target.write_text(f"{SECRET}\n")
    hop.symlink_to(target)
    where.symlink_to(hop.name)  # relative: the hop looks inside, the second link leaves


def _folder_out(where: Path, outside: Path) -> None:
    """The folder holding ``where`` is a link to a folder outside that has a file of the same name."""
    folder = where.parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    away = outside / f"folder-{folder.name}"
    away.mkdir(exist_ok=True)
    (away / where.name).write_text(f"{SECRET}\n")
    if folder.is_dir() and not folder.is_symlink():
        for child in folder.iterdir():
            if child.name != where.name and not (away / child.name).exists():
                child.rename(away / child.name)
        for child in folder.iterdir():
            child.unlink() if not child.is_dir() or child.is_symlink() else os.rmdir(child)
        folder.rmdir()
    folder.symlink_to(away, target_is_directory=True)


def _fifo(where: Path, outside: Path) -> None:
    _clear(where)
    os.mkfifo(where)


def _socket(where: Path, outside: Path) -> None:
    _clear(where)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(where))
    except OSError:  # a path too long for a socket address: bind from inside its folder
        cwd = os.getcwd()
        os.chdir(where.parent)
        try:
            server.bind(where.name)
        finally:
            os.chdir(cwd)
    server.close()  # the socket file stays


def _device(where: Path, outside: Path) -> None:
    _clear(where)
    where.symlink_to("/dev/zero")


def _folder_in_place(where: Path, outside: Path) -> None:
    _clear(where)
    where.mkdir()
    (where / "inner.txt").write_text("a folder where a file was expected\n")


def _huge(where: Path, outside: Path) -> None:
    _clear(where)
    with open(where, "wb") as f:
        f.truncate(HUGE)  # sparse: no disk used, but reading it whole would need 2 GiB of memory


def _hard_link_out(where: Path, outside: Path) -> None:
    _clear(where)
    target = outside / f"hard-{where.name}"
    target.write_text(f"{SECRET}\n")
    os.link(target, where)


PLANTS: tuple[Case, ...] = (
    Case("link-out", Plant(_link_out), "a symlink to a file outside the root is refused, never read or written "
         "through", frozenset({"escape"})),
    Case("dangling-link-out", Plant(_dangling_out), "a symlink to a missing file outside is refused; nothing is "
         "created outside", frozenset({"escape", "write"})),
    Case("link-chain-out", Plant(_chain_out), "a link to a link inside that leads out is refused",
         frozenset({"escape"})),
    Case("folder-link-out", Plant(_folder_out), "a folder on the way that links outside is refused (every "
         "component, not only the last)", frozenset({"escape"})),
    Case("fifo", Plant(_fifo), "a FIFO is refused without opening it for a blocking read: the call returns",
         frozenset({"special"})),
    Case("socket", Plant(_socket), "a socket file is refused unopened", frozenset({"special"})),
    Case("device", Plant(_device), "a link to /dev/zero is refused: a device is never read",
         frozenset({"special", "escape"})),
    Case("folder-in-place", Plant(_folder_in_place), "a folder where a file is expected is a clear error",
         frozenset({"special"})),
    Case("huge", Plant(_huge), "a 2 GiB file is refused before it is read, naming the limit",
         frozenset({"huge"})),
    Case("hard-link-out", Plant(_hard_link_out), "a write through a hard link never changes the file outside "
         "(the name is replaced, not the inode rewritten)", frozenset({"write", "shared"})),
)


NAMES: tuple[Case, ...] = (
    Case("dotdot", lambda outside: "../outside/secret.txt", "'..' out of the root is refused",
         frozenset({"escape"})),
    Case("deep-dotdot", lambda outside: "a/../../outside/secret.txt", "'..' after a folder is refused too",
         frozenset({"escape"})),
    Case("absolute-outside", lambda outside: str(outside / "secret.txt"), "an absolute path outside is refused",
         frozenset({"escape"})),
    Case("home", lambda outside: "~/.bashrc", "'~' is the home folder, outside the root: refused",
         frozenset({"escape"})),
    Case("nul", lambda outside: "notes\x00.txt", "a NUL in a name is a clear error, not a crash",
         frozenset({"bad-name"})),
    Case("too-long", lambda outside: "x" * 5000, "a name longer than the system allows is a clear error",
         frozenset({"bad-name"})),
)
"""Path strings as a tool receives them."""

PATHS: tuple[Case, ...] = (*PLANTS, *NAMES)
