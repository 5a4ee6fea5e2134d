"""``%brute export``: a session written out as a readable transcript, as Markdown, a standalone HTML page or a
notebook.

Every format comes from the one rendering the cell and the chat use (``transcript_html.turns``: each prompt, then
its turn's texts and tool blocks), so an export reads as the session did. HTML is the cell's own: model text
sanitised by allow-list, tool blocks escaped and folded in ``<details>``; a notebook holds one ``%%brute`` cell a
turn with that HTML (and plain text) as its output; Markdown keeps the model's text and writes each tool call as
the cell's ``text/markdown`` does (``tool_markdown``), its result in a fence it cannot close. A tool row is the
same in every format because each comes from the renderer of its form over one ``ToolView``. Keys are redacted in
all three (``render.plain``).
The file is written atomically inside the notebook's folder (the confinement); an existing file named by the user
is never overwritten, while the default path beside the session is the export's own and is replaced.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from brute_nb.errors import BruteError
from brute_nb.notebook.views import render
from brute_nb.notebook.views.tool_markdown import tool_markdown
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.tool_text import tool_plain
from brute_nb.notebook.views.transcript_html import log_html, segments_html, turns

FORMATS = ("md", "html", "ipynb")
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body {{ font-family: system-ui, sans-serif; max-width: 52em; margin: 2em auto; padding: 0 1em; }}</style>
</head><body><h1>{title}</h1>
{body}
</body></html>
"""


class ExportError(BruteError):
    """The export cannot be written as asked; the message says what to do instead."""


def export(messages: list[Any], fmt: str, title: str) -> bytes:
    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    text = {"md": markdown, "html": html_page, "ipynb": notebook}[fmt](messages, title)
    return text.encode("utf-8")


def markdown(messages: list[Any], title: str) -> str:
    out = [f"# {render.plain(title)}"]
    for prompt, items in turns(messages):
        if prompt is not None:
            out.append("**You:**\n\n" + quoted(render.plain(str(prompt.content))))
            continue
        for item in items:
            out.append(tool_markdown(item) if isinstance(item, ToolView) else render.plain(item[0]))
    return "\n\n".join(out) + "\n"


def quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def html_page(messages: list[Any], title: str) -> str:
    return PAGE.format(title=escape(render.plain(title)), body=log_html(messages))


def notebook(messages: list[Any], title: str) -> str:
    """One ``%%brute`` cell a turn, its output the cell's own HTML and plain text."""
    from brute_nb.notebook.kernel_tools.ipynb_cells import transcript

    cells: list[tuple[str, list[tuple[str, str]]]] = []
    for prompt, items in turns(messages):
        if prompt is not None:
            cells.append(("%%brute\n" + render.plain(str(prompt.content)), []))
        elif cells:
            plain = "\n\n".join(tool_plain(i) if isinstance(i, ToolView) else render.plain(i[0]) for i in items)
            cells[-1][1].append((segments_html(items), plain))
    return transcript(f"# {render.plain(title)}", cells)


def default_path(session_path: Path, fmt: str) -> Path:
    return session_path.with_suffix(f".{fmt}")


def write(data: bytes, path: Path, root: Path, *, replace: bool) -> Path:
    """Write the export atomically inside ``root`` (no link out); a file the user has there is kept."""
    from brute_nb.confine import confined, write_atomic

    target = confined(path, root, what="an export", hint="write it inside the notebook's folder")
    if target.exists() and not replace:
        raise ExportError(f"{path} already exists; name another file, or remove it first")
    write_atomic(target, data, root=root)
    return target


TITLE_CHARS = 60


def preview(messages: list[Any]) -> str:
    """The first prompt's first line, to title an export: a long one is cut at a word, with "…"."""
    line = next((render.plain(str(p.content)).strip().splitlines()[0] for p, _ in turns(messages)
                 if p is not None and str(p.content).strip()), "brute_nb session")
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS + 1].rsplit(" ", 1)[0].rstrip() if " " in line[:TITLE_CHARS + 1] else line[:TITLE_CHARS]
    return cut + "…"


def shown(path: Path, folder: Path, text: str) -> dict[str, str]:
    """What ``%brute export`` shows: ``text`` in a terminal; in a notebook a link to the file, relative to the
    notebook's folder as JupyterLab resolves links in outputs (the whole path on hover)."""
    from brute_nb.notebook.commands.provenance import folder_link

    href = folder_link(path, folder)
    before, _, _ = text.rpartition(str(path))
    return {"text/plain": text,
            "text/html": f'{escape(before)}<a href="{escape(href)}" title="{escape(str(path))}">{escape(href)}</a>'}

