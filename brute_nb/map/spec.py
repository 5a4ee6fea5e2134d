"""What a map run is made of: ``MapSpec`` (its settings) and ``Job`` (one row to do), both plain picklable values.

They are what travels to a Dask worker, so the invariant is that neither ever holds a secret: the model is a
``provider:model`` name and each worker builds its provider from its own environment (its API key variables).
``row_key`` is the cache key: the template, the values of the columns it reads, model, system, schema and tools.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEY_LENGTH = 24
"""Hex digits of a row key kept in file names (96 bits: no collision in any table a notebook holds)."""


@dataclass(frozen=True)
class MapSpec:
    template: str
    folder: str
    """``<stem>.brute/map/<name>``: the cache file sits beside it, the row sessions and scratch copies in it."""
    model: str | None = None
    """``provider:model``; None picks one from the environment (``providers.auto``), on the worker."""
    system: str | None = None
    tools: str = "none"
    schema: Any = None
    """A pydantic model class (importable by workers) or None for a text reply."""
    max_iterations: int = 20
    root: str | None = None
    approve: tuple[tuple[str, str], ...] = ()
    replay: str | None = None
    record: str | None = None
    timeout: float | None = 120.0
    escalate: tuple[str, ...] = ()
    """``provider:model`` names a row whose reply fails its schema is asked again on, in order (``map.escalate``).
    Not part of a row's key: the first model's answers stay valid whatever the list."""
    ceiling: float | None = None
    """USD: the run's ``confirm_above``; no row is escalated once what the run has spent reaches it."""

    @property
    def home(self) -> Path:
        """The notebook's folder (``folder`` is ``<it>/<stem>.brute/map/<run>``): every file the run reads or writes
        is confined to it, so a folder on the way that links out is never written through."""
        return Path(self.folder).parents[2]

    @property
    def sessions(self) -> Path:
        return Path(self.folder) / "sessions"

    @property
    def scratch(self) -> Path:
        return Path(self.folder) / "scratch"

    def identity(self) -> dict[str, Any]:
        """The settings a row's result depends on (the cache key's part shared by every row)."""
        from brute_nb.map.schema import schema_json

        return {"template": self.template, "model": self.model, "system": self.system,
                "schema": schema_json(self.schema), "tools": self.tools}


@dataclass(frozen=True)
class Job:
    """One row: its position in the frame, its cache key and its filled prompt."""

    position: int
    key: str
    prompt: str


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def run_name(identity: dict[str, Any]) -> str:
    """The cache's name when the user gives none: the hash of the settings (the same template, the same file)."""
    return "map-" + digest(identity)[:12]


def row_key(identity: dict[str, Any], values: dict[str, Any]) -> str:
    return digest([identity, values])
