"""Filling a prompt from a namespace: ``{expr}`` fields and the bounded text of a value.

A ``%%brute`` cell is filled from the kernel's namespace and a map's template from each row, by these same rules, so
it lives in the core, below both (``map`` imports nothing of the notebook).

The invariant: quoting code in a prompt never runs it. A field is read as a reference (a name, attributes,
literal subscripts) without evaluating any code of the prompt, unless the user opts in (``%%brute --eval``);
whatever cannot be filled stays exactly as written. Every value becomes bounded text (``summarize_value``), which
the kernel tools (``python``, ``Err``) reuse so a DataFrame reads the same wherever the model sees it.
Stdlib only at import: ``%load_ext`` imports it with the magics.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Callable
from typing import Any

SUMMARY_ROWS = 5
FILL_CAP = 10_000
"""Characters one ``{expr}`` may put into a prompt."""
CONVERSIONS: dict[str, Callable[[Any], str]] = {"r": repr, "s": str, "a": ascii}


def summarize_value(value: Any) -> str:
    """A bounded text form of a value put in a prompt: DataFrames and arrays as shape, dtypes and a few rows."""
    kind = type(value).__module__.split(".")[0]
    if kind == "pandas" and hasattr(value, "shape") and hasattr(value, "head"):
        dtypes: Any = getattr(value, "dtypes", None)
        types = dtypes.to_string() if hasattr(dtypes, "to_string") else str(dtypes)
        return (f"<{type(value).__name__} shape={value.shape}>\ndtypes:\n{types}\n"
                f"first {SUMMARY_ROWS} rows:\n{value.head(SUMMARY_ROWS).to_string()}")
    if kind == "numpy" and hasattr(value, "shape"):
        import numpy as np

        with np.printoptions(threshold=50, edgeitems=3):
            return f"<ndarray shape={value.shape} dtype={value.dtype}>\n{value!s}"
    text = str(value)  # {In[3]}, {Out[3]}, {_}: a prompt gets a bounded piece of a huge value
    return text if len(text) <= FILL_CAP else text[:FILL_CAP] + f"\n[... {len(text) - FILL_CAP:,} more characters]"


def expand(template: str, namespace: dict[str, Any], found: list[Any] | None = None, *,
           calls: bool = False) -> str:
    """Fill ``{expr}`` from the user's namespace (``!r``/``!s``/``!a`` and ``:spec`` work as in ``str.format``).

    A prompt is often about code, and quoting code must never run it: a field is filled only when it is a name
    followed by attributes and literal subscripts (``{df}``, ``{df.shape}``, ``{cfg["lr"]}``, ``{xs[0]}``). Calls,
    operators and everything else are left exactly as written, as are literals (a JSON object, a set) and names
    that are missing. Attribute access may run a property (``df.shape`` is one), but dunder names are refused.
    ``calls=True`` (``%%brute --eval``) is the explicit opt-in to evaluate any expression. With a ``found`` list,
    a figure or an image (``{fig}``, ``{Out[7]}``) goes into it, to be attached, instead of its repr.
    """
    out = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return template  # unbalanced braces: a prompt about code, not a template
    for literal, field, spec, conv in parsed:
        out.append(literal)
        if field is None:
            continue
        original = "{" + field + (("!" + conv) if conv else "") + ((":" + spec) if spec else "") + "}"
        out.append(_fill(field, spec, conv, namespace, original, calls, found))
    return "".join(out)


class _NotAllowed(Exception):
    """A field that is not a plain reference (a call, an operator, a dunder): it stays text."""


_MISSING = object()


def _reference(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """The value of a name/attribute/literal-subscript chain, read without evaluating any code of the prompt."""
    if isinstance(node, ast.Name):
        if node.id.startswith("__"):
            raise _NotAllowed(node.id)
        value = namespace.get(node.id, _MISSING)
        if value is _MISSING:
            raise _NotAllowed(node.id)
        return value
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("__"):
            raise _NotAllowed(node.attr)
        return getattr(_reference(node.value, namespace), node.attr)
    if isinstance(node, ast.Subscript):
        return _reference(node.value, namespace)[_literal_key(node.slice)]
    raise _NotAllowed(type(node).__name__)


def _literal_key(node: ast.expr) -> Any:
    if isinstance(node, ast.Slice):
        parts = [None if p is None else _literal_key(p) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)
    if isinstance(node, ast.Tuple):
        return tuple(_literal_key(e) for e in node.elts)
    try:
        return ast.literal_eval(node)  # constants, negative numbers, tuples: data, never code
    except ValueError:
        raise _NotAllowed(type(node).__name__) from None


def _fill(field: str, spec: str | None, conv: str | None, namespace: dict[str, Any], original: str,
          calls: bool = False, found: list[Any] | None = None) -> str:
    try:
        tree = ast.parse(field.strip(), "<prompt>", "eval")
        if calls:
            code = compile(tree, "<prompt>", "eval")
            if not code.co_names:
                return original  # a literal such as {"a": 1} or {1, 2}: text, not a template field
            value = eval(code, namespace)  # opted in with --eval: the user's expression in the user's kernel
        else:
            value = _reference(tree.body, namespace)
        if found is not None and not conv and not spec and _attachable(value):
            from brute_nb.attachments import attachment

            found.append(attachment(value, name=f"{field.strip()}.png"))
            return f"[attached image: {field.strip()}]"
        if conv:
            value = CONVERSIONS[conv](value)
        return format(value, spec) if spec else (value if conv else summarize_value(value))
    except Exception:
        return original


def _attachable(value: Any) -> bool:
    from brute_nb.attachments import is_attachable

    return is_attachable(value)
