"""``read``: a file's numbered lines (or a directory listing) within Brute's caps.

Caps: 2,000 lines unless ``end_line`` is given, 51,200 bytes, 2,000 characters a line. Binary files (39 known
extensions, or a NUL in the first 4,096 bytes) are refused. A missing file suggests up to three near names. The
output is marked self-truncated, so the pipeline never cuts it again (Brute's double truncation dropped the
"Use start_line=..." hint).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, ClassVar

from brute_nb.tools.fs_common import WorkspaceTool
from brute_nb.tools.truncation import MAX_BYTES, MAX_LINES, ToolOutput, truncate_line

BINARY_EXTENSIONS = frozenset((
    ".zip", ".exe", ".so", ".pyc", ".pyo", ".dll", ".dylib", ".bin", ".o", ".a", ".tar", ".gz", ".bz2", ".xz", ".7z",
    ".rar", ".jar", ".war", ".class", ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".pdf", ".woff", ".woff2",
    ".ttf", ".eot", ".mp3", ".mp4", ".avi", ".mov", ".flv", ".wmv", ".db", ".sqlite", ".sqlite3",
))
SNIFF_BYTES = 4096
MAX_ENTRIES = 2000


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def suggestions(path: Path, limit: int = 3, max_distance: int = 3) -> list[str]:
    """Up to three non-dot names in the parent folder within edit distance 3 of the missing one."""
    try:
        names = [n for n in os.listdir(path.parent) if not n.startswith(".")]
    except OSError:
        return []
    target = path.name.lower()
    scored = sorted((levenshtein(target, n.lower()), n) for n in names)
    return [n for d, n in scored if d <= max_distance][:limit]


def list_directory(path: Path) -> str:
    names = sorted(n for n in os.listdir(path) if not n.startswith("."))
    lines = [f"{n} ({'dir' if (path / n).is_dir() else 'file'})" for n in names[:MAX_ENTRIES]]
    text = "\n".join(lines)
    if len(names) > MAX_ENTRIES:
        text += f"\n(Showing {MAX_ENTRIES} of {len(names)} entries)"
    return text


def is_binary(path: Path) -> bool:
    if path.suffix.lower() in BINARY_EXTENSIONS:
        return True
    with path.open("rb") as f:
        return b"\0" in f.read(SNIFF_BYTES)


class FSRead(WorkspaceTool):
    name = "read"
    description = (
        "Read a file's contents as numbered lines (<line>\\t<text>), or list a directory. Shows at most "
        f"{MAX_LINES} lines and {MAX_BYTES // 1024} KB; use start_line/end_line (1-based, inclusive) to read "
        "other parts. Binary files are refused."
    )
    params: ClassVar[dict[str, Any]] = {
        "file_path": {"type": "string", "desc": "Path to the file or directory (relative to the workspace root)",
                      "required": True},
        "start_line": {"type": "integer", "desc": "First line to read, 1-based (default 1)"},
        "end_line": {"type": "integer", "desc": "Last line to read, inclusive (default: 2000 lines on)"},
    }

    def execute(self, file_path: str, start_line: int | None = None, end_line: int | None = None) -> Any:
        path = self.path(file_path)
        if path.is_dir():
            return list_directory(path)
        if not path.exists():
            near = suggestions(path)
            hint = f". Did you mean: {', '.join(near)}?" if near else ""
            raise FileNotFoundError(f"File not found: {path}{hint}")
        if not stat.S_ISREG(path.stat().st_mode):
            raise OSError(f"Not a file: {path}")
        if is_binary(path):
            raise ValueError(f"Cannot read binary file: {path}")
        text = path.read_bytes().decode("utf-8", errors="replace")
        return ToolOutput(numbered(text, start_line, end_line), truncated=True)


def numbered(text: str, start_line: int | None, end_line: int | None) -> str:
    lines = text.splitlines(keepends=True)
    total = len(lines)
    if not total:
        return ""
    first = max((start_line or 1) - 1, 0)
    last = min(end_line - 1, total - 1) if end_line is not None else min(first + MAX_LINES - 1, total - 1)
    if first >= total:
        return f"(start_line={first + 1} is past the end of the file: it has {total} lines)"
    if last < first:
        return f"(end_line={end_line} is before start_line={first + 1}: nothing to show)"
    out: list[str] = []
    size = 0
    shown = first - 1
    for i in range(first, last + 1):
        line = truncate_line(lines[i])
        entry = f"{i + 1}\t{line}"
        entry_size = len(entry.encode("utf-8", "surrogatepass"))
        if size + entry_size > MAX_BYTES:
            break
        out.append(entry)
        size += entry_size
        shown = i
    body = "".join(out)
    if shown < last or (end_line is None and shown < total - 1):
        body += (f"\n(Showing lines {first + 1}-{shown + 1} of {total}. "
                 f"Use start_line={shown + 2} to continue.)")
    return body
