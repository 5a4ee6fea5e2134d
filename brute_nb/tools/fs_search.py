"""``fs_search``: regex search of file contents with ripgrep, capped at 100 matching lines.

``rg`` comes from the pinned ``ripgrep`` wheel (installed next to the Python executable, which may not be on
PATH in a kernel). The pattern goes after ``-e`` so one starting with ``-`` is not read as a flag. When ``rg`` is
missing, a pure-Python search gives the same output format (it skips hidden and binary files but does not read
``.gitignore``). Output is ``<path>:<line>:<text>``, most recently modified files first; no match gives
``No matches found.``.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import anyio
import anyio.to_thread

from brute_nb.tools.fs_common import WorkspaceTool
from brute_nb.tools.truncation import ToolOutput, truncate

MAX_MATCHES = 100
MAX_COLUMNS = 2000


def find_rg() -> str | None:
    return shutil.which("rg") or shutil.which("rg", path=os.path.dirname(sys.executable))


class FSSearch(WorkspaceTool):
    name = "fs_search"
    description = (
        "Search file contents with a regular expression (ripgrep syntax) under a directory, optionally only in "
        "files matching a glob such as '*.py' or '*.{js,ts}'. Returns <path>:<line>:<text> lines, most recently "
        f"modified files first, at most {MAX_MATCHES}. Hidden, ignored and binary files are skipped."
    )
    params: ClassVar[dict[str, Any]] = {
        "pattern": {"type": "string", "desc": "Regular expression to search for", "required": True},
        "path": {"type": "string", "desc": "Directory to search (default: the workspace root)"},
        "glob": {"type": "string", "desc": "Only search files whose name matches this glob, e.g. '*.py'"},
        "ignore_case": {"type": "boolean", "desc": "Case-insensitive search (default false)"},
    }

    async def execute(self, pattern: str, path: str | None = None, glob: str | None = None,
                      ignore_case: bool = False) -> ToolOutput:
        folder = self.path(path or ".")
        if not folder.is_dir():
            raise NotADirectoryError(f"Directory not found: {folder}")
        rg = find_rg()
        if rg is not None:
            text = await run_rg(rg, pattern, folder, glob, ignore_case)
        else:
            text = await anyio.to_thread.run_sync(python_search, pattern, folder, glob, ignore_case,
                                                  abandon_on_cancel=True)
        return cap(text)


async def run_rg(rg: str, pattern: str, folder: Path, glob: str | None, ignore_case: bool) -> str:
    args = [rg, "--line-number", f"--max-columns={MAX_COLUMNS}", "--max-columns-preview", "--sortr=modified",
            "--no-config"]
    if ignore_case:
        args.append("--ignore-case")
    if glob:
        args += ["--glob", glob]
    args += ["-e", pattern, "--", str(folder)]
    done = await anyio.run_process(args, check=False, stdin=subprocess.DEVNULL)
    out = done.stdout.decode("utf-8", errors="replace")
    return out or done.stderr.decode("utf-8", errors="replace")


def cap(text: str) -> ToolOutput:
    if not text.strip():
        # Brute returned "", which reads as a broken tool; an explicit answer keeps the model on track.
        return ToolOutput("No matches found.", truncated=True)
    lines = text.splitlines()
    if len(lines) > MAX_MATCHES:
        text = "\n".join(lines[:MAX_MATCHES]) + (
            f"\n\n(Results truncated: showing {MAX_MATCHES} of {len(lines)} matches. Use a more specific path, "
            f"glob or pattern to narrow the search.)"
        )
    return truncate(text, direction="head")


def expand_braces(glob: str) -> list[str]:
    """``*.{js,ts}`` -> ``["*.js", "*.ts"]`` (fnmatch has no braces; rg globs do)."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if not match:
        return [glob]
    head, tail = glob[: match.start()], glob[match.end():]
    return [g for part in match.group(1).split(",") for g in expand_braces(head + part + tail)]


def _files(folder: Path, glob: str | None) -> list[Path]:
    globs = expand_braces(glob) if glob else []
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            if globs and not any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(rel, g) for g in globs):
                continue
            found.append(path)
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def python_search(pattern: str, folder: Path, glob: str | None, ignore_case: bool) -> str:
    """The fallback when ``rg`` is missing: same output lines, Python ``re`` syntax."""
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        return f"regex parse error: {exc}"
    out: list[str] = []
    for path in sorted(_files(folder, glob), key=_mtime, reverse=True):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:4096]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                if len(line) > MAX_COLUMNS:
                    line = line[:MAX_COLUMNS] + " [... omitted end of long line]"
                out.append(f"{path}:{number}:{line}")
    return "\n".join(out) + ("\n" if out else "")
