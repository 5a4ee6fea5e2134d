"""A function's tool schema: JSON types from its type hints (pydantic's ``TypeAdapter``), texts from its docstring
(``docstring_parser``: Google, NumPy, reST and Epydoc styles).

Everything that would make the function unusable as a tool is returned as a list of problems, so ``@tool`` can
refuse it at decoration time with one message. A schema is sent to models whole: pydantic's ``$ref``s are inlined
and its ``title``s dropped, and ``Optional[X]`` is X, not required when it has a default. Arguments of a rich type
(a pydantic model, a dataclass, a TypedDict: anything pydantic describes with a ``$ref``) reach the function as
that type, built by the same ``TypeAdapter``; plain JSON values are passed as the model sent them (``typed``).
pydantic and docstring_parser are imported when the first tool is defined, never at ``%load_ext``.
"""

from __future__ import annotations

import inspect
import textwrap
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Union

ARGS_HEADERS = ("Args", "Arguments", "Parameters", "Params")
SUPPORTED = "str, int, float, bool, list[...], dict, Literal[...], Optional[...], a pydantic model or a dataclass"


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {param: text})`` from a docstring in any style docstring_parser reads."""
    if not doc:
        return "", {}
    import docstring_parser

    text = inspect.cleandoc(doc)
    first, _, rest = text.partition("\n")
    if first.strip().rstrip(":") in ARGS_HEADERS:
        # A docstring opening with its "Args:" section (on the quotes' line): its entries belong under the header,
        # so they are indented under it and parse as arguments, not as the summary. Indented here rather than kept
        # as written because Python 3.13 strips a docstring's indentation at compile time (as cleandoc does).
        text = f"\n{first}\n{textwrap.indent(rest, '    ')}"
    parsed = docstring_parser.parse(text)
    args = {p.arg_name: " ".join((p.description or "").split()) for p in parsed.params}
    return (parsed.description or "").strip(), args


def json_type(tp: Any) -> tuple[dict[str, Any] | None, bool]:
    """``(schema, optional)`` for a type hint; schema None when the type cannot be expressed."""
    from pydantic import TypeAdapter

    optional = False
    if typing.get_origin(tp) in (Union, types.UnionType) and type(None) in typing.get_args(tp):
        rest = [a for a in typing.get_args(tp) if a is not type(None)]
        tp, optional = (rest[0] if len(rest) == 1 else Union[tuple(rest)]), True  # noqa: UP007 - built at run time
    if tp is object:
        return None, optional  # "anything" is Any; a bare object is a hint that says nothing a model could send
    try:
        schema = TypeAdapter(tp).json_schema()
    except Exception as exc:  # pydantic cannot describe it (an arbitrary class): reported as a definition problem
        raise _Unsupported(str(exc).split("\n", 1)[0]) from None
    inlined = _inline(schema, schema.get("$defs", {}), ())
    return inlined, optional


def _inline(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    """``node`` with every ``$ref`` replaced by its definition, pydantic's ``title``s and spelled-out defaults
    (``items: {}``, ``additionalProperties: true``) dropped, and ``const`` as a one-value ``enum`` (which
    ``schema.validate`` checks)."""
    if isinstance(node, list):
        return [_inline(v, defs, seen) for v in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            raise _Recursive(name)
        return _inline({**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}, defs, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$defs", "title") or (key, value) in (("items", {}), ("additionalProperties", True)):
            continue
        if key == "const":
            out["enum"] = [value]
            continue
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {k: _inline(v, defs, seen) for k, v in value.items()}  # a property may be named "title"
        else:
            out[key] = _inline(value, defs, seen)
    return out


class _Recursive(Exception):
    """A type that refers to itself cannot be inlined into one schema."""


class _Unsupported(Exception):
    """pydantic cannot describe the type; the message is pydantic's first line."""


def function_schema(fn: Callable[..., Any]) -> tuple[str, dict[str, Any], list[str]]:
    """``(description, JSON schema object, problems)`` for a function."""
    problems: list[str] = []
    if not callable(fn):
        return "", {"type": "object", "properties": {}}, [f"{fn!r} is not callable"]
    raw = getattr(fn, "__doc__", None)
    description, docs = parse_docstring(raw if isinstance(raw, str) else inspect.getdoc(fn))
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
            problems.append(f"parameter {p.name!r} has no type hint (use {SUPPORTED})")
            continue
        try:
            schema, _ = json_type(hints[p.name])
        except _Recursive as exc:
            problems.append(f"parameter {p.name!r}: type {hints[p.name]!r} refers to itself ({exc}), which one "
                            "JSON tool argument cannot describe")
            continue
        except _Unsupported as exc:
            problems.append(f"parameter {p.name!r}: type {hints[p.name]!r} cannot be a JSON tool argument "
                            f"(use {SUPPORTED}; pydantic says: {exc})")
            continue
        if schema is None:
            problems.append(f"parameter {p.name!r}: type {hints[p.name]!r} cannot be a JSON tool argument "
                            f"(use {SUPPORTED})")
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


PLAIN = (str, int, float, bool, list, tuple, set, frozenset, dict, type(None))


def _plain(tp: Any) -> bool:
    """Whether a value of this hint is just the JSON the model sent (no class to build)."""
    if tp is Any or tp in PLAIN:
        return True
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return True
    if origin in (Union, types.UnionType) or origin in PLAIN:
        return all(a is Ellipsis or _plain(a) for a in typing.get_args(tp))
    return False


def typed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, or a wrapper of the same kind (sync or async) that first builds the arguments of a rich type (a
    pydantic model, a dataclass, a TypedDict) from the JSON the model sent, with pydantic's ``TypeAdapter``."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return fn
    rich = {name: hints[name] for name in inspect.signature(fn).parameters
            if name in hints and hints[name] is not object and not _plain(hints[name])}
    if not rich:
        return fn
    from pydantic import TypeAdapter

    builders = {name: TypeAdapter(tp).validate_python for name, tp in rich.items()}

    def build(arguments: dict[str, Any]) -> dict[str, Any]:
        return {k: builders[k](v) if k in builders else v for k, v in arguments.items()}

    if inspect.iscoroutinefunction(fn):
        async def call_async(**arguments: Any) -> Any:
            return await fn(**build(arguments))

        return call_async

    def call(**arguments: Any) -> Any:
        return fn(**build(arguments))

    return call
