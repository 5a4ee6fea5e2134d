"""Every third-party module brute_nb imports is declared in pyproject.toml (a plain ``pip install brute_nb`` has it).

Imports are read with ``ast`` (function-level ones included: the lazy imports are the ones most easily forgotten)
and mapped to distributions with ``importlib.metadata.packages_distributions()``.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_top_levels() -> dict[str, str]:
    """``{top-level module: first file:line importing it}`` for every absolute import in brute_nb."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "brute_nb").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs.extend(extra)
    return {_norm(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0]) for spec in specs}


def test_every_third_party_import_is_declared() -> None:
    imported = _imported_top_levels()
    assert "pandas" in imported and "brute_nb" in imported  # the scan itself works
    owners = packages_distributions()
    declared = _declared()
    missing = []
    for module, where in sorted(imported.items()):
        if module in sys.stdlib_module_names or module in ("brute_nb", "__future__"):
            continue
        dists = owners.get(module)
        if not dists:  # an optional import not installed here (guarded where it is imported): declared by name
            dists = [module]
        if not {_norm(d) for d in dists} & declared:
            missing.append(f"{module} ({where}) from {', '.join(dists)}")
    assert missing == [], "imported but not declared in pyproject.toml: " + "; ".join(missing)


def test_markdown_and_html_parsing_are_runtime_dependencies() -> None:
    # Not extras: the widget renders Markdown with mistune and fetch parses HTML with bs4 on a plain install.
    runtime = {_norm(re.split(r"[\s\[<>=!~;]", s, maxsplit=1)[0])
               for s in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    assert {"mistune", "beautifulsoup4"} <= runtime
