"""Fast reading of a session file's JSONL: orjson per line, the JSON types checked column-wise, no per-field Python.

The invariant: a fast reader returns exactly what the strict reader (``sessions.file._parse`` over
``Message.from_dict``) would make of the same bytes, or ``None``, and the caller then runs the strict reader,
which accepts the line or names its file:line. So the fast path never words an error and never accepts a line the
strict one refuses. Anything unusual takes the strict path: a blank line, a torn or non-UTF-8 line, ``NaN``, an
integer beyond 64 bits, a role not in lower case, an unknown field, tool-call arguments given as JSON text.

Lines are parsed a block (~64 KiB) at a time, so the parsed dicts of one block are dropped before the next is read:
a frame keeps only the values it shows, and peak memory stays near the file's size plus those values.
"""

from __future__ import annotations

import dataclasses
import gc
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice, repeat
from operator import itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import orjson

from brute_nb.message import _EMPTY_META, ROLES, Message, Role, ToolCall
from brute_nb.message import FIELDS as MESSAGE_FIELDS

if TYPE_CHECKING:
    from brute_nb.sendable import ReadCheck

FIELDS = frozenset({"role", "content", "tool_calls", "tool_call_id", "meta"})
CALL_FIELDS = frozenset({"id", "name", "arguments"})
BLOCK = 1 << 16
"""Bytes parsed at a time (whole lines): small enough that a block's dicts are a small part of peak memory, and
that what they parse to (~4x the bytes) stays in a core's L2 cache while the column passes go over it again and
again (measured on the realistic 50,000-message file: 7-9% less a parse than at 256 KiB, where each pass missed)."""

_ROLE: dict[str, Role] = {r: Role(r) for r in ROLES}
_NONE = type(None)
T = TypeVar("T")
_TEXT_OR_NONE = frozenset({str, _NONE})
_META_OR_NONE = frozenset({dict, _NONE})


# Every byte as what it can be in a number: a digit is "0", what may come before a number ":", a minus "-", the
# rest "x". An integer of 20 digits (or a minus and 19) then shows as ":" + "0" * 20 (":-" + "0" * 19); digits
# inside a string (an id in hex) follow a quote or a letter, so they do not (a rare false alarm is only slower).
_SHAPE = bytes((b"0" if chr(i).isdigit() and i < 128 else b":" if i in b":[, \t\r\n" else b"-" if i == ord("-")
                else b"x")[0] for i in range(256))
_LONG = b":" + b"0" * 20
_LONG_NEGATIVE = b":-" + b"0" * 19


class Irregular(Exception):
    """The bytes need the strict reader (which accepts them or names the line); never leaves this package."""


Fields = tuple[list[str], list[str | None], list[list[dict[str, Any]] | None], list[str | None],
               list[dict[str, Any] | None]]
"""role, content, tool_calls, tool_call_id and meta of a block of lines, one list a field (None where absent)."""


def blocks(data: bytes, size: int = BLOCK) -> Iterator[Fields]:
    """The lines of ``data`` as checked fields, a block of whole lines at a time; ``Irregular`` if any line is
    not exactly what ``Message.to_json`` writes (JSON types included)."""
    start, end = 0, len(data)
    if data.endswith(b"\n"):
        end -= 1  # the last line's newline; a second one would be a blank line: irregular
    while start < end:
        stop = data.find(b"\n", start + size, end)
        stop = end if stop < 0 else stop
        yield block(data[start:stop])
        start = stop + 1


def file_blocks(file: BinaryIO, size: int = BLOCK) -> Iterator[Fields]:
    """As ``blocks``, reading ``file`` a block at a time, so the whole file is never in memory at once."""
    rest = b""
    while chunk := file.read(size):
        buffer = rest + chunk
        cut = buffer.rfind(b"\n")
        if cut < 0:
            rest = buffer
            continue
        yield block(buffer[:cut])
        rest = buffer[cut + 1:]
    if rest:
        yield block(rest)


def block(lines: bytes) -> Fields:
    """Checked fields of whole lines (no final newline); a blank line is ``Irregular``."""
    shape = lines.translate(_SHAPE)
    if _LONG in shape or _LONG_NEGATIVE in shape:
        raise Irregular  # orjson reads an integer past 64 bits as a float; json (the strict reader) keeps it exact
    loads = orjson.loads
    try:
        return fields([loads(line) for line in lines.split(b"\n")])
    except orjson.JSONDecodeError:
        raise Irregular from None


def fields(dicts: list[Any]) -> Fields:
    """The fields of message dicts, one list each; ``Irregular`` unless every value has the JSON type
    ``to_dict`` writes. Checked column-wise (set operations over the lists), not by a Python loop per field.

    Each pass over a block's values costs a cache miss a value, so no pass only asks a type that a later one
    finds wrong anyway: a line that is no JSON object fails the key union (a number, null) or ``dict.get`` (an
    array or a text of field names), and a role that is not one of the four texts fails ``set`` (a list, an object)
    or the comparison with them (any other value: no JSON number or ``null`` equals a text); both as ``TypeError``.
    """
    try:
        if not set().union(*dicts) <= FIELDS:
            raise Irregular
        get = dict.get
        roles: list[Any] = list(map(get, dicts, repeat("role")))
        contents: list[Any] = list(map(get, dicts, repeat("content")))
        calls: list[Any] = list(map(get, dicts, repeat("tool_calls")))
        call_ids: list[Any] = list(map(get, dicts, repeat("tool_call_id")))
        metas: list[Any] = list(map(get, dicts, repeat("meta")))
        if (not set(roles) <= _ROLE.keys() or not set(map(type, contents)) <= _TEXT_OR_NONE
                or not set(map(type, call_ids)) <= _TEXT_OR_NONE or not set(map(type, metas)) <= _META_OR_NONE):
            raise Irregular
    except TypeError:
        raise Irregular from None
    present = [c for c in calls if c is not None]
    if present:
        if set(map(type, present)) != {list}:
            raise Irregular
        _check_calls([x for c in present for x in c])
    return roles, contents, calls, call_ids, metas


def _check_calls(calls: list[Any]) -> None:
    if not calls:
        return
    if set(map(type, calls)) != {dict} or not set().union(*calls) <= CALL_FIELDS:
        raise Irregular
    get = dict.get
    names = list(map(get, calls, repeat("name")))
    if (set(map(type, map(get, calls, repeat("id"), repeat("")))) != {str} or set(map(type, names)) != {str}
            or "" in names):
        raise Irregular
    if not set(map(type, map(get, calls, repeat("arguments")))) <= _META_OR_NONE:
        raise Irregular  # arguments as JSON text: ToolCall parses it, the strict path keeps that in one place


# What the permanent generation held when this module was imported: the interpreter's own (CPython 3.12 starts with
# a few hundred objects there, 3.11 and 3.13 with none), not a program's gc.freeze(), which adds thousands later.
_INTERPRETER_FROZEN = gc.get_freeze_count()


def paused_gc(fn: Callable[[], T]) -> T:
    """Run ``fn`` with the cyclic collector paused: parsing makes many containers and no cycle, so the
    collector's repeated passes over them would find nothing.

    What ``fn`` made and keeps (a session's messages) then goes straight to the oldest generation: left in the
    youngest, the next two young collections would each walk every one of them (~0.1-0.2 s for 50,000 messages,
    in the first turn of a kernel) to find nothing. The young generations are collected first, so only what was
    made meanwhile is moved, nothing that could already be garbage.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        if enabled:
            gc.collect(1)
        result = fn()
    finally:
        if enabled:
            gc.enable()
    if enabled and gc.get_freeze_count() <= _INTERPRETER_FROZEN:  # a program that froze objects keeps them frozen
        gc.freeze()  # every tracked object to the permanent generation, then all of it back to the oldest
        gc.unfreeze()
    return result


def parse_messages(data: bytes, check: ReadCheck | None = None) -> list[Message] | None:
    """Every line as a ``Message``, equal to the strict reader's; ``None`` when the strict reader must decide.

    ``check`` (``sendable.ReadCheck``) is fed each block's messages as they are made, while they are in the CPU's
    cache, so that a caller who will send them need not walk them again; it is left half fed when the answer is
    ``None`` (``SessionFile`` then tells it so).
    """
    try:
        return paused_gc(lambda: _parsed(data, check))
    except Irregular:
        return None


def _parsed(data: bytes, check: ReadCheck | None) -> list[Message]:
    out: list[Message] = []
    for fields_ in blocks(data):
        made = messages(fields_)
        if check is not None:
            check.add(made)
        out += made
    return out


def messages(block: Fields) -> list[Message]:
    """Messages from checked fields, equal to what the constructor makes of them, built column-wise.

    ``fields`` has checked every JSON type, so the constructor's checks could only pass: each field is set straight
    into its slot for the whole block at once (``_filled``), with no Python call a message. What the constructor
    would still change is changed here the same way: a role text becomes its ``Role``, a null content ``""``, the
    tool calls a tuple of ``ToolCall`` (id ``""`` and arguments ``{}`` when absent), an empty or absent meta the
    shared empty one. A meta dict is the parser's own, so it is wrapped, not copied (the constructor copies a
    caller's dict).
    """
    roles, contents, calls, call_ids, metas = block
    n = len(roles)
    present = [c for c in calls if c is not None]
    if present:
        made = iter(_tool_calls([x for c in present for x in c]))
        groups = iter(list(map(tuple, map(islice, repeat(made), map(len, present)))))
        tool_calls: list[tuple[ToolCall, ...] | None] | repeat[None] = [
            None if c is None else next(groups) for c in calls]
    else:
        tool_calls = repeat(None)
    proxy, empty = MappingProxyType, _EMPTY_META
    return _filled(Message, n, {
        "role": map(_ROLE.__getitem__, roles),
        "content": ["" if c is None else c for c in contents] if None in contents else contents,
        "tool_calls": tool_calls,
        "tool_call_id": call_ids,
        "attachments": repeat(()),  # a line naming attachments has a field ``FIELDS`` lacks: the strict path
        "meta": [proxy(m) if m else empty for m in metas],
    })


def _tool_calls(calls: list[dict[str, Any]]) -> list[ToolCall]:
    """Checked tool-call dicts as ``ToolCall``s, as ``ToolCall.coerce`` makes them (each absent arguments its own
    ``{}``: a ``ToolCall``'s arguments are a dict a tool may change)."""
    get = dict.get
    arguments = list(map(get, calls, repeat("arguments")))
    if None in arguments:
        arguments = [{} if a is None else a for a in arguments]
    return _filled(ToolCall, len(calls), {"id": map(get, calls, repeat("id"), repeat("")),
                                         "name": map(itemgetter("name"), calls), "arguments": arguments})


_SLOTS: dict[type, dict[str, Callable[[Any, Any], None]]] = {
    cls: {name: cls.__dict__[name].__set__ for name in names}
    for cls, names in ((Message, [f.name for f in MESSAGE_FIELDS]),
                       (ToolCall, [f.name for f in dataclasses.fields(ToolCall)]))}
"""Each class's slot setters (C functions), for every field it declares: ``_filled`` sets them all or fails."""


def _filled(cls: type[T], n: int, columns: dict[str, Any]) -> list[T]:
    """``n`` new ``cls`` values (frozen, slotted dataclasses) with their slots set from ``columns``, one iterable of
    ``n`` values a field, every loop in C. ``KeyError`` if a field has no column, so a field added to the class
    cannot be left unset here."""
    made = list(map(object.__new__, repeat(cls, n)))
    for name, setter in _SLOTS[cls].items():
        deque(map(setter, made, columns[name]), maxlen=0)
    return made
