"""Each API's structured-output request option for a schema (``Profile.structured_output`` names the field): the
strict JSON schema the OpenAI APIs take, and Anthropic's ``output_config`` as its SDK shapes it. The SDKs' helpers
are imported on first use, by the provider that sends the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from brute_nb.structured import is_model, short_name


def json_schema(schema: Any) -> dict[str, Any]:
    """The JSON schema in the strict form the APIs require: every object closed, every property required."""
    if is_model(schema):
        from openai.lib._pydantic import to_strict_json_schema

        strict: dict[str, Any] = to_strict_json_schema(schema)
        return strict
    closed: dict[str, Any] = _closed(dict(schema))
    return closed


def _closed(node: Any) -> Any:
    if isinstance(node, list):
        return [_closed(x) for x in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: _closed(v) for k, v in node.items()}
    if out.get("type") == "object":
        out.setdefault("additionalProperties", False)
        out.setdefault("required", list(out.get("properties") or {}))
    return out


def chat_format(schema: Any) -> dict[str, Any]:
    """Chat Completions' ``response_format``."""
    return {"type": "json_schema",
            "json_schema": {"name": short_name(schema), "schema": json_schema(schema), "strict": True}}


def responses_format(schema: Any) -> dict[str, Any]:
    """The Responses API's ``text`` parameter."""
    return {"format": {"type": "json_schema", "name": short_name(schema), "schema": json_schema(schema),
                       "strict": True}}


def messages_format(schema: Any) -> dict[str, Any]:
    """Anthropic's ``output_config``, its schema shaped as the SDK's own ``output_format=`` helper shapes it (objects
    closed; optional fields may stay optional; unsupported constraints moved into descriptions)."""
    from anthropic.lib._parse._transform import transform_schema

    shaped: dict[str, Any] = transform_schema(schema if is_model(schema) else dict(schema))
    return {"format": {"type": "json_schema", "schema": shaped}}
