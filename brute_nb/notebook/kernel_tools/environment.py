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
import stat
import sys
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brute_nb.confine import Signature

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


_VERSIONS: dict[str, tuple[int, str | None]] = {}
"""Import name -> (id of the module object it was looked up for, its distribution's version or None)."""


def package_versions() -> str:
    """The versions of the key packages the kernel has imported.

    ``importlib.metadata.version`` searches every folder on ``sys.path`` (~1 ms a package, 2 ms a turn with pandas
    and numpy imported), so each is looked up once per module object: the same import keeps its answer, a module
    imported afresh (removed from ``sys.modules``, imported again) is looked up again. A package upgraded on disk
    while the kernel still runs the old import keeps the version the kernel runs."""
    found = []
    for module, dist in KEY_PACKAGES.items():
        imported = sys.modules.get(module)
        if imported is None:
            continue
        known = _VERSIONS.get(module)
        if known is None or known[0] != id(imported):
            try:
                version: str | None = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                version = None
            known = _VERSIONS[module] = (id(imported), version)
        if known[1] is not None:
            found.append(f"{dist} {known[1]}")
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


def instructions_section(root: Path, notebook: Path | None, *, resolved: bool = False) -> str:
    """The project's AGENTS.md / CLAUDE.md (root first, then the notebook's folder), or "" when there are none.

    ``resolved``: ``root`` is a real path resolved just now (``default_system_prompt``), not resolved again."""
    real_root = root if resolved else root.resolve()
    folders = [real_root]
    if notebook is not None:
        # The notebook's folder is the root unless the root was set elsewhere: then no second walk of the same path.
        folder = real_root if notebook.parent == root else notebook.parent.resolve()
        if folder != real_root:
            folders.append(folder)
    parts = []
    for folder in folders:  # real paths, resolved just now: what lets read_instructions reuse an answer
        for name in INSTRUCTION_FILES:
            text = read_instructions(folder / name, real_root, resolved=True)
            if text:
                parts.append(f"From {_shown(folder / name, real_root)}:\n\n{text}")
    return "# Project-Specific Rules\n\n" + "\n\n".join(parts) if parts else ""


_READ: dict[tuple[str, str], tuple[Signature, str]] = {}
"""(path, root) -> (the file's ``confine.signature`` when it was read through the confinement, its text)."""


def read_instructions(path: Path, root: Path, *, resolved: bool = False) -> str:
    """The file's text if it is a regular file inside the workspace root (a link out, a FIFO: ""), bounded.

    Asked for four paths every turn, so with ``resolved`` (the caller resolved ``root`` and ``path``'s folder
    to real paths just now, as ``instructions_section`` does each turn) an answer is kept: the text of a file read
    through ``confine`` is reused while the path is still a regular file (``lstat``: not a link) with the same
    device, inode, size and mtime in ns (an edit shows on the next turn), in a folder inside the root. Those are
    what confinement's answer rests on: a real folder inside the real root, and an entry there that is no link.
    Anything else (a link, a changed file, no ``resolved``) goes through ``confine`` again.
    """
    from brute_nb.confine import FileTooLargeError, inside, read_all, real, signature
    from brute_nb.confine import place as confined_place
    from brute_nb.errors import PathOutsideRootError

    try:
        st = os.lstat(path)
    except OSError:  # missing, the usual case, asked every turn: one lstat, not confinement's walk
        return ""
    key = (str(path), str(root))
    reusable = resolved and stat.S_ISREG(st.st_mode) and inside(str(path.parent), str(root))
    known = _READ.get(key)
    if reusable and known is not None and known[0] == signature(st):
        return known[1]
    _READ.pop(key, None)
    try:
        with confined_place(path, real(root)) as where:
            data, read = read_all(where, limit=INSTRUCTIONS_LIMIT, why="the instructions file limit")
    except FileTooLargeError:
        return f"[{path.name} is larger than {INSTRUCTIONS_LIMIT:,} bytes, so it is not included]"
    except (OSError, PathOutsideRootError):
        return ""
    text = data.decode("utf-8", errors="replace").strip()
    if reusable:
        _READ[key] = (signature(read), text)  # the stat of the very file read, not of the lstat before it
    return text


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
