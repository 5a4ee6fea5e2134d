"""A session file's lines as the log's DataFrame, built column-wise without making a ``Message`` a line.

``read_frame(path)`` equals ``brute_nb.frame(read_session(path))`` in about half the time and memory: the fast line
reader (``sessions.lines``) checks the JSON types column-wise a block at a time, and this module gathers only what the
frame keeps (a byte a row for the role, the content strings, one meta dict a row, the rows that have tool calls or a
call id); ``brute_nb.frames`` assembles the columns exactly as for a log. Anything irregular (a torn last line, a
damaged line, a field of the wrong type) is read by ``read_session`` itself, so its warnings and file:line errors are
that reader's. Peak memory stays near 2.5x the file (see ``brute_nb.frames.messages``).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable
from itertools import compress, islice, repeat
from operator import is_, itemgetter, setitem
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from brute_nb.confine import open_named
from brute_nb.frames.arrays import _objects
from brute_nb.frames.messages import _ROLE_CODE, _assemble, _frame_of, _present, _rows, _texts, frame
from brute_nb.frames.meta_columns import LIFTED

if TYPE_CHECKING:
    import pandas as pd


def read_frame(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A session file as ``frame`` shows its messages, the columns built straight from the JSON lines.

    Equal to ``frame(read_session(path))`` without making a ``Message`` a line (about half the time and memory).
    A file with anything irregular (a torn last line, a damaged line, a field of the wrong type) is read by
    ``read_session`` itself, so its warnings and its file:line errors are exactly that reader's.
    """
    from brute_nb.sessions.lines import Irregular, paused_gc

    p = Path(path)
    try:
        with os.fdopen(open_named(p)[0], "rb") as file:  # a regular file only: a FIFO never blocks the cell
            columns = paused_gc(lambda: _file_columns(file))
    except FileNotFoundError:
        return frame([])
    except Irregular:
        from brute_nb.sessions.file import read_session

        return frame(read_session(p))
    return _frame_of(columns)


def _file_columns(file: BinaryIO) -> dict[str, Any]:
    """The columns from checked message dicts, a block of lines at a time (each block's dicts die with it).

    What is gathered across blocks is what the frame keeps: a byte a row for the role, the content strings, one
    meta dict a row, and only the rows that have tool calls or a call id (most have neither). A string that
    repeats from row to row (model, finish reason, tool name) is kept once (``_share``): the rows hold equal
    values, and the parser's copies are freed with their block. The values of the explicit meta columns are read
    here too, while a block's dicts are in the CPU's cache: read from all the metas once the file is parsed,
    each of the nine columns went through memory the size of every meta again.
    """
    import numpy as np

    from brute_nb.sessions.lines import file_blocks

    codes = bytearray()
    contents: list[str | None] = []
    metas: list[dict[str, Any]] = []
    full: list[dict[str, Any]] = []
    gathered: dict[str, list[Any]] = {"meta": [], "calls": [], "call_rows": [], "ids": [], "id_rows": []}
    shared: dict[str, str] = {}
    lifted: dict[str, list[Iterable[Any]]] = {key: [] for key in LIFTED}  # a block at a time, in ``full``'s order
    for roles, texts, calls_, ids, metas_ in file_blocks(file):
        n = len(codes)
        codes += bytes(map(_ROLE_CODE.__getitem__, roles))
        contents += ["" if t is None else t for t in texts] if None in texts else texts
        if present := _present(calls_, n):
            gathered["call_rows"].append(present[0])
            gathered["calls"] += _plain_calls(present[1], shared)
        if present := _present(ids, n):
            gathered["id_rows"].append(present[0])
            gathered["ids"] += present[1]
        flags = list(map(bool, metas_))  # None and {} are both 'no meta'
        if True in flags:
            some = cast("list[dict[str, Any]]", list(compress(metas_, flags)))
            _share(some, shared)
            for key, chunks in lifted.items():
                values = list(map(dict.get, some, repeat(key)))  # a block without the key keeps no list of None
                chunks.append(repeat(None, len(values)) if values.count(None) == len(values) else values)
            gathered["meta"].append(np.flatnonzero(flags) + n)
            full += some
        # the parser's own dicts (nothing else holds them), and a new one a row for None and {} (a frame's rows
        # never share a dict); most lines have a meta, so most blocks are added as they are
        metas += [m or {} for m in metas_] if None in metas_ or {} in metas_ else cast("list[dict[str, Any]]", metas_)
    del shared
    content, chars = _texts(contents, checked=True)
    del contents  # the column holds the strings now; the list's slots need not outlive it
    meta = _objects(metas)
    del metas
    return _assemble(np.frombuffer(codes, dtype=np.int8).copy(), content, chars, meta, full,
                     _rows(gathered["meta"]), (_rows(gathered["call_rows"]), gathered["calls"]),
                     (_rows(gathered["id_rows"]), gathered["ids"]), lifted=lifted)


_SHARED_KEYS = ("provider", "model", "finish_reason", "tool_name")
"""Meta keys whose text repeats from message to message, so the rows can share one string."""


def _share(metas: list[dict[str, Any]], shared: dict[str, str]) -> None:
    """Make equal texts under ``_SHARED_KEYS`` one object (strings are immutable: the values stay equal).

    Each parsed line has its own copy of, say, the model name; 50,000 copies are ~0.1x a session file's size.
    Every loop is in C: a key's values read at once, the metas holding a text picked by ``compress``.
    """
    for key in _SHARED_KEYS:
        values: list[Any] = list(map(dict.get, metas, repeat(key)))
        if values.count(None) == len(values):
            continue  # no meta of this block has the key (or only as null)
        if set(map(type, values)) == {str}:  # the usual case for a reply's keys: every row has it as text
            owners: list[dict[str, Any]] = metas
        else:  # a tool result's name among replies without one
            texts = list(map(is_, map(type, values), repeat(str)))
            owners = list(compress(metas, texts))
            values = list(compress(values, texts))
        deque(map(setitem, owners, repeat(key), map(shared.setdefault, values, values)), maxlen=0)


def _plain_calls(calls: list[list[dict[str, Any]]], shared: dict[str, str]) -> list[list[dict[str, Any]]]:
    """Each row's checked tool-call dicts as ``_call_dict`` shows a ``ToolCall`` (id defaults to '', arguments to
    {}, keys in that order), every loop in C; a name is shared with every other call of that tool."""
    flat = [x for c in calls for x in c]
    get = dict.get
    names = list(map(itemgetter("name"), flat))
    arguments = list(map(get, flat, repeat("arguments")))
    if None in arguments or {} in arguments:
        arguments = [a or {} for a in arguments]  # each call its own dict: editing one never reaches another
    made = iter(list(map(dict, map(zip, repeat(_CALL_KEYS), zip(map(get, flat, repeat("id"), repeat("")),
                                                                 map(shared.setdefault, names, names), arguments,
                                                                 strict=True)))))
    return list(map(list, map(islice, repeat(made), map(len, calls))))


_CALL_KEYS = ("id", "name", "arguments")
