"""Every session in one frame, and the messages that mention something: ``brute_nb.sessions()`` and ``search``.

Sessions live beside their notebooks as ``<folder>/<stem>.brute/<session>.jsonl``. Without a folder these look
beside the notebook (the kernel's working folder, which Jupyter sets to the notebook's); with one, under it at any
depth. Each file is read with ``read_frame`` (the fast reader, strict about damage); a file that cannot be read is
a row that says why (file:line) instead of a table that fails, and archives (``*.archive.jsonl``) are left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

INDEX_LIMIT = 512 * 1024 * 1024
"""The largest session file the index reads; a larger one is a row that says so (a session has no size bound, but
an index of many must not stall on one)."""
PROMPT_CHARS = 80
SNIPPET_CHARS = 160


def session_files(folder: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """The session files beside the notebook (``folder`` None: the working folder) or anywhere under ``folder``."""
    base = Path(folder) if folder is not None else Path.cwd()
    pattern = "**/*.brute/*.jsonl" if folder is not None else "*.brute/*.jsonl"
    for path in sorted(base.glob(pattern)):
        if not path.name.endswith(".archive.jsonl") and path.is_file() and not path.is_symlink():
            yield path


def _where(path: Path) -> tuple[str, str]:
    """(notebook, session) a session file belongs to: ``<stem>.brute/<session>.jsonl``."""
    return str(path.parent.with_name(path.parent.name[: -len(".brute")])) + ".ipynb", path.name[: -len(".jsonl")]


def _read(path: Path) -> tuple[pd.DataFrame | None, str]:
    from brute_nb.errors import BruteError
    from brute_nb.sessions.columns import read_frame

    size = path.stat().st_size
    if size > INDEX_LIMIT:
        return None, f"{path}: {size:,} bytes, more than the index reads ({INDEX_LIMIT:,}); open it with read_frame"
    try:
        return read_frame(path), ""
    except (BruteError, OSError, ValueError) as exc:
        return None, str(exc)


def sessions(folder: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """One row a session: notebook, session, path, messages, tool_calls, first_prompt, last_modified (UTC), size,
    error (why a file could not be read, else "")."""
    import pandas as pd

    rows = []
    for path in session_files(folder):
        notebook, name = _where(path)
        df, error = _read(path)
        stat = path.stat()
        prompts = df.loc[df["role"] == "user", "content"] if df is not None else pd.Series(dtype="str")
        rows.append({
            "notebook": notebook, "session": name, "path": str(path),
            "messages": len(df) if df is not None else None,
            "tool_calls": int(df["n_tool_calls"].sum()) if df is not None else None,
            "first_prompt": str(prompts.iloc[0])[:PROMPT_CHARS] if len(prompts) else "",
            "last_modified": pd.Timestamp(stat.st_mtime, unit="s", tz="UTC"), "size": stat.st_size, "error": error,
        })
    columns = ["notebook", "session", "path", "messages", "tool_calls", "first_prompt", "last_modified", "size",
               "error"]
    out = pd.DataFrame(rows, columns=columns)
    return out.astype({"messages": "Int64", "tool_calls": "Int64"})


def search(text: str, folder: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The messages whose text contains ``text`` (any case), across the sessions ``sessions(folder)`` lists: notebook,
    session, message (its index in the log), turn, role, created_at, snippet (the text around the first match)."""
    import pandas as pd

    if not text.strip():
        raise ValueError("search needs some text to look for")
    rows: list[dict[str, Any]] = []
    for path in session_files(folder):
        df, _ = _read(path)
        if df is None:
            continue
        notebook, name = _where(path)
        content = df["content"].fillna("").astype(str)
        hits = df[content.str.contains(text, case=False, regex=False)]
        for index, row in hits.iterrows():
            rows.append({"notebook": notebook, "session": name, "message": index, "turn": row["turn"],
                         "role": row["role"], "created_at": row.get("created_at"),
                         "snippet": snippet(str(row["content"]), text)})
    from brute_nb.frames import BASE, KIND

    out = pd.DataFrame(rows, columns=["notebook", "session", "message", "turn", "role", "created_at", "snippet"])
    out.attrs[KIND] = "search"  # a notebook shows the notebooks relative to the folder searched, the snippet whole
    out.attrs[BASE] = str(Path(folder) if folder is not None else Path.cwd())
    return out


def snippet(content: str, text: str) -> str:
    """The part of ``content`` around the first ``text`` (any case), on one line: each run of white space (line
    breaks, a read result's tabs) one space."""
    at = content.lower().find(text.lower())
    start = max(0, at - SNIPPET_CHARS // 2)
    piece = " ".join(content[start:start + SNIPPET_CHARS].split())
    return ("..." if start else "") + piece + ("..." if start + SNIPPET_CHARS < len(content) else "")
