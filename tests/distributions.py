"""A third party's package as an installed distribution, for tests of brute_nb's entry-point groups.

``importlib.metadata`` finds a ``NAME-VERSION.dist-info`` folder on ``sys.path`` the way it finds one pip wrote, so a
test proves the same loader a real plugin reaches, not a mock of it.
"""

from __future__ import annotations

from pathlib import Path


def install(site: Path, name: str, entry_points: str) -> None:
    """Write the metadata of distribution ``name`` (version 1.0) with ``entry_points`` into ``site``; the caller
    puts ``site`` on ``sys.path``."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
