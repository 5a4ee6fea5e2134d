"""Parameter schemas: Brute's flat ``{key: {type, desc, required}}`` form, the JSON schema sent to models, and
the argument check every declared tool gets.

``validate`` is lenient where models are sloppy and strict where it matters: ``"5"`` is accepted for an integer
and ``"false"`` for a boolean (Brute took any string as true), an explicit ``null`` for an optional parameter
means "not given", and unknown keys or missing required ones are refused with one message naming them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from brute_nb.errors import ToolArgumentError
from brute_nb.message import JSON

TYPES = ("string", "integer", "number", "boolean", "array", "object")
PARAM_KEYS = {"type", "desc", "description", "required", "enum", "items", "properties", "default"}


def param_problems(name: str, spec: object) -> list[str]:
    """What is wrong with one flat parameter definition (empty when it is fine)."""
    if not isinstance(spec, Mapping):
        return [f"param {name!r} must be a dict like {{'type': 'string', 'desc': ..., 'required': True}}"]
    problems = []
    if spec.get("type") not in TYPES:
        problems.append(f"param {name!r} has type {spec.get('type')!r}; use one of {', '.join(TYPES)}")
    unknown = set(spec) - PARAM_KEYS
    if unknown:
        problems.append(f"param {name!r} has unknown keys {sorted(unknown)} (allowed: {sorted(PARAM_KEYS)})")
    if "required" in spec and not isinstance(spec["required"], bool):
        problems.append(f"param {name!r}: required must be True or False")
    return problems


def split_params(params: Any) -> tuple[Mapping[str, Any], Mapping[str, Any] | None]:
    """``(flat, schema)``: ``params`` may be Brute's flat dict or (like Ruby's ``params({...})``) a raw JSON schema
    object. ``"type": "object"`` tells them apart: in the flat form every value is a dict, never a string."""
    if isinstance(params, Mapping) and params.get("type") == "object":
        return {}, params
    return params if params is not None else {}, None


def schema_problems(schema: object) -> list[str]:
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return ["a raw params schema must be a JSON schema object: {'type': 'object', 'properties': {...}}"]
    if not isinstance(schema.get("properties", {}), Mapping):
        return ["a raw params schema's 'properties' must be a dict"]
    return []


def to_schema(params: Mapping[str, Mapping[str, Any]]) -> dict[str, JSON]:
    """Flat params -> JSON schema object (what ``Adapter.to_dict()["parameters"]`` holds)."""
    properties: dict[str, JSON] = {}
    for key, spec in params.items():
        prop: dict[str, JSON] = {"type": spec["type"]}
        desc = spec.get("desc", spec.get("description"))
        if desc:
            prop["description"] = desc
        for extra in ("enum", "items", "properties", "default"):
            if extra in spec:
                prop[extra] = spec[extra]
        properties[key] = prop
    required = [k for k, spec in params.items() if spec.get("required")]
    schema: dict[str, JSON] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def to_flat(schema: Mapping[str, JSON]) -> dict[str, dict[str, JSON]]:
    """JSON schema object -> Brute's flat ``{key: {type, desc, required}}`` view."""
    required = set(schema.get("required", ()))
    out = {}
    for key, prop in (schema.get("properties") or {}).items():
        out[key] = {"type": prop.get("type", "string"), "desc": prop.get("description", ""),
                    "required": key in required}
    return out


def validate(schema: Mapping[str, JSON], arguments: Mapping[str, JSON]) -> dict[str, JSON]:
    """Check (and gently coerce) arguments against a schema object; raise ToolArgumentError naming every problem."""
    problems: list[str] = []
    value = _check(schema, dict(arguments), "arguments", problems, top=True)
    if problems:
        raise ToolArgumentError("invalid arguments: " + "; ".join(problems))
    return value  # type: ignore[no-any-return]


def _check(schema: Mapping[str, JSON], value: JSON, where: str, problems: list[str], top: bool = False) -> JSON:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is not None:
        value, ok = _coerce(kind, value)
        if not ok:
            problems.append(f"'{where}' must be {_article(kind)}, got {type(value).__name__} {_short(value)}")
            return value
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"'{where}' must be one of {schema['enum']}, got {_short(value)}")
    if kind == "object" and isinstance(value, dict):
        value = _check_object(schema, value, where, problems, top)
    elif kind == "array" and isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        value = [_check(schema["items"], v, f"{where}[{i}]", problems) for i, v in enumerate(value)]
    return value


def _check_object(schema: Mapping[str, JSON], value: dict[str, JSON], where: str, problems: list[str],
                  top: bool) -> dict[str, JSON]:
    props: Mapping[str, JSON] = schema.get("properties") or {}
    required = list(schema.get("required", ()))
    value = {k: v for k, v in value.items() if not (v is None and k not in required)}
    prefix = "" if top else f"{where}."
    missing = [k for k in required if k not in value]
    if missing:
        problems.append("missing required " + ", ".join(f"'{prefix}{k}'" for k in missing))
    # Unknown keys are refused at the top level (Brute's keyword check) and where a schema says so.
    if schema.get("additionalProperties", not top) is False:
        unknown = [k for k in value if k not in props]
        if unknown:
            problems.append("unknown " + ", ".join(f"'{prefix}{k}'" for k in unknown)
                            + f" (expected: {', '.join(props) or 'no arguments'})")
    for key, sub in props.items():
        if key in value and isinstance(sub, Mapping):
            value[key] = _check(sub, value[key], f"{prefix}{key}", problems)
    return value


def _coerce(kind: str, value: JSON) -> tuple[JSON, bool]:
    if kind == "string":
        return value, isinstance(value, str)
    if kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true", True
        return value, isinstance(value, bool)
    if kind == "integer":
        if isinstance(value, str):
            try:
                return int(value.strip()), True
            except ValueError:
                return value, False
        if isinstance(value, float) and value.is_integer():
            return int(value), True
        return value, isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        if isinstance(value, str):
            try:
                return float(value.strip()), True
            except ValueError:
                return value, False
        return value, isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "array":
        return value, isinstance(value, list)
    if kind == "object":
        return value, isinstance(value, dict)
    return value, True


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _short(value: JSON, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
