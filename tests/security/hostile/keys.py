"""Hostile cases: keys (see the package docstring)."""

from __future__ import annotations

from tests.security.hostile.case import Case

KEYS: tuple[Case, ...] = ()
