"""Hostile cases: lines (see the package docstring)."""

from __future__ import annotations

from tests.security.hostile.case import Case

LINES: tuple[Case, ...] = ()
