"""Hostile cases: notebooks (see the package docstring).

A saved ``.ipynb`` is read by the notebook tool, the cell tools and a proposal's check of the cell below (through
``cell_tools.saved``, which waits out a Jupyter save under way). The file comes from the user, a collaborator's
commit or a save cut short, so it may be anything. ``case.data`` is the file's bytes. Tags say what it is:

- ``not-json``: no notebook at all (the lines table's damaged JSON, as a whole file);
- ``shape``: JSON, but not a notebook's shape in some part (nbformat refuses it; a reader must not crash on it);
- ``cut``: a save cut half-way; with Jupyter's ``.~name`` copy beside it, a save that never ends;
- ``valid``: a notebook nbformat accepts, with hostile text in it: read and edited like any other.

Every reader either reads it or says the file is not a valid notebook, naming it; an edit never rewrites it.
"""

from __future__ import annotations

import json
from typing import Any

from tests.security.hostile.case import Case
from tests.security.hostile.lines import LINES

NOT_JSON = frozenset({"not-json"})
SHAPE = frozenset({"shape"})
CUT = frozenset({"cut"})
VALID = frozenset({"valid"})

CELL = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "source": "print(1)", "outputs": []}


def notebook(cells: Any, **extra: Any) -> bytes:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **extra}).encode()


def _cell(**changes: Any) -> bytes:
    return notebook([{**CELL, **changes}])


WHOLE = notebook([CELL, {**CELL, "id": "c2", "source": "print(2)"}])
"""A good notebook, for a test to cut or to compare with."""

_DAMAGED = {"not-json", "not-utf8", "bom", "json-array", "json-string", "deep-nesting", "huge-integer"}

NOTEBOOKS: tuple[Case, ...] = (
    *(Case(f"ipynb-{c.id}", c.data.raw, f"a notebook file that is {c.expect.split(': ', 1)[-1]}", NOT_JSON)
      for c in LINES if c.id in _DAMAGED),
    Case("ipynb-empty", b"", "an empty file (a save that wrote nothing yet)", NOT_JSON),
    Case("ipynb-cells-text", notebook("print(1)"), "cells that are text, not a list", SHAPE),
    Case("ipynb-cells-object", notebook({"0": CELL}), "cells that are an object", SHAPE),
    Case("ipynb-cell-number", notebook([1, CELL]), "a cell that is a number", SHAPE),
    Case("ipynb-source-number", _cell(source=42), "a cell whose source is a number", SHAPE),
    Case("ipynb-source-list-of-numbers", _cell(source=[1, 2]), "source lines that are numbers", SHAPE),
    Case("ipynb-outputs-object", _cell(outputs={"output_type": "stream"}), "outputs that are an object", SHAPE),
    Case("ipynb-output-text", _cell(outputs=["hello"]), "an output that is text", SHAPE),
    Case("ipynb-traceback-text", _cell(outputs=[{"output_type": "error", "ename": "E", "evalue": "v",
                                                 "traceback": "Traceback..."}]), "a traceback that is text", SHAPE),
    Case("ipynb-stream-numbers", _cell(outputs=[{"output_type": "stream", "name": "stdout", "text": [1, 2]}]),
         "stream text that is numbers", SHAPE),
    Case("ipynb-data-list", _cell(outputs=[{"output_type": "display_data", "data": ["text/plain"],
                                           "metadata": {}}]), "display data that is a list", SHAPE),
    Case("ipynb-version-text", notebook([CELL], nbformat="four"), "an nbformat version that is text", SHAPE),
    Case("ipynb-version-99", notebook([CELL], nbformat=99), "an nbformat no reader knows", SHAPE),
    Case("ipynb-no-cells", json.dumps({"metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode(),
         "no cells at all", SHAPE),
    Case("ipynb-markup-source", _cell(source="<script>alert(1)</script>\x1b[31m"), "markup and escapes in a cell",
         VALID),
    Case("ipynb-cut", WHOLE[: len(WHOLE) // 2], "a save cut half-way: refused once the wait for the save ends", CUT),
)
