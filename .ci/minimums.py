"""Check that the environment CI calls "the declared minimums" holds exactly them.

uv's ``--resolution lowest-direct`` takes the lowest release of each dependency pyproject.toml names that the
whole set allows; where another dependency needs more, it quietly takes more, and the declared minimum would go
untested. This lists every such dependency (declared, installed) and fails, so the minimum is raised instead.
Run with the minimums venv's Python: ``python .ci/minimums.py``.
"""

from __future__ import annotations

import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def declared() -> list[tuple[str, Requirement]]:
    """``(where, requirement)`` for the runtime dependencies and those of ``[dev]`` and the extras it names (what
    ``pip install -e '.[dev]'`` installs; ``[tokens]`` is left out, as tiktoken downloads its encodings)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    groups = {"dependencies": project["dependencies"], "[dev]": extras.get("dev", [])}
    for spec in extras.get("dev", []):
        req = Requirement(spec)
        if req.name == project["name"]:
            groups.update({f"[{name}]": extras[name] for name in sorted(req.extras)})
    return [(where, req) for where, specs in groups.items() for req in map(Requirement, specs)
            if req.name != project["name"]]


def lowest(req: Requirement) -> Version | None:
    """The release ``>=`` or ``==`` names (None for a requirement with no lower bound)."""
    bounds = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
    return max(bounds) if bounds else None


def main() -> int:
    problems = []
    for where, req in declared():
        floor = lowest(req)
        try:
            installed = Version(version(req.name))
        except PackageNotFoundError:
            problems.append(f"{req.name} ({where}: {req.specifier}) is not installed")
            continue
        if floor is not None and installed.release[:len(floor.release)] != floor.release:
            problems.append(f"{req.name} ({where}: {req.specifier}): {installed} installed, not {floor}")
        print(f"{req.name:22} {where:14} {req.specifier!s:14} {installed}")
    if problems:
        print("\nThese minimums are not what is tested: raise each in pyproject.toml to what a dependency needs "
              "(with a comment saying why), or lower what holds it up:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
