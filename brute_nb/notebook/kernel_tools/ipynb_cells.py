"""The cells of a saved ``.ipynb`` as nbformat reads them: find one, replace its source, insert one, set its outputs.

Pure functions over bytes and ``NotebookNode`` (the tools in ``cell_tools`` do the locked, atomic file work), so
every change goes through nbformat and leaves a notebook it validates: a file that is not one is refused with the
validator's message, never rewritten. A cell is named as the ``notebook`` tool lists it (``3`` or ``[3]``, its
index) or by its nbformat id. Outputs are written as nbformat's own output types, their text redacted, since a
notebook file leaves the kernel; what the cell displayed becomes ``display_data`` outputs between its stream text
as it came, a value nbformat's schema would refuse left out.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from brute_nb.errors import BruteError
from brute_nb.notebook.kernel_tools.capture import Display

BINARY = re.compile(r"image/(?!svg)|application/pdf$")
"""Mime types whose values are base64 text: nothing to redact in them."""
JSON_MIME = re.compile(r"application/(.*\+)?json$")
"""Mime types whose values nbformat takes as any JSON (the others are text)."""


class NotebookFileError(BruteError, ValueError):
    """The notebook file cannot be read or edited as asked; the message says what to do instead."""


@dataclass
class Ran:
    """What running a cell showed: the outputs a person would see under it."""

    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    error: tuple[str, str, list[str]] | None = None
    """(ename, evalue, traceback lines)"""
    images: list[bytes] = field(default_factory=list)
    """PNG bytes of the figures the cell made."""
    displays: list[Display] = field(default_factory=list)
    """What it showed through IPython's display machinery, in order."""
    count: int | None = None
    """The execution count the run took (``run_count``), shown as the cell's ``[n]``; None: none."""


def invalid(where: str, why: str) -> NotebookFileError:
    return NotebookFileError(f"{where} is not a valid notebook ({why}); fix or restore it first")


def document(data: bytes, where: str) -> dict[str, Any]:
    """The JSON object a notebook file holds, its cells a list of objects (what any reader of it may rely on).

    The file may be anything (a collaborator's commit, a save cut short), so whatever else it holds is a
    ``NotebookFileError`` naming ``where``, never the parser's own exception (JSON nested too deep is a
    ``RecursionError``, a JSON array has no ``.get``)."""
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise invalid(where, "it is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise invalid(where, f"it is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError):  # a number too long to convert; nesting deeper than the parser goes
        raise invalid(where, "it is JSON no reader takes: nested too deep or a number too long") from None
    if not isinstance(value, dict):
        raise invalid(where, f"it holds a JSON {type(value).__name__}, not a notebook object")
    cells = value.get("cells")
    if not isinstance(cells, list):
        raise invalid(where, "it has no list of cells")
    wrong = next((i for i, cell in enumerate(cells) if not isinstance(cell, dict)), None)
    if wrong is not None:
        raise invalid(where, f"its cell [{wrong}] is not an object")
    return value


def read(data: bytes, where: str) -> Any:
    """The notebook in ``data`` (nbformat 4), upgraded to 4.5 so every cell has an id; ``where`` names it in errors."""
    import nbformat
    import nbformat.v4

    document(data, where)
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        if nb.nbformat_minor < 5:
            nb = nbformat.v4.upgrade(nb)  # 4.5 gives every cell an id, as Jupyter does when it saves
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:  # the schema's own words: which field is wrong
        raise invalid(where, exc.message) from None
    except (ValueError, AttributeError, TypeError, KeyError, RecursionError):  # not quoted: it may hold anything
        raise invalid(where, "it is not nbformat 4 JSON") from None
    return nb


def write(nb: Any) -> bytes:
    """The notebook as nbformat writes it (validated on the way), with the trailing newline Jupyter saves."""
    import nbformat

    nbformat.validate(nb)
    text: str = nbformat.writes(nb)
    return (text + "\n").encode("utf-8")


def find(nb: Any, cell: str, where: str) -> int:
    """The index of ``cell``: ``3``/``[3]`` (as the ``notebook`` tool lists it) or a cell id.

    A cell's id is looked for first, as nbformat's random ids are all digits about one time in 43 (``19492872``);
    ``[3]`` in brackets is always an index."""
    label = str(cell).strip()
    bracketed = label.startswith("[") and label.endswith("]")
    if not bracketed:
        for i, c in enumerate(nb.cells):
            if c.get("id") == label:
                return i
    number = label[1:-1] if bracketed else label
    if number.isdigit():
        index = int(number)
        if index < len(nb.cells):
            return index
        raise NotebookFileError(f"{where} has {len(nb.cells)} cells ([0] to [{len(nb.cells) - 1}]); there is no "
                                f"cell [{index}]. Use the notebook tool (action=list) to see them.")
    raise NotebookFileError(f"{where} has no cell {label!r}: name a cell by its index as the notebook tool lists it "
                            "('3') or by its id")


def source_of(nb: Any, index: int) -> str:
    return str(nb.cells[index].source)


def replace_source(nb: Any, index: int, source: str) -> str:
    """Put ``source`` in the cell; its old source. A code cell's outputs no longer match it, so they go."""
    cell = nb.cells[index]
    old = str(cell.source)
    cell.source = source
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    return old


def insert(nb: Any, index: int, source: str, cell_type: str = "code") -> Any:
    """A new cell at ``index`` (``len(cells)`` appends); the cell, with its new id."""
    import nbformat.v4

    makers = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}
    if cell_type not in makers:
        raise NotebookFileError(f"cell_type must be code or markdown, got {cell_type!r}")
    cell = makers[cell_type](source)
    nb.cells.insert(index, cell)
    return cell


def new_id() -> str:
    """A cell id as nbformat (and Jupyter) make them."""
    from nbformat.corpus.words import generate_corpus_id

    return str(generate_corpus_id())


def set_outputs(nb: Any, index: int, ran: Ran) -> None:
    """The cell's outputs become what ``ran`` showed, numbered with its count, as Jupyter would have saved them."""
    cell = nb.cells[index]
    cell.outputs = outputs(ran)
    cell.execution_count = ran.count


def outputs(ran: Ran) -> list[Any]:
    """What ``ran`` showed as nbformat outputs (text redacted: a notebook leaves the kernel)."""
    from nbformat.v4 import new_output

    from brute_nb.redact import redact, redact_fragments

    # The stream text is cut where each display came, so the saved cell shows them in the order they happened.
    out = redact_fragments(_cut(ran.stdout, [d.after[0] for d in ran.displays]))
    err = redact_fragments(_cut(ran.stderr, [d.after[1] for d in ran.displays]))
    shown = []
    for i in range(len(ran.displays) + 1):
        for name, parts in (("stdout", out), ("stderr", err)):
            if parts[i]:
                shown.append(new_output("stream", name=name, text=parts[i]))
        if i < len(ran.displays) and (saved := display_output(ran.displays[i])) is not None:
            shown.append(saved)
    for png in ran.images:
        shown.append(new_output("display_data", data={"image/png": base64.b64encode(png).decode("ascii"),
                                                        "text/plain": "<Figure>"}))
    if ran.result is not None:
        shown.append(new_output("execute_result", data={"text/plain": redact(ran.result)}, execution_count=ran.count))
    if ran.error is not None:
        ename, evalue, tb = ran.error
        shown.append(new_output("error", ename=ename, evalue=redact(evalue), traceback=[redact(t) for t in tb]))
    return shown


def _cut(text: str, at: list[int]) -> list[str]:
    """``text`` cut at each of the (ascending) positions ``at``: ``len(at) + 1`` parts."""
    ends = [min(max(p, 0), len(text)) for p in at] + [len(text)]
    parts, start = [], 0
    for end in ends:
        parts.append(text[start:max(start, end)])
        start = max(start, end)
    return parts


def display_output(display: Display) -> Any:
    """A display as a ``display_data`` output, its text redacted; None when nothing in it is a value nbformat takes
    (a text type must hold text, a JSON type JSON)."""
    from nbformat.v4 import new_output

    from brute_nb.redact import redact_value

    data: dict[str, Any] = {}
    for mime, value in display.data.items():
        if JSON_MIME.match(mime):
            if _is_json(value):
                data[mime] = redact_value(value)
        elif isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            data[mime] = value if BINARY.match(mime) else redact_value(value)
    if not data:
        return None
    metadata = redact_value(display.metadata) if _is_json(display.metadata) else {}
    return new_output("display_data", data=data, metadata=metadata)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def transcript(heading: str, cells: list[tuple[str, list[tuple[str, str]]]]) -> str:
    """A notebook of a Markdown ``heading`` then code cells, each ``(source, [(html, plain), ...])`` with those
    outputs (``%brute export --format ipynb``)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    nb = new_notebook(cells=[new_markdown_cell(heading)])
    for source, shown in cells:
        cell = new_code_cell(source)
        cell.outputs = [new_output("display_data", data={"text/html": html, "text/plain": plain})
                        for html, plain in shown]
        nb.cells.append(cell)
    text: str = nbformat.writes(nb)
    return text + "\n"
