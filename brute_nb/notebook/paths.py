"""Where a notebook's sessions live: finding the notebook's path inside its kernel, and the session files beside it.

Sessions are saved as ``<notebook folder>/<notebook stem>.brute/<session>.jsonl``. A kernel is not told which
notebook it serves, so ``locate_notebook`` tries, in order (kernel-notes Q3):

1. an explicit setting (an argument, e.g. ``%brute config notebook=...``, or the ``BRUTE_NB_NOTEBOOK`` variable);
2. ``__vsc_ipynb_file__`` in the user namespace (VS Code);
3. ``JPY_SESSION_NAME`` / ``__session__`` (Jupyter Server), only if that file exists: it goes stale after a rename;
4. the running Jupyter Server's sessions API, matched by this kernel's id (short timeout, never fatal);
5. the current folder with stem ``notebook`` (right for nbval and nbconvert, which run in the notebook's folder).

The invariant: locating never raises and never blocks for more than about a second; the result says which rule
matched, so ``%brute config`` can show it. File names made from user input are validated, and no existing file is
ever overwritten by a backup.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brute_nb.sessions.names import DEFAULT_SESSION, check_session_name

if TYPE_CHECKING:
    import pandas as pd

ENV_VAR = "BRUTE_NB_NOTEBOOK"
DEFAULT_STEM = "notebook"
SERVER_TIMEOUT = 1.0
"""Seconds allowed for the whole Jupyter Server lookup (all servers together)."""

_FORK = re.compile(r"^(?P<base>.+)-fork-(?P<n>\d+)$")


@dataclass(frozen=True)
class NotebookLocation:
    """The notebook's path and the rule that found it (``setting``, ``BRUTE_NB_NOTEBOOK``, ``vscode``,
    ``JPY_SESSION_NAME``, ``__session__``, ``jupyter-server`` or ``cwd``)."""

    path: Path
    source: str

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def stem(self) -> str:
        return self.path.stem


def locate_notebook(
    setting: str | os.PathLike[str] | None = None,
    user_ns: Mapping[str, Any] | None = None,
    *,
    timeout: float = SERVER_TIMEOUT,
) -> NotebookLocation:
    """Find the notebook this kernel runs, trying the rules in the module docstring in order."""
    ns = user_ns or {}
    if setting:
        return NotebookLocation(_absolute(setting), "setting")
    if os.environ.get(ENV_VAR):
        return NotebookLocation(_absolute(os.environ[ENV_VAR]), ENV_VAR)
    vscode = ns.get("__vsc_ipynb_file__")
    if isinstance(vscode, str) and vscode:
        return NotebookLocation(_absolute(vscode), "vscode")
    for source, value in (("JPY_SESSION_NAME", os.environ.get("JPY_SESSION_NAME")),
                          ("__session__", ns.get("__session__"))):
        if isinstance(value, str) and value and _is_file(_absolute(value)):
            return NotebookLocation(_absolute(value), source)
    found = server_notebook(timeout=timeout)
    if found is not None:
        return NotebookLocation(found, "jupyter-server")
    return NotebookLocation(Path(os.getcwd()) / f"{DEFAULT_STEM}.ipynb", "cwd")


def _absolute(value: str | os.PathLike[str]) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(os.getcwd()) / path


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # e.g. a NUL byte or an unreadable folder: not a usable notebook path
        return False


def kernel_id() -> str | None:
    """This kernel's id, from its connection file name ``kernel-<id>.json``; None outside a kernel."""
    # A kernel has imported its app already; outside one, importing ipykernel.kernelapp (and with it debugpy) only to
    # learn there is none is slow, and with some debugpy releases under a tracer it never returns.
    app = getattr(sys.modules.get("ipykernel.kernelapp"), "IPKernelApp", None)
    try:
        if app is None or not app.initialized():
            return None
        name = Path(app.instance().connection_file).name
    except Exception:  # an ipykernel whose app differs: the rule just does not apply
        return None
    match = re.fullmatch(r"kernel-(.+)\.json", name)
    return match.group(1) if match else None


def server_notebook(*, timeout: float = SERVER_TIMEOUT) -> Path | None:
    """Ask each running Jupyter Server which notebook holds this kernel. Never raises; None when unknown."""
    kid = kernel_id()
    if kid is None:
        return None
    try:
        from jupyter_server import serverapp

        servers = list(serverapp.list_running_servers())
    except Exception:  # no jupyter_server installed, or an unreadable runtime folder
        return None
    deadline = time.monotonic() + timeout
    for info in servers:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            sessions = _get_sessions(info, left)
        except Exception:  # a dead, slow or password-protected server: try the next one
            continue
        path = _match_kernel(sessions, kid, info)
        if path is not None:
            return path
    return None


def _get_sessions(info: Mapping[str, Any], timeout: float) -> Any:
    import urllib.request  # imported here: it pulls in http and email, ~30 ms that %load_ext should not pay

    url = str(info["url"])
    if not url.endswith("/"):
        url += "/"
    request = urllib.request.Request(url + "api/sessions")
    if info.get("token"):
        request.add_header("Authorization", f"token {info['token']}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def _match_kernel(sessions: Any, kid: str, info: Mapping[str, Any]) -> Path | None:
    if not isinstance(sessions, list):
        return None
    root = Path(str(info.get("root_dir") or info.get("notebook_dir") or os.getcwd())).expanduser()
    for session in sessions:
        if not isinstance(session, dict):
            continue
        kernel = session.get("kernel")
        if isinstance(kernel, dict) and kernel.get("id") == kid and isinstance(session.get("path"), str):
            # The API's path is relative to the server's root, with forward slashes.
            return root.joinpath(*session["path"].split("/"))
    return None


def session_dir(location: NotebookLocation) -> Path:
    """``<notebook folder>/<notebook stem>.brute``: the folder holding this notebook's sessions (not created)."""
    return location.folder / f"{location.stem}.brute"


def session_root(session_file: Path) -> Path:
    """The root a session file's attachments and links are confined to: the notebook's folder, the parent of
    ``<stem>.brute/`` (the stack's ``SessionLog`` and the warm-up's read ahead use the same)."""
    return session_file.parent.parent


def session_path(location: NotebookLocation, name: str = DEFAULT_SESSION) -> Path:
    """``<session dir>/<name>.jsonl``, after checking the name."""
    return session_dir(location) / f"{check_session_name(name)}.jsonl"


def fork_name(existing_names: Iterable[str], base: str) -> str:
    """The first free ``<base>-fork-<n>``; forking a fork counts on from its base (``a-fork-1`` -> ``a-fork-2``)."""
    taken = set(existing_names)
    match = _FORK.match(base)
    root = match.group("base") if match else base
    n = 1
    while f"{root}-fork-{n}" in taken:
        n += 1
    return check_session_name(f"{root}-fork-{n}")


def timestamped_backup(path: str | os.PathLike[str], *, now: datetime | None = None) -> Path:
    """Move a session file aside to ``<name>.<YYYYmmdd-HHMMSS>.jsonl`` (and its archive with it); return the new path.

    Used by ``%%brute --new``. An existing file is never overwritten: a clash gets ``-1``, ``-2``... appended.
    """
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"no session file to back up at {source}")
    name = source.name[: -len(".jsonl")] if source.name.endswith(".jsonl") else source.name
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    archive = source.with_name(f"{name}.archive.jsonl")
    suffix = 0
    while True:
        tag = f"{stamp}-{suffix}" if suffix else stamp
        target = source.with_name(f"{name}.{tag}.jsonl")
        target_archive = source.with_name(f"{name}.{tag}.archive.jsonl")
        if not target_archive.exists() and _move_no_clobber(source, target):
            break
        suffix += 1
    if archive.is_file():
        # The new session must not append to the old session's archive; a clash here was ruled out above.
        _move_no_clobber(archive, target_archive)
    return target


def _move_no_clobber(source: Path, target: Path) -> bool:
    """Rename unless ``target`` exists (atomically where hard links work); False on a clash."""
    try:
        os.link(source, target)
    except FileExistsError:
        return False
    except OSError:  # a filesystem without hard links: fall back to check-then-rename
        if target.exists():
            return False
        os.rename(source, target)
        return True
    source.unlink()
    return True


def list_sessions(directory: str | os.PathLike[str]) -> pd.DataFrame:
    """One row a session file in ``directory``: name, messages, tool_calls, last_modified (UTC), size (bytes).

    Archives (``*.archive.jsonl``) are left out. Only lines that can hold tool calls are parsed.
    """
    import pandas as pd

    rows: list[tuple[str, int, int, float, int]] = []
    folder = Path(directory)
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    for file in files:
        if file.name.endswith(".archive.jsonl") or not file.is_file():
            continue
        try:
            stat = file.stat()
            messages, calls = count_messages(file.read_bytes())
        except OSError:  # removed or unreadable while listing: leave it out rather than fail the table
            continue
        rows.append((file.name[: -len(".jsonl")], messages, calls, stat.st_mtime, stat.st_size))
    columns = list(zip(*rows, strict=True)) if rows else [()] * 5
    return pd.DataFrame({
        "name": pd.array(columns[0], dtype="str"),
        "messages": pd.array(columns[1], dtype="int64"),
        "tool_calls": pd.array(columns[2], dtype="int64"),
        "last_modified": pd.to_datetime(pd.Series(columns[3], dtype="float64"), unit="s", utc=True),
        "size": pd.array(columns[4], dtype="int64"),
    })


def count_messages(data: bytes) -> tuple[int, int]:
    """(messages, tool calls) in a session file's bytes.

    Every non-blank line is a message. A quote inside a JSON string is escaped, so the raw bytes ``"tool_calls"``
    appear only as a key or a whole string value; only lines holding them are parsed, and the parse decides.
    """
    messages = calls = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        messages += 1
        if b'"tool_calls"' not in line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # a torn or damaged line: loading the session names it
            continue
        found = value.get("tool_calls") if isinstance(value, dict) else None
        if isinstance(found, list):
            calls += len(found)
    return messages, calls
