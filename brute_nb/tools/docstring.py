"""A function's tool schema: JSON types from its type hints, texts from its docstring (Google style ``Args:``).

Everything that would make the function unusable as a tool is returned as a list of problems, so ``@tool`` can
refuse it at decoration time with one message.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

SECTION_RE = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$")
ARG_RE = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {param: text})`` from a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    args_indent = 0
    for line in lines:
        header = SECTION_RE.match(line)
        if header:
            section = header.group(1)
            current = None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters") and line.strip():
            match = ARG_RE.match(line.strip())
            if match and (current is None or _indent(line) <= args_indent):
                current, args_indent = match.group(1), _indent(line)
                args[current] = match.group(2).strip()
            elif current is not None:
                args[current] = (args[current] + " " + line.strip()).strip()
    return "\n".join(summary).strip(), args


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def json_type(tp: Any) -> tuple[dict[str, Any] | None, bool]:
    """``(schema, optional)`` for a type hint; schema None when the type cannot be expressed."""
    if tp in SCALARS:
        return {"type": SCALARS[tp]}, False
    if tp is Any:
        return {}, False
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            inner, _ = json_type(rest[0])
            return inner, len(rest) < len(args)
        return None, False
    if origin is Literal:
        kinds = {SCALARS.get(type(a)) for a in args}
        schema: dict[str, Any] = {"enum": list(args)}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema, False
    if tp in (list, tuple, set) or origin in (list, tuple, set):
        schema = {"type": "array"}
        if args and args[0] is not Ellipsis:
            items, _ = json_type(args[0])
            if items is None:
                return None, False
            schema["items"] = items
        return schema, False
    if tp is dict or origin is dict:
        return {"type": "object"}, False
    return None, False


def function_schema(fn: Callable[..., Any]) -> tuple[str, dict[str, Any], list[str]]:
    """``(description, JSON schema object, problems)`` for a function."""
    problems: list[str] = []
    if not callable(fn):
        return "", {"type": "object", "properties": {}}, [f"{fn!r} is not callable"]
    description, docs = parse_docstring(inspect.getdoc(fn))
    try:
        hints = typing.get_type_hints(fn)
    except Exception as exc:  # an unresolvable annotation is the developer's mistake to report, not to crash on
        hints = {}
        problems.append(f"its type hints cannot be resolved: {type(exc).__name__}: {exc}")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            problems.append(f"parameter {p.name!r}: *args, **kwargs and positional-only parameters cannot be "
                            f"tool arguments")
            continue
        if p.name not in hints:
            problems.append(f"parameter {p.name!r} has no type hint (use str, int, float, bool, list[...], "
                            f"Literal[...] or Optional[...])")
            continue
        schema, _ = json_type(hints[p.name])
        if schema is None:
            problems.append(f"parameter {p.name!r}: type {hints[p.name]!r} cannot be a JSON tool argument")
            continue
        if docs.get(p.name):
            schema["description"] = docs[p.name]
        properties[p.name] = schema
        if p.default is p.empty:
            required.append(p.name)
    extra = sorted(set(docs) - set(inspect.signature(fn).parameters))
    problems += [f"the docstring documents {k!r}, which is not a parameter" for k in extra]
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return description, out, problems
