"""The tool and item kinds the real APIs take beside function tools, as the fake provider checks them.

The lists are the ``type`` literals of the installed SDKs' request types (``anthropic.types.ToolUnionParam``,
``openai.types.responses.ToolParam`` and ``ResponseInputItemParam``), so the fake accepts a server tool or a
server tool's output item the real API accepts (``{"type": "web_search"}`` on Responses) and refuses one it
does not, worded like the API's 400.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ANTHROPIC_SERVER_TOOLS: dict[str, str] = {
    "bash_20250124": "bash", "code_execution_20250522": "code_execution",
    "code_execution_20250825": "code_execution", "code_execution_20260120": "code_execution",
    "code_execution_20260521": "code_execution", "memory_20250818": "memory",
    "text_editor_20250124": "str_replace_editor", "text_editor_20250429": "str_replace_based_edit_tool",
    "text_editor_20250728": "str_replace_based_edit_tool", "web_search_20250305": "web_search",
    "web_search_20260209": "web_search", "web_search_20260318": "web_search", "web_fetch_20250910": "web_fetch",
    "web_fetch_20260209": "web_fetch", "web_fetch_20260309": "web_fetch", "web_fetch_20260318": "web_fetch",
    "tool_search_tool_bm25_20251119": "tool_search_tool_bm25",
    "tool_search_tool_regex_20251119": "tool_search_tool_regex", "advisor_20260301": "advisor",
}
"""Anthropic's versioned tool types and the one name each must be given (a beta one only under its header:
``anthropic_beta``)."""

RESPONSES_TOOLS = frozenset({
    "function", "file_search", "computer", "computer_use_preview", "web_search", "web_search_2025_08_26", "mcp",
    "code_interpreter", "programmatic_tool_calling", "image_generation", "local_shell", "shell", "custom",
    "namespace", "tool_search", "web_search_preview", "web_search_preview_2025_03_11", "apply_patch"})

RESPONSES_ITEMS = frozenset({
    "message", "file_search_call", "computer_call", "computer_call_output", "web_search_call", "function_call",
    "function_call_output", "tool_search_call", "tool_search_output", "additional_tools", "configuration_update",
    "reasoning", "compaction", "image_generation_call", "code_interpreter_call", "local_shell_call",
    "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output",
    "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call", "custom_tool_call_output",
    "custom_tool_call", "compaction_trigger", "item_reference", "program", "program_output"})


def anthropic_server_tool(i: int, tool: Mapping[str, Any]) -> list[str] | None:
    """The problems of a versioned (server) tool, or None when ``tool`` is a client tool (no type, or custom)."""
    kind = tool.get("type")
    if kind in (None, "custom"):
        return None
    if kind == "mcp_toolset":  # the MCP connector's tools: named by a server of the request's mcp_servers
        return [] if tool.get("mcp_server_name") else [f"tools.{i}.mcp_toolset.mcp_server_name: Field required"]
    name = ANTHROPIC_SERVER_TOOLS.get(str(kind))
    if name is None:
        return [f"tools.{i}.type: Input tag {kind!r} found using 'type' does not match any of the expected tags: "
                f"'custom', {', '.join(map(repr, ANTHROPIC_SERVER_TOOLS))}"]
    if tool.get("name") != name:
        return [f"tools.{i}.{kind}.name: Input should be {name!r}"]
    if tool.get("allowed_domains") and tool.get("blocked_domains"):
        return [f"tools.{i}: allowed_domains and blocked_domains cannot be used together"]
    return []


def responses_tool(i: int, tool: Mapping[str, Any]) -> list[str] | None:
    """The problems of a non-function Responses tool, or None when ``tool`` is a function tool."""
    kind = tool.get("type")
    if kind == "function":
        return None
    if kind not in RESPONSES_TOOLS:
        return [f"tools[{i}].type: Invalid value: {kind!r}. Supported values are: "
                f"{', '.join(map(repr, sorted(RESPONSES_TOOLS)))}."]
    if kind == "code_interpreter" and not isinstance(tool.get("container"), str | Mapping):
        return [f"Missing required parameter: 'tools[{i}].container'."]
    if kind == "file_search" and not tool.get("vector_store_ids"):
        return [f"Missing required parameter: 'tools[{i}].vector_store_ids'."]
    if kind == "mcp" and not (tool.get("server_label") and (tool.get("server_url") or tool.get("connector_id"))):
        return [f"Missing required parameter: 'tools[{i}].server_label' and one of 'server_url' or 'connector_id'."]
    return []


MCP_BETA = "mcp-client-2025-11-20"
ADVISOR_BETA = "advisor-tool-2026-03-01"
BETA_ONLY: dict[str, str] = {
    "mcp_servers": MCP_BETA, "mcp_toolset": MCP_BETA, "mcp_tool_use": MCP_BETA, "mcp_tool_result": MCP_BETA,
    "advisor_20260301": ADVISOR_BETA, "advisor_tool_result": ADVISOR_BETA, "compaction": "compact-2026-01-12",
    "compact_20260112": "compact-2026-01-12", "clear_tool_uses_20250919": "context-management-2025-06-27",
    "clear_thinking_20251015": "context-management-2025-06-27"}
"""What the API takes only under a beta header (a request parameter, a tool type, a content block type: the ones
only ``anthropic.types.beta``'s request types declare), and the beta each one's documentation names."""


def anthropic_beta(body: Mapping[str, Any], beta_header: str) -> list[str]:
    """A beta feature without its ``anthropic-beta`` header is refused as the plain API refuses what it does not
    know (an extra input, a tag it does not expect), wherever it is: a parameter, a tool, a block sent back, a
    context edit; and
    each MCP toolset names one of the request's servers."""
    sent = {b.strip() for b in beta_header.split(",")}
    problems = [f"{key}: Extra inputs are not permitted ({_needs(key)})" for key in body
                if key in BETA_ONLY and BETA_ONLY[key] not in sent]
    tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
    problems += [f"tools.{i}.type: Input tag {t['type']!r} found using 'type' does not match any of the expected "
                 f"tags ({_needs(t['type'])})" for i, t in enumerate(tools)
                 if t.get("type") in BETA_ONLY and BETA_ONLY[str(t["type"])] not in sent]
    for i, m in enumerate(body.get("messages") or ()):
        content = m.get("content") if isinstance(m, Mapping) else None
        blocks = [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
        problems += [f"messages.{i}.content.{j}: Input tag {b['type']!r} found using 'type' does not match any of "
                     f"the expected tags ({_needs(b['type'])})" for j, b in enumerate(blocks)
                     if b.get("type") in BETA_ONLY and BETA_ONLY[str(b["type"])] not in sent]
    edits = body.get("context_management")
    edits = edits.get("edits") if isinstance(edits, Mapping) else None
    problems += [f"context_management.edits.{k}.type: Input tag {e['type']!r} found using 'type' does not match "
                 f"any of the expected tags ({_needs(e['type'])})"
                 for k, e in enumerate(edits if isinstance(edits, list) else ())
                 if isinstance(e, Mapping) and e.get("type") in BETA_ONLY and BETA_ONLY[str(e["type"])] not in sent]
    if problems:
        return problems
    names = {s.get("name") for s in body.get("mcp_servers") or () if isinstance(s, Mapping)}
    return [f"mcp_toolset {t.get('mcp_server_name')!r} names no server of mcp_servers" for t in tools
            if t.get("type") == "mcp_toolset" and t.get("mcp_server_name") not in names]


def _needs(feature: Any) -> str:
    return f"{feature} is a beta feature: it needs the anthropic-beta header {BETA_ONLY[str(feature)]}"


def responses_item(i: int, item: Mapping[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    kind = item.get("type", "message")
    if kind not in RESPONSES_ITEMS and kind not in also:
        return [f"input[{i}].type: Invalid value: {kind!r}."]
    return []


ANTHROPIC_TOOL_CHOICES = ("auto", "any", "tool", "none")
"""The ``type`` tags of anthropic's ``ToolChoiceParam`` union (auto, any, tool, none)."""
OPENAI_TOOL_CHOICES = ("none", "auto", "required")
"""The string literals of Chat Completions' ``ChatCompletionToolChoiceOptionParam`` and Responses'
``ToolChoiceOptions``; an object names a tool instead."""


def tool_choice(api: str, body: Mapping[str, Any]) -> list[str]:
    """``tool_choice`` as the API takes it: Anthropic an object tagged by ``type``, the OpenAI APIs one of their
    strings or an object; Chat Completions only with tools."""
    choice = body.get("tool_choice")
    if choice is None:
        return []
    if api == "anthropic":
        if not isinstance(choice, Mapping):
            return ["tool_choice: Input should be a valid dictionary or object to extract fields from"]
        if choice.get("type") not in ANTHROPIC_TOOL_CHOICES:
            return [f"tool_choice.type: Input tag {choice.get('type')!r} found using 'type' does not match any of "
                    f"the expected tags: {', '.join(map(repr, ANTHROPIC_TOOL_CHOICES))}"]
        return []
    if isinstance(choice, str) and choice not in OPENAI_TOOL_CHOICES:
        return [f"Invalid value: {choice!r}. Supported values are: 'none', 'auto', and 'required'."]
    if api == "openai_chat" and not body.get("tools"):
        return ["Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."]
    return []


def tools_off(api: str, body: Mapping[str, Any]) -> bool:
    """Whether the request lets the model call no tool: a model so asked answers in text only."""
    choice = body.get("tool_choice")
    return (choice.get("type") if isinstance(choice, Mapping) and api == "anthropic" else choice) == "none"
