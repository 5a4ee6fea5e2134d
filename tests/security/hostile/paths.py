"""Hostile cases: paths (see the package docstring)."""

from __future__ import annotations

from tests.security.hostile.case import Case

PATHS: tuple[Case, ...] = ()
