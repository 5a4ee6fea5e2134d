"""What the system prompt tells the model about where it works, rebuilt at every turn (Brute's ``Environment`` and
``Instructions`` sections of ``SystemPrompt.build``, for a notebook).

- ``environment_section``: an ``<env>`` block with the workspace root, whether it is a git repository, the
  platform, today's date (Brute's ``Mon Apr 27 2026``), the Python version and the versions of the key data
  packages the kernel has imported, the notebook, and the kernel's DataFrames by name and shape. The block is the
  part of a request that changes from run to run, so a replayed cassette compares requests without it
  (``providers.replay``).
- ``instructions_section``: the project's own rules, ``AGENTS.md`` and ``CLAUDE.md`` from the workspace root and
  the notebook's folder, under Brute's ``# Project-Specific Rules`` heading. Each file is read through the
  workspace confinement (inside the root, no link out, a regular file) and bounded, so a link or a huge file in a
  cloned repository cannot pull anything else into the prompt.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
INSTRUCTIONS_LIMIT = 64 * 1024
"""Bytes of an instructions file the prompt takes; a larger file is named, not read."""
KEY_PACKAGES = {"pandas": "pandas", "numpy": "numpy", "polars": "polars", "scipy": "scipy", "sklearn": "scikit-learn",
                "matplotlib": "matplotlib", "seaborn": "seaborn", "plotly": "plotly", "statsmodels": "statsmodels",
                "torch": "torch", "tensorflow": "tensorflow", "jax": "jax", "pyarrow": "pyarrow", "duckdb": "duckdb"}
"""Import name -> distribution: the packages whose versions matter to code the model writes, shown once imported."""
FRAMES_SHOWN = 30
INTRO = "Here is useful information about the environment you are running in:"


def environment_section(root: Path, notebook: Path | None, namespace: Mapping[str, Any] | None,
                        today: date | None = None) -> str:
    lines = [f"Working directory: {root}",
             f"Is directory a git repo: {'yes' if (root / '.git').exists() else 'no'}",
             f"Platform: {sys.platform}",
             f"Today's date: {(today or date.today()).strftime('%a %b %d %Y')}",
             f"Python: {platform.python_version()}"]
    packages = package_versions()
    if packages:
        lines.append(f"Packages: {packages}")
    if notebook is not None:
        lines.append(f"Notebook: {notebook}")
    frames = dataframes(namespace or {})
    if frames:
        lines.append(f"DataFrames in the kernel: {frames}")
    return "\n".join([INTRO, "<env>", *lines, "</env>"])


def package_versions() -> str:
    found = []
    for module, dist in KEY_PACKAGES.items():
        if module in sys.modules:
            try:
                found.append(f"{dist} {importlib.metadata.version(dist)}")
            except importlib.metadata.PackageNotFoundError:
                continue
    return ", ".join(found)


def dataframes(namespace: Mapping[str, Any]) -> str:
    """``name (rows x columns)`` of each DataFrame the user made (private names, ``In``/``Out`` and modules skipped)."""
    from brute_nb.notebook.kernel_tools.notebook_tools import user_variables

    shown = []
    for name, value in user_variables(dict(namespace)).items():
        if type(value).__module__.split(".")[0] in ("pandas", "polars") and hasattr(value, "columns"):
            shape = getattr(value, "shape", None)
            if isinstance(shape, tuple) and len(shape) == 2:
                shown.append(f"{name} ({shape[0]:,} rows x {shape[1]:,} columns)")
    extra = len(shown) - FRAMES_SHOWN
    return ", ".join(shown[:FRAMES_SHOWN]) + (f", and {extra} more" if extra > 0 else "")


def instructions_section(root: Path, notebook: Path | None) -> str:
    """The project's AGENTS.md / CLAUDE.md (root first, then the notebook's folder), or "" when there are none."""
    folders = [root]
    if notebook is not None and notebook.parent.resolve() != root.resolve():
        folders.append(notebook.parent)
    parts = []
    for folder in folders:
        for name in INSTRUCTION_FILES:
            text = read_instructions(folder / name, root)
            if text:
                parts.append(f"From {_shown(folder / name, root)}:\n\n{text}")
    return "# Project-Specific Rules\n\n" + "\n\n".join(parts) if parts else ""


def read_instructions(path: Path, root: Path) -> str:
    """The file's text if it is a regular file inside the workspace root (a link out, a FIFO: ""), bounded."""
    from brute_nb.confine import FileTooLargeError, read_file
    from brute_nb.errors import PathOutsideRootError

    if not os.path.lexists(path):  # the usual case, asked every turn: one lstat, not confinement's walk
        return ""
    try:
        data = read_file(path, root=root, limit=INSTRUCTIONS_LIMIT, why="the instructions file limit")
    except FileTooLargeError:
        return f"[{path.name} is larger than {INSTRUCTIONS_LIMIT:,} bytes, so it is not included]"
    except (OSError, PathOutsideRootError):
        return ""
    return data.decode("utf-8", errors="replace").strip()


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
