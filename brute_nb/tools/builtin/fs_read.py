"""``read``: a file's numbered lines (or a directory listing) within Brute's caps.

Caps: 2,000 lines unless ``end_line`` is given, 51,200 bytes, 2,000 characters a line. Only the shown lines are
read into memory (a line is read up to its cap, the lines after are counted in chunks), so a 1 GiB file costs
kilobytes; a FIFO, socket or device is refused before it is opened (``confine``). Binary files (39 known
extensions, or a NUL in the first 4,096 bytes) are refused. A missing file suggests up to three near names. The
output is marked self-truncated, so the pipeline never cuts it again (Brute's double truncation dropped the
"Use start_line=..." hint).
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from brute_nb.confine import DIR_FLAGS, open_regular
from brute_nb.tools.builtin.fs_common import WorkspaceTool
from brute_nb.tools.truncation import MAX_BYTES, MAX_LINE_LENGTH, MAX_LINES, ToolOutput, truncate_line

BINARY_EXTENSIONS = frozenset((
    ".zip", ".exe", ".so", ".pyc", ".pyo", ".dll", ".dylib", ".bin", ".o", ".a", ".tar", ".gz", ".bz2", ".xz", ".7z",
    ".rar", ".jar", ".war", ".class", ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".pdf", ".woff", ".woff2",
    ".ttf", ".eot", ".mp3", ".mp4", ".avi", ".mov", ".flv", ".wmv", ".db", ".sqlite", ".sqlite3",
))
SNIFF_BYTES = 4096
MAX_ENTRIES = 2000
LINE_BYTES = 4 * MAX_LINE_LENGTH + 200
"""Bytes read of one line: more than ``MAX_LINE_LENGTH`` characters of any width, so a cut line still shows the cap."""
CHUNK = 1 << 20
COUNT_LIMIT = 64 << 20
"""Lines past what is shown are counted up to this many bytes; a bigger file is "more than N" lines long."""


def suggestions(path: Path, limit: int = 3) -> list[str]:
    """Up to three non-dot names in the parent folder close to the missing one (difflib's ratio, any case)."""
    try:
        names = [n for n in os.listdir(path.parent) if not n.startswith(".")]
    except OSError:
        return []
    by_lower: dict[str, str] = {}
    for name in sorted(names):
        by_lower.setdefault(name.lower(), name)
    return [by_lower[n] for n in difflib.get_close_matches(path.name.lower(), by_lower, n=limit)]


def list_directory(dir_fd: int) -> str:
    with os.scandir(dir_fd) as entries:
        found = sorted((e.name, e.is_dir()) for e in entries if not e.name.startswith("."))
    lines = [f"{n} ({'dir' if is_dir else 'file'})" for n, is_dir in found[:MAX_ENTRIES]]
    text = "\n".join(lines)
    if len(found) > MAX_ENTRIES:
        text += f"\n(Showing {MAX_ENTRIES} of {len(found)} entries)"
    return text


def is_binary(path: Path, f: BinaryIO) -> bool:
    if path.suffix.lower() in BINARY_EXTENSIONS:
        return True
    binary = b"\0" in f.read(SNIFF_BYTES)
    f.seek(0)
    return binary


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
        try:
            with self.place(path) as where:
                entry = where.lstat()
                if entry is None:
                    raise FileNotFoundError
                if stat.S_ISDIR(entry.st_mode):
                    folder = os.open(where.name, DIR_FLAGS, dir_fd=where.dir_fd)
                    try:
                        return list_directory(folder)
                    finally:
                        os.close(folder)
                fd, _ = open_regular(where)
        except FileNotFoundError:
            near = suggestions(path)
            hint = f". Did you mean: {', '.join(near)}?" if near else ""
            raise FileNotFoundError(f"File not found: {path}{hint}") from None
        with os.fdopen(fd, "rb") as f:
            if is_binary(path, f):
                raise ValueError(f"Cannot read binary file: {path}")
            return ToolOutput(numbered(f, start_line, end_line), truncated=True)


def bounded_lines(f: BinaryIO) -> Iterator[str]:
    """The file's lines (split at ``\\n``), each cut to ``LINE_BYTES``: a 1 GiB line never reaches memory."""
    while line := f.readline(LINE_BYTES):
        if len(line) == LINE_BYTES and not line.endswith(b"\n"):
            while tail := f.readline(CHUNK):  # skip the rest of the line before yielding, so counts stay right
                if tail.endswith(b"\n"):
                    line += b"\n"
                    break
        yield line.decode("utf-8", errors="replace")


def count_rest(f: BinaryIO) -> tuple[int, bool]:
    """Lines left in ``f``, reading at most ``COUNT_LIMIT`` bytes; and whether that reached the end."""
    count = 0
    read = 0
    last = b"\n"
    while chunk := f.read(CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
        read += len(chunk)
        if read >= COUNT_LIMIT:
            return count, False
    return count + (last != b"\n"), True


def numbered(f: BinaryIO, start_line: int | None, end_line: int | None) -> str:
    """Numbered lines from ``start_line`` within the caps, reading only those lines (and counting the rest)."""
    first = max((start_line or 1) - 1, 0)
    stop = end_line if end_line is not None else first + MAX_LINES
    out: list[str] = []
    size = 0
    shown = first - 1
    seen = 0
    for i, line in enumerate(bounded_lines(f)):
        seen = i + 1
        if i < first:
            continue
        entry = f"{i + 1}\t{truncate_line(line)}"
        entry_size = len(entry.encode("utf-8", "surrogatepass"))
        if i >= stop or size + entry_size > MAX_BYTES:
            break
        out.append(entry)
        size += entry_size
        shown = i
    rest, complete = count_rest(f)
    total = seen + rest
    if not total:
        return ""
    last = min(end_line - 1, total - 1) if end_line is not None else min(first + MAX_LINES - 1, total - 1)
    if first >= total:
        return f"(start_line={first + 1} is past the end of the file: it has {total} lines)"
    if last < first:
        return f"(end_line={end_line} is before start_line={first + 1}: nothing to show)"
    body = "".join(out)
    if shown < last or (end_line is None and shown < total - 1):
        of = f"{total}" if complete else f"more than {total}"
        body += (f"\n(Showing lines {first + 1}-{shown + 1} of {of}. "
                 f"Use start_line={shown + 2} to continue.)")
    return body
