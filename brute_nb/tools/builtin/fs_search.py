"""``fs_search``: regex search of file contents with ripgrep, capped at 100 matching lines.

``rg`` comes from the pinned ``ripgrep`` wheel (installed next to the Python executable, which may not be on
PATH in a kernel). The pattern goes after ``-e`` so one starting with ``-`` is not read as a flag. When ``rg`` is
missing, a pure-Python search gives the same output format under the same rules as ``rg``: hidden and binary files
skipped, symlinks never followed, only regular files opened (a FIFO or device is skipped unopened), each file read
a line at a time with a bounded line length (it does not read ``.gitignore``). Output is ``<path>:<line>:<text>``
with paths relative to the workspace root (absolute only outside it), most recently modified files first; no
match gives ``No matches found.``.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import anyio
import anyio.to_thread

from brute_nb.tools.builtin.fs_common import WorkspaceTool
from brute_nb.tools.builtin.fs_read import bounded_lines
from brute_nb.tools.context import root, shown_path
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
        real, shown, base = shown_folder(folder)
        rg = find_rg()
        if rg is not None:
            text = await run_rg(rg, pattern, shown, base, glob, ignore_case)
        else:
            text = await anyio.to_thread.run_sync(python_search, pattern, real, glob, ignore_case, shown,
                                                  abandon_on_cancel=True)
        return cap(text)


def shown_folder(folder: Path) -> tuple[Path, str, Path]:
    """The real folder, how results name it, and the root: inside the root, a relative name (``.`` for the root),
    so results name files relative to the root as the README promises; outside it, the absolute path."""
    real = Path(os.path.realpath(folder))
    return real, shown_path(real), root()


async def run_rg(rg: str, pattern: str, folder: str, cwd: Path, glob: str | None, ignore_case: bool) -> str:
    args = [rg, "--line-number", f"--max-columns={MAX_COLUMNS}", "--max-columns-preview", "--sortr=modified",
            "--no-config"]
    if ignore_case:
        args.append("--ignore-case")
    if glob:
        args += ["--glob", glob]
    args += ["-e", pattern, "--", folder]
    done = await anyio.run_process(args, check=False, stdin=subprocess.DEVNULL, cwd=cwd)
    out = done.stdout.decode("utf-8", errors="replace")
    if folder == ".":  # rg names what it finds under "." as "./name"
        out = "".join(line[2:] if line.startswith("./") else line for line in out.splitlines(keepends=True))
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


def _search_file(regex: re.Pattern[str], name: str, dir_fd: int, shown: str) -> tuple[float, list[str]]:
    """Matching lines of one regular file (opened without following links or blocking), with its mtime."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return 0.0, []
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or b"\0" in f.read(4096):
            return 0.0, []
        os.set_blocking(fd, True)
        f.seek(0)
        out = []
        for number, line in enumerate(bounded_lines(f), 1):
            line = line.rstrip("\r\n")
            if regex.search(line):
                if len(line) > MAX_COLUMNS:
                    line = line[:MAX_COLUMNS] + " [... omitted end of long line]"
                out.append(f"{shown}:{number}:{line}")
        return st.st_mtime, out


def python_search(pattern: str, folder: Path, glob: str | None, ignore_case: bool, shown: str | None = None) -> str:
    """The fallback when ``rg`` is missing: same output lines and file rules, Python ``re`` syntax."""
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        return f"regex parse error: {exc}"
    prefix = str(folder) if shown is None else shown
    globs = expand_braces(glob) if glob else []
    found: list[tuple[float, list[str]]] = []
    # fwalk hands out each folder's descriptor and never follows a symlink, even one swapped in mid-walk.
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(folder, follow_symlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = os.path.relpath(dirpath, folder)
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if name.startswith(".") or (globs and not any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(rel, g)
                                                          for g in globs)):
                continue
            found.append(_search_file(regex, name, dir_fd, rel if prefix == "." else f"{prefix}/{rel}"))
    found.sort(key=lambda item: item[0], reverse=True)
    out = [line for _, lines in found for line in lines]
    return "\n".join(out) + ("\n" if out else "")
