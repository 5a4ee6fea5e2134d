"""Universal truncation: the safety net every tool result passes before it reaches the model.

Caps (Brute's): 2,000 lines, 51,200 bytes, 2,000 characters a line. When anything is cut, the whole output is
written to an overflow file and the kept text ends with a marker naming that file and the real ``read``
parameters (``start_line``/``end_line``) to page through it. Nothing is cut silently: unlike Brute, a per-line
cut also saves the overflow file, and tail mode keeps the *end* of the output when the byte cap binds.

A tool that truncates itself returns ``ToolOutput(text, truncated=True)``; the pipeline then leaves it alone
(a structured flag, not a search for the marker text, which any file could contain).

Overflow directory: ``env["overflow_dir"]``, else ``$BRUTE_NB_OVERFLOW_DIR``, else ``<workspace root>/.brute/overflow``:
inside the root, so the ``read`` tool the marker names may open it (a folder outside the root it would refuse).
The marker gives the path relative to the root when it is inside. ``cleanup(max_age_days=7)`` deletes old overflow
files (the notebook front calls it at load, for the current folder: the notebook's, the default root). An overflow
file holds no API key (``brute_nb.redact``), even when a tool's output did, and is written whole
(``confine.write_atomic``), never through a link that leads out of the workspace root (a chosen folder outside the
root is its own root).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from brute_nb import confine
from brute_nb.redact import redact
from brute_nb.tools.context import current_env, root, shown_path

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_LINE_LENGTH = 2000
TRUNCATION_MARKER = "[Output truncated:"
LINE_SUFFIX = f"... (line truncated to {MAX_LINE_LENGTH} chars)"

Direction = Literal["head", "tail"]


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool result with flags: ``truncated`` (already capped: skip the safety net), ``is_error``."""

    text: str
    truncated: bool = False
    is_error: bool = False
    overflow_path: str | None = None
    attachments: tuple[Any, ...] = ()
    """Images a tool returned (a rendered chart), sent with its result."""
    error_type: str | None = None
    """The class of the exception the tool raised (``text`` is then its ``error_text``): what a trace may export
    of a failure without content capture, where the text (paths, arguments) may not go."""

    def __str__(self) -> str:
        return self.text


OVERFLOW_FOLDER = Path(".brute") / "overflow"


def overflow_dir(configured: str | os.PathLike[str] | None = None) -> Path:
    """Where overflow files go (see the module docstring for the order of precedence)."""
    env = current_env()
    chosen = configured or env.get("overflow_dir") or os.environ.get("BRUTE_NB_OVERFLOW_DIR")
    if chosen:
        return Path(chosen).expanduser()
    return root(env) / OVERFLOW_FOLDER


def truncate_line(line: str, max_chars: int = MAX_LINE_LENGTH) -> str:
    """Cut one line (its newline kept) to ``max_chars`` visible characters plus a suffix saying so."""
    body = line[:-1] if line.endswith("\n") else line
    if len(body) <= max_chars:
        return line
    return body[:max_chars] + LINE_SUFFIX + ("\n" if line.endswith("\n") else "")


def truncate(
    text: str,
    *,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
    direction: Direction = "head",
    directory: str | os.PathLike[str] | None = None,
) -> ToolOutput:
    """Cap ``text``; when anything is cut, save it whole and say where. The result is marked truncated."""
    if not text:
        return ToolOutput(text or "", truncated=True)
    if len(text) <= min(MAX_LINE_LENGTH, max_lines) and 4 * len(text) <= max_bytes:
        # Within every cap whatever its lines (a character is at most 4 bytes): most results, left as they are.
        return ToolOutput(text, truncated=True)
    lines = text.splitlines(keepends=True)
    cut_lines = [truncate_line(line) for line in lines]
    long_lines = sum(1 for a, b in zip(lines, cut_lines, strict=True) if a is not b)
    kept = _window(cut_lines, max_lines, max_bytes, direction)
    if len(kept) == len(lines) and not long_lines:
        return ToolOutput(text, truncated=True)
    path = _save(text, directory)
    body = "".join(kept)
    if direction == "head":
        first, last = 1, len(kept)
    else:
        first, last = len(lines) - len(kept) + 1, len(lines)
    note = f"\n{TRUNCATION_MARKER} showing lines {first}-{last} of {len(lines)}"
    if long_lines:
        note += f"; {long_lines} long line(s) cut to {MAX_LINE_LENGTH} chars"
    note += "]"
    if path is not None:
        where = last + 1 if direction == "head" and last < len(lines) else 1
        shown = shown_path(path)
        note += (
            f"\nFull output saved to: {shown}. Use the read tool with file_path={shown!r} and "
            f"start_line={where} (and end_line) to page through it, or fs_search to find what you need."
        )
    sep = "" if body.endswith("\n") or not body else "\n"
    return ToolOutput(body + sep + note.lstrip("\n"), truncated=True,
                      overflow_path=None if path is None else str(path))


def _window(lines: list[str], max_lines: int, max_bytes: int, direction: Direction) -> list[str]:
    """The lines kept: at most ``max_lines``, and at most ``max_bytes`` walking from the kept end inward."""
    window = lines[:max_lines] if direction == "head" else lines[-max_lines:] if max_lines else []
    order = window if direction == "head" else list(reversed(window))
    kept: list[str] = []
    total = 0
    for line in order:
        size = len(line.encode("utf-8", "surrogatepass"))
        if total + size > max_bytes:
            break
        kept.append(line)
        total += size
    return kept if direction == "head" else list(reversed(kept))


def _save(text: str, directory: str | os.PathLike[str] | None) -> Path | None:
    """Write the full output; a failure to save must not fail the tool, so it only loses the file."""
    folder = overflow_dir(directory)
    path = folder / f"tool_{os.urandom(8).hex()}.txt"  # secrets.token_hex, without importing hashlib at load
    base = root()
    try:
        if not confine.inside(os.path.abspath(folder), base):  # a folder chosen outside the root is its own root
            folder.mkdir(parents=True, exist_ok=True)
            base = folder
        ignore = folder / ".gitignore"
        if folder.parts[-2:] == OVERFLOW_FOLDER.parts and not ignore.exists():
            # the default folder is inside the user's project: its tool output must not end up in their commits
            confine.write_atomic(ignore, b"*\n", root=base)
        confine.write_atomic(path, redact(text).encode("utf-8", errors="replace"), root=base)
    except OSError:
        return None
    return path


def cleanup(max_age_days: float = 7, directory: str | os.PathLike[str] | None = None) -> int:
    """Delete overflow files older than ``max_age_days``; returns how many were removed."""
    folder = overflow_dir(directory)
    cutoff = time.time() - max_age_days * 86400
    removed = 0
    try:
        entries = list(folder.iterdir())
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_file() and entry.name.startswith("tool_") and entry.stat().st_mtime < cutoff:
                entry.unlink()
                removed += 1
        except OSError:
            continue
    return removed
