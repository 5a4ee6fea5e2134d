"""Structured output: a schema (a pydantic model or a JSON-schema dict) checked, named, and a reply validated
against it. Each API's own request option for it is the provider's (``providers.schema_formats``).

The invariant: a reply is only ever called structured once it validated; a reply that does not validate raises
``StructuredOutputError`` naming every failing field, and the text the model sent stays in the log. A message
records its schema by name only (``meta["schema"]`` = ``"module:QualName"`` or ``"json_schema"``), so sessions stay
plain JSON; ``Message.parsed`` rebuilds the validated object when that class is loaded, else gives the JSON value.

This module imports nothing of ours but the errors and nothing heavy at import (pydantic, pandas and the SDK
helpers load on first use), so ``Message`` can use it without a cycle.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from brute_nb.errors import BruteError

SCHEMA_KEY = "schema"
DICT_SCHEMA = "json_schema"


class StructuredOutputError(BruteError, ValueError):
    """The reply did not match the schema asked for (the message names each field)."""


def is_model(schema: object) -> bool:
    """A pydantic model class (checked without importing pydantic when it is not loaded)."""
    base = getattr(sys.modules.get("pydantic"), "BaseModel", None)
    return isinstance(schema, type) and base is not None and issubclass(schema, base)


def check(schema: object, where: str = "schema") -> Any:
    """``schema`` if usable; a clear error saying what is accepted otherwise (a user's mistake)."""
    if is_model(schema):
        return schema
    if isinstance(schema, Mapping) and schema.get("type") == "object":
        return schema
    raise StructuredOutputError(
        f"{where}: expected a pydantic model class or a JSON-schema dict of type 'object', got {schema!r}. "
        "Wrap a list of records in a model with one list field (the APIs want an object at the top).")


def name_of(schema: Any) -> str:
    """What ``meta["schema"]`` records: where the class lives, or that a dict schema was used."""
    if is_model(schema):
        return f"{schema.__module__}:{schema.__qualname__}"
    return DICT_SCHEMA


def short_name(schema: Any) -> str:
    """The name the APIs get (``^[a-zA-Z0-9_-]{1,64}$``)."""
    raw = schema.__name__ if is_model(schema) else str(schema.get("title") or "response")
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in raw)[:64] or "response"


def validate(schema: Any, text: str) -> Any:
    """The reply validated: the model instance, or the JSON value for a dict schema."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StructuredOutputError(f"the reply is not JSON ({exc}); it starts {text[:80]!r}") from None
    if is_model(schema):
        import pydantic

        try:
            return schema.model_validate(data)
        except pydantic.ValidationError as exc:
            fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']} (got {e.get('input')!r})"
                               for e in exc.errors())
            raise StructuredOutputError(f"the reply does not match {schema.__name__}: {fields}") from None
    problems = _dict_problems(schema, data, "")
    if problems:
        raise StructuredOutputError("the reply does not match the schema: " + "; ".join(problems))
    return data


_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "integer": (int,),
                                       "number": (int, float), "boolean": (bool,), "null": (type(None),)}


def _dict_problems(schema: Mapping[str, Any], value: Any, path: str) -> list[str]:
    """A small check of a dict schema (types, required, properties, items): what a model could get wrong."""
    kind = schema.get("type")
    where = path or "(top)"
    if isinstance(kind, str) and kind in _TYPES:
        ok = isinstance(value, _TYPES[kind]) and not (kind in ("integer", "number") and isinstance(value, bool))
        if not ok:
            return [f"{where}: expected {kind}, got {value!r}"]
    problems: list[str] = []
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        problems += [f"{path + '.' if path else ''}{k}: Field required" for k in schema.get("required") or ()
                     if k not in value]
        for k, sub in props.items():
            if k in value and isinstance(sub, Mapping):
                problems += _dict_problems(sub, value[k], f"{path}.{k}" if path else k)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problems += _dict_problems(schema["items"], item, f"{path}.{i}" if path else str(i))
    return problems


def resolve(name: object) -> Any:
    """The loaded class a ``meta["schema"]`` names, or None (nothing is imported to find it)."""
    if not isinstance(name, str) or ":" not in name:
        return None
    module, _, qualname = name.partition(":")
    target: Any = sys.modules.get(module)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target if is_model(target) else None


def parsed_value(message: Any) -> Any:
    """See ``Message.parsed``: None for an empty reply or (without a schema) text that is not JSON."""
    meta = getattr(message, "meta", None) or {}
    text = getattr(message, "content", "") or ""
    if not text.strip():
        return None
    model = resolve(meta.get(SCHEMA_KEY))
    if model is not None:
        return validate(model, text)
    try:
        return json.loads(text)
    except ValueError:
        if meta.get(SCHEMA_KEY):
            raise StructuredOutputError(f"the structured reply is not JSON; it starts {text[:80]!r}") from None
        return None


def records(value: Any) -> list[Any] | None:
    """The list of records a structured value holds: the value itself, or its one list field."""
    if is_model(type(value)):
        value = value.model_dump(mode="python")
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
    return None


def parsed_frame(message: Any) -> Any:
    """See ``Message.parsed_df``."""
    import pandas as pd

    rows = records(parsed_value(message))
    if rows is None:
        raise StructuredOutputError("parsed_df needs a reply holding a list of records (a list, or an object with "
                                    "one list field); this reply has none")
    return pd.DataFrame([r.model_dump(mode="python") if is_model(type(r)) else r for r in rows])
