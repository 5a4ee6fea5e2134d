"""A row's schema: checked, turned into columns, and, for a provider without structured output, asked for in the
prompt.

OpenAI and Anthropic providers get the schema as their API's own option (``env["schema"]``, see
``brute_nb.structured``), which constrains the reply; any other provider (an llm plugin, a plain callable) is
asked in the prompt, not forced. Either way the reply is validated with pydantic, and one that does not validate is
that row's error (with pydantic's message), never a guessed value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from brute_nb.errors import SettingsError

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n```\s*$", re.DOTALL)


def check(schema: Any) -> None:
    if schema is None:
        return
    if not (isinstance(schema, type) and hasattr(schema, "model_validate_json") and hasattr(schema, "model_fields")):
        raise SettingsError(f"schema= takes a pydantic model class (class Review(BaseModel): ...), got {schema!r}")


def schema_json(schema: Any) -> Any:
    return None if schema is None else schema.model_json_schema()


def instruction(schema: Any) -> str:
    """What is added to each row's prompt."""
    return ("\n\nReply with only a JSON object (no prose, no code fence) that matches this JSON schema:\n"
            + json.dumps(schema_json(schema), ensure_ascii=False))


def fields(schema: Any) -> list[str]:
    return list(schema.model_fields)


def parse(schema: Any, text: str) -> dict[str, Any]:
    """The reply's fields as plain values; raises ValueError with pydantic's account of what is wrong."""
    raw = text.strip()
    fenced = _FENCE.match(raw)
    if fenced:
        raw = fenced.group(1)
    try:
        value = schema.model_validate_json(raw)
    except Exception as exc:  # pydantic's ValidationError: the reply is not the object asked for
        raise ValueError(f"the reply does not match {schema.__name__}: {exc}") from None
    dumped: dict[str, Any] = value.model_dump(mode="json")
    return dumped
