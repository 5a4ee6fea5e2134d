"""The log as pandas DataFrames (filled in by the notebook issue); pandas is imported only when used."""

from __future__ import annotations

from typing import Any


def frame(log: Any) -> Any:
    raise NotImplementedError("brute_nb.frame arrives with the notebook front (issue 6)")


def log_from_frame(df: Any) -> Any:
    raise NotImplementedError("Log.from_frame arrives with the notebook front (issue 6)")
