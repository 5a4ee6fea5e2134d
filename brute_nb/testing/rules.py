"""The request rules the real OpenAI and Anthropic APIs enforce, as checks the fake provider runs.

Each function takes a request body (the JSON an SDK sent) and returns the list of problems, worded like the real
API's 400 errors, empty when the request is valid. The invariant they guard is the one every provider shares:
every tool call is answered before the conversation goes on, and every answer belongs to a call.
Tool-call ids must be non-empty and unique in a request, and Anthropic refuses whitespace-only text blocks.
``request_problems(api, body)`` runs the same checks without a server (tests validate a built request with it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from brute_nb.testing import rules_content, rules_tools

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def _tool_problems(tools: Any, schema_key: str, wrapped: bool, server: Any = None) -> list[str]:
    """Function tools' names and schemas; ``server(i, tool)`` checks a provider's own tool (None: not one)."""
    problems: list[str] = []
    if tools is None:
        return problems
    if not isinstance(tools, list):
        return ["tools: expected an array"]
    for i, tool in enumerate(tools):
        own = server(i, tool) if server is not None and isinstance(tool, Mapping) else None
        if own is not None:
            problems.extend(own)
            continue
        spec = tool.get("function", {}) if wrapped and isinstance(tool, Mapping) else tool
        if not isinstance(spec, Mapping):
            problems.append(f"tools.{i}: expected an object")
            continue
        if not TOOL_NAME.match(str(spec.get("name", ""))):
            problems.append(f"tools.{i}.name: string should match pattern '{TOOL_NAME.pattern}'")
        schema = spec.get(schema_key)
        if schema is not None and (not isinstance(schema, Mapping) or schema.get("type") != "object"):
            problems.append(f"tools.{i}.{schema_key}: the schema must be a JSON schema of type 'object'")
    return problems


def openai_chat_problems(body: Mapping[str, Any]) -> list[str]:
    problems = [] if body.get("model") else ["model: a model is required"]
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages: must be a non-empty array"]
    pending: list[str] = []
    ids: set[Any] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            problems.append(f"messages.{i}.role: invalid role {role!r}")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                problems.append(
                    f"messages.{i}: messages with role 'tool' must be a response to a preceding message with "
                    f"'tool_calls' (tool_call_id {m.get('tool_call_id')!r} is not pending)")
            else:
                pending.remove(m["tool_call_id"])
            continue
        if pending:
            problems.append(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}")
            pending = []
        content = m.get("content")
        if content is None and not (role == "assistant" and m.get("tool_calls")):
            problems.append(f"messages.{i}.content: content is required for role {role!r}")
        for j, call in enumerate(m.get("tool_calls") or []):
            if not isinstance((call.get("function") or {}).get("arguments"), str):
                problems.append(f"messages.{i}.tool_calls.{j}.function.arguments: expected a JSON string")
            problems.extend(_id_problems(f"messages.{i}.tool_calls.{j}.id", call.get("id"), ids))
            pending.append(call.get("id"))
    if pending:
        problems.append(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}")
    return problems + _tool_problems(body.get("tools"), "parameters", wrapped=True)


def openai_responses_problems(body: Mapping[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    problems = [] if body.get("model") else ["model: a model is required"]
    items = body.get("input")
    if isinstance(items, str):
        return problems
    if not isinstance(items, list) or not items:
        return [*problems, "input: must be a string or a non-empty array"]
    calls: list[str] = []
    answered: set[str] = set()
    ids: set[Any] = set()
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            problems.extend(_id_problems(f"input.{i}.call_id", item.get("call_id"), ids))
            calls.append(item.get("call_id"))
        elif kind == "function_call_output":
            if item.get("call_id") not in calls:
                problems.append(f"input.{i}: No tool call found for function call output with call_id "
                                f"{item.get('call_id')}.")
            answered.add(item.get("call_id"))
        elif kind == "message" and item.get("role") not in ("system", "developer", "user", "assistant"):
            problems.append(f"input.{i}.role: invalid role {item.get('role')!r}")
        problems.extend(rules_tools.responses_item(i, item, also))
    problems.extend(f"No tool output found for function call {c}." for c in calls if c not in answered)
    return problems + _tool_problems(body.get("tools"), "parameters", wrapped=False,
                                     server=rules_tools.responses_tool)


def anthropic_problems(body: Mapping[str, Any]) -> list[str]:
    problems = [] if body.get("model") else ["model: Field required"]
    if not isinstance(body.get("max_tokens"), int):
        problems.append("max_tokens: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages: at least one message is required"]
    if messages[0].get("role") != "user":
        problems.append("messages: first message must use the \"user\" role")
    previous_uses: list[str] = []
    ids: set[Any] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"messages.{i}.role: Input should be 'user' or 'assistant' (got {role!r}; put the "
                            "system prompt in the top-level `system` parameter)")
        if i and role == messages[i - 1].get("role"):
            problems.append(f"messages.{i}: roles must alternate between \"user\" and \"assistant\"")
        problems.extend(_block_problems(i, m, previous_uses))
        for j, b in enumerate(_blocks(m)):
            if b.get("type") == "tool_use":
                problems.extend(_id_problems(f"messages.{i}.content.{j}.id", b.get("id"), ids, TOOL_ID))
        previous_uses = [str(b.get("id")) for b in _blocks(m) if b.get("type") == "tool_use"]
    if previous_uses:
        # A final assistant turn is a prefill, but one that ends in tool_use has no turn left to answer it.
        problems.append(f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(previous_uses)}. Each `tool_use` block must have a "
                        "corresponding `tool_result` block in the next message.")
    return problems + _tool_problems(body.get("tools"), "input_schema", wrapped=False,
                                     server=rules_tools.anthropic_server_tool)


CHECKS = {"openai_chat": openai_chat_problems, "openai_responses": openai_responses_problems,
          "anthropic": anthropic_problems}
"""The rules per API, by the names the fake server routes requests to."""


def request_problems(api: str, body: Mapping[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    """The problems the fake server would refuse ``body`` for on ``api`` (one of ``CHECKS``), empty when valid;
    ``also``: item and part kinds the API sent in its replies (it takes back every kind it sends)."""
    if api not in CHECKS:
        raise ValueError(f"unknown API {api!r}; expected one of {', '.join(CHECKS)}")
    if api == "openai_responses":
        return (openai_responses_problems(body, also) + rules_tools.tool_choice(api, body)
                + rules_content.openai_responses(body, also))
    if api == "openai_chat":  # a compatible server takes back the parts it sent (Mistral's thinking chunks)
        return openai_chat_problems(body) + rules_tools.tool_choice(api, body) + rules_content.openai_chat(body, also)
    if api == "anthropic":
        return anthropic_problems(body) + rules_tools.tool_choice(api, body) + rules_content.anthropic(body, also)
    return CHECKS[api](body) + rules_tools.tool_choice(api, body) + rules_content.problems(api, body)


TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _id_problems(where: str, value: Any, seen: set[Any], pattern: re.Pattern[str] | None = None) -> list[str]:
    """A tool-call id must be a non-empty string (of ``pattern``'s characters, where the API has one), unique in
    the request."""
    if not isinstance(value, str) or not value:
        return [f"{where}: Invalid empty tool call id; each tool call needs a non-empty string id"]
    if value in seen:
        return [f"{where}: Duplicate tool call id {value!r}; tool call ids must be unique"]
    seen.add(value)
    if pattern is not None and not pattern.match(value):
        return [f"{where}: String should match pattern '{pattern.pattern}'"]
    return []


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, Mapping)]


def _block_problems(i: int, message: Mapping[str, Any], previous_uses: list[str]) -> list[str]:
    problems: list[str] = []
    blocks = _blocks(message)
    if not blocks:
        problems.append(f"messages.{i}: all messages must have non-empty content")
    results = []
    for j, b in enumerate(blocks):
        if b.get("type") == "text" and not b.get("text"):
            problems.append(f"messages.{i}.content.{j}.text: text content blocks must be non-empty")
        elif b.get("type") == "text" and not str(b.get("text")).strip():
            problems.append(f"messages.{i}.content.{j}.text: text content blocks must contain non-whitespace text")
        if b.get("type") == "tool_use" and not isinstance(b.get("input"), Mapping):
            problems.append(f"messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary")
        if b.get("type") == "tool_result":
            results.append(b.get("tool_use_id"))
            if any(x.get("type") != "tool_result" for x in blocks[:j]):
                problems.append(f"messages.{i}.content.{j}: tool_result blocks must come first in the user turn")
    if results and message.get("role") != "user":
        problems.append(f"messages.{i}: tool_result blocks are only allowed in user messages")
    unexpected = [r for r in results if r not in previous_uses]
    if unexpected:
        problems.append(f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{', '.join(map(str, unexpected))}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message.")
    missing = [u for u in previous_uses if u not in results]
    if missing:
        problems.append(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                        f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding "
                        "`tool_result` block in the next message.")
    return problems
