"""The env a tool runs in, and the workspace root its paths resolve against.

DefaultToolPipeline sets the turn's env in a contextvar around each call, so built-in tools keep Brute's plain
``execute(**kwargs)`` signatures and still reach per-agent state (``env["state"]``: undo snapshots, file locks,
todos) and the workspace root. A tool called directly, outside any pipeline (a test, a notebook cell), gets one
process-wide default env, so ``write`` then ``undo`` still work there.

The call a tool is running for (its id and name) is kept the same way (``current_call``), so a tool that records
what it did (the notebook's ``python`` tool, for ``%brute why`` and ``%brute undo``) can name the call in the
session file; None outside a pipeline.

Root rule: ``env["root"]`` if set, else ``os.getcwd()`` read when the tool runs (never at import). A path that
resolves outside the root (``..``, an absolute path, or a symlink whose target escapes) is refused unless the
tool was built with ``allow_outside_root=True`` or the env has ``env["allow_outside_root"] = True``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from brute_nb.confine import inside
from brute_nb.env import Env
from brute_nb.errors import PathOutsideRootError

_current: ContextVar[Env | None] = ContextVar("brute_nb_tool_env", default=None)
_call: ContextVar[tuple[str, str] | None] = ContextVar("brute_nb_tool_call", default=None)
_default: Env | None = None


def default_env() -> Env:
    """The env of tools called outside a pipeline: made once, so its state (undo history) lasts."""
    global _default
    if _default is None:
        _default = {"state": {}, "root": None, "ask": None, "events": None, "metadata": {}}
    return _default


def current_env() -> Env:
    """The env of the tool call running now (or the process default outside a pipeline)."""
    env = _current.get()
    return env if env is not None else default_env()


@contextlib.contextmanager
def use_env(env: Env) -> Iterator[Env]:
    """Run tools inside ``env`` (the pipeline does this around each call)."""
    token = _current.set(env)
    try:
        yield env
    finally:
        _current.reset(token)


def current_call() -> tuple[str, str] | None:
    """(id, name) of the tool call running now, set by the pipeline; None for a tool called directly."""
    return _call.get()


@contextlib.contextmanager
def in_call(call_id: str, name: str) -> Iterator[None]:
    """Mark the tool call running inside this block (the pipeline does this around each call)."""
    token = _call.set((call_id, name))
    try:
        yield
    finally:
        _call.reset(token)


def state(env: Env | None = None) -> dict[str, Any]:
    """Per-agent state (``env["state"]``), created on first use."""
    env = current_env() if env is None else env
    value = env.get("state")
    if value is None:
        value = env["state"] = {}
    return value


def root(env: Env | None = None) -> Path:
    """The workspace root as a real (symlink-free) absolute path."""
    env = current_env() if env is None else env
    base = env.get("root") or os.getcwd()
    return Path(os.path.realpath(os.path.expanduser(os.fspath(base))))


def resolve(path: str | os.PathLike[str], *, allow_outside_root: bool = False, env: Env | None = None) -> Path:
    """Resolve a tool's path argument against the root; refuse escapes unless allowed.

    The returned path keeps the last component unresolved (so ``remove`` deletes a symlink, not its target), but
    the escape check uses the fully resolved path so a symlink pointing outside the root is caught.
    """
    env = current_env() if env is None else env
    base = root(env)
    raw = os.path.expanduser(os.fspath(path))
    joined = Path(os.path.normpath(os.path.join(base, raw)))
    if allow_outside_root or env.get("allow_outside_root"):
        return joined
    real = os.path.realpath(joined)
    if not inside(real, base):
        raise PathOutsideRootError(
            f"{path!s} resolves to {real}, outside the workspace root {base}. Use a path inside the root "
            f"(relative paths resolve against it), or build the tools with allow_outside_root=True."
        )
    return joined


def shown_path(path: Path, env: Env | None = None) -> str:
    """A path as a tool result reports it: relative to the workspace root when inside it, absolute otherwise.

    Brute reports absolute paths; brute_nb's sessions live beside notebooks that get shared, so a result must
    not carry the user's directory layout, and a cassette must replay from any checkout (a compaction stub
    quotes a result's size, which an absolute path would make depend on where the project lives).
    """
    base = root(current_env() if env is None else env)
    try:
        return path.relative_to(base).as_posix() or "."
    except ValueError:
        return str(path)
