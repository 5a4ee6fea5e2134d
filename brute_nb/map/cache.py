"""The per-row result cache: ``<stem>.brute/map/<name>.jsonl``, one JSON line per finished row, keyed by row key.

Lines are appended as rows finish with the session log's own ``append_lines`` (one ``write`` per batch, so a
killed kernel leaves at most one torn last line, which the next load skips and the next append cuts). Nothing
is ever rewritten: a later line for a key wins. Only rows that succeeded are cached, so a failed row runs again
next time and an unchanged re-run pays for nothing. A file lock held for the run keeps a second kernel from
running the same map at once (it would pay for the same rows twice).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from brute_nb.errors import BruteError, SessionLockedError
from brute_nb.message import dumps
from brute_nb.sessions.file import append_lines

Record = dict[str, Any]


class MapCacheError(BruteError):
    """A cache file line that is not a record; the message names file and line."""


class _Line:
    def __init__(self, record: Record) -> None:
        self.record = record

    def to_json(self) -> str:
        return dumps(self.record)


def read_records(path: Path) -> dict[str, Record]:
    """Every cached record by key; a torn last line (a killed writer) is skipped, any other bad line raises."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    lines = data.split(b"\n")
    records: dict[str, Record] = {}
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError as exc:
            if lineno == len(lines):  # unterminated last line: a write cut short, never a finished row
                continue
            raise MapCacheError(f"{path}:{lineno}: not a JSON line ({exc}); delete the line or the file to run "
                                "those rows again") from None
        if not isinstance(value, dict) or not isinstance(value.get("key"), str):
            raise MapCacheError(f"{path}:{lineno}: expected a record with a 'key', got {raw[:80]!r}")
        records[value["key"]] = value
    return records


class MapCache:
    """The cache of one map (``name``): what is done, and an append for what finishes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records = read_records(path)
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
        append_lines(self.path, [_Line(r) for r in done])
        for r in done:
            self.records[r["key"]] = r
