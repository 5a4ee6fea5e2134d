"""The per-row result cache: ``<stem>.brute/map/<name>.jsonl``, one JSON line per finished row, keyed by row key.

Lines are appended as rows finish with the session log's own ``append_lines`` (one ``write`` per batch, so a
killed kernel leaves at most one torn last line, which the next load skips and the next append cuts). Nothing
is ever rewritten: a later line for a key wins. Only rows that succeeded are cached, so a failed row runs again
next time and an unchanged re-run pays for nothing. A file lock held for the run keeps a second kernel from
running the same map at once (it would pay for the same rows twice).

A cache file may come with a cloned repository, so each record is checked field by field as it is read (a wrong
type is a ``MapCacheError`` naming file:line and the field, never a bare error from deep in pandas), its session
is a row's own file name (never a path), and the file is opened only inside the notebook's folder, never
through a link out of it (``confine``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from brute_nb import confine
from brute_nb.errors import BruteError, SessionLockedError
from brute_nb.map.spec import Job
from brute_nb.message import dumps
from brute_nb.sessions.file import append_lines

Record = dict[str, Any]
Done = Callable[[Job, Record], None]
"""What an engine (in process, Dask, a provider batch) calls with each row as it finishes: the run caches it."""

SESSION_NAME = re.compile(r"[0-9a-f]{24}\.jsonl")
"""A row's session file name: its key (or, for a row another model answered, that attempt's key), never a path."""


class MapCacheError(BruteError):
    """A cache file line that is not a record; the message names file and line."""


class _Line:
    def __init__(self, record: Record) -> None:
        self.record = record

    def to_json(self) -> str:
        return dumps(self.record)


def _count(v: Any) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool))


FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "reply": ("text or null", lambda v: v is None or isinstance(v, str)),
    "fields": ("an object or null", lambda v: v is None or isinstance(v, dict)),
    "error": ("text or null", lambda v: v is None or isinstance(v, str)),
    "input_tokens": ("a whole number or null", _count),
    "output_tokens": ("a whole number or null", _count),
    "cost": ("a number or null", lambda v: _count(v) or isinstance(v, float)),
}
"""What each field a record is read for must hold (any other field is kept and never read)."""


def check_record(value: Any) -> str | None:
    """Why ``value`` is not a record this cache wrote (None when it is one)."""
    if not isinstance(value, dict) or not isinstance(value.get("key"), str) or not value["key"]:
        return "expected a record with a 'key'"
    for name, (expected, ok) in FIELDS.items():
        if not ok(value.get(name)):
            return f"{name!r} must be {expected}, got {value[name]!r:.80}"
    session = value.get("session")
    own = value["key"] + ".jsonl"
    plain = not any(c in own for c in "/\\\x00") and not own.startswith(".")
    if session is not None and not ((session == own and plain) or
                                    (isinstance(session, str) and SESSION_NAME.fullmatch(session))):
        return (f"'session' must be a row's own file name ({value['key'] + '.jsonl'!r}, or an escalated row's "
                f"24 hex digits + '.jsonl'), got {session!r:.80}")
    return None


def read_records(path: Path, root: str | os.PathLike[str] | None = None) -> dict[str, Record]:
    """Every cached record by key; a torn last line (a killed writer) is skipped, any other bad line raises.
    The file is read only from inside ``root`` (default: its folder)."""
    try:
        data = confine.read_file(path, root=root if root is not None else path.parent)
    except FileNotFoundError:
        return {}
    lines = data.split(b"\n")
    records: dict[str, Record] = {}
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            if lineno == len(lines):  # unterminated last line: a write cut short, never a finished row
                continue
            raise MapCacheError(f"{path}:{lineno}: not a JSON line ({exc}); delete the line or the file to run "
                                "those rows again") from None
        problem = check_record(value)
        if problem is not None:
            raise MapCacheError(f"{path}:{lineno}: {problem}; delete the line or the file to run that row again")
        records[value["key"]] = value
    return records


class MapCache:
    """The cache of one map (``name``): what is done, and an append for what finishes."""

    def __init__(self, path: Path, root: str | os.PathLike[str] | None = None) -> None:
        self.root = confine.real(root if root is not None else path.parent)
        self.path = confine.confined(path, self.root, what=f"the map cache {path}")
        self.records = read_records(self.path, self.root)
        self._lock: Any = None

    def __enter__(self) -> MapCache:
        from filelock import FileLock, Timeout

        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.path) + ".lock")
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise SessionLockedError(f"{self.path} is in use: another kernel is running this map; wait for it, or "
                                     "pass name=... to run a separate one") from None
        self._lock = lock
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def add(self, records: Iterable[Record]) -> None:
        """Persist finished rows at once (one write); failed rows are not cached."""
        done = [r for r in records if r.get("error") is None]
        if not done:
            return
        append_lines(self.path, [_Line(r) for r in done], root=Path(self.root))
        for r in done:
            self.records[r["key"]] = r
