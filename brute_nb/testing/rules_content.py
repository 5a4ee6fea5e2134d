"""More rules the real APIs enforce, for what a request carries beyond the conversation: structured-output
formats, prompt-cache breakpoints and attachment blocks (images, documents, files).

Like ``rules``, each check takes the request body and returns the problems worded as the API's 400 errors, empty
when the request is valid; ``problems(api, body)`` runs those of one API. Kept apart from ``rules`` so the
conversation rules stay short to read.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_CACHE_BREAKPOINTS = 4
"""Anthropic refuses a request with more than four ``cache_control`` blocks."""
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def strict_schema_problems(schema: Any, where: str, *, all_required: bool = True) -> list[str]:
    """OpenAI strict mode: every object closed and every property required; Anthropic's structured output asks
    only that every object be closed (``all_required=False``)."""
    if not isinstance(schema, Mapping):
        return [f"{where}: the schema must be a JSON object"]
    problems: list[str] = []
    for path, node in _nodes(schema, ()):
        if node.get("type") != "object":
            continue
        context = f"context=({', '.join(repr(p) for p in path)})"
        if node.get("additionalProperties") is not False:
            problems.append(f"Invalid schema for {where}: In {context}, 'additionalProperties' is required to be "
                            "supplied and to be false.")
        missing = [k for k in node.get("properties") or {} if k not in (node.get("required") or ())]
        if missing and all_required:
            problems.append(f"Invalid schema for {where}: In {context}, 'required' is required to be supplied and "
                            f"to be an array including every key in properties. Missing {missing[0]!r}.")
    return problems


def _nodes(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    if isinstance(node, Mapping):
        yield path, node
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
                for name, sub in value.items():
                    yield from _nodes(sub, (*path, key, str(name)))
            elif key in ("items", "anyOf", "allOf", "oneOf", "additionalProperties"):
                yield from _nodes(value, (*path, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _nodes(item, (*path, str(i)))


def _format_problems(fmt: Any, where: str, *, named: bool) -> list[str]:
    if not isinstance(fmt, Mapping):
        return [f"{where}: expected an object"]
    kind = fmt.get("type")
    if kind in ("text", "json_object"):
        return []
    if kind != "json_schema":
        return [f"{where}.type: Invalid value: {kind!r}. Supported values are: 'text', 'json_object' and "
                "'json_schema'."]
    problems = []
    if named and not NAME.match(str(fmt.get("name", ""))):
        problems.append(f"{where}.name: string should match pattern '{NAME.pattern}'")
    if named and not fmt.get("strict"):
        return problems  # non-strict OpenAI schemas are taken as given
    return problems + strict_schema_problems(fmt.get("schema"), f"{where} {fmt.get('name', '')!r}".rstrip(" '"),
                                             all_required=named)


def openai_chat(body: Mapping[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    problems = []
    if "response_format" in body:
        fmt = body["response_format"]
        inner = {**(fmt.get("json_schema") or {}), "type": fmt.get("type")} if isinstance(fmt, Mapping) else fmt
        problems += _format_problems(inner, "response_format", named=True)
    for i, m in enumerate(body.get("messages") or ()):
        problems += _chat_parts(i, m, also)
    return problems


def _chat_parts(i: int, message: Mapping[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    problems = []
    role = message.get("role")
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        where = f"messages.{i}.content.{j}"
        if kind == "image_url":
            url = str((part.get("image_url") or {}).get("url") or "")
            if role != "user":
                problems.append(f"{where}: image_url parts are only allowed in 'user' messages")
            problems += _data_url_problems(url, where, IMAGE_TYPES)
        elif kind == "file":
            file = part.get("file") or {}
            if role != "user":
                problems.append(f"{where}: file parts are only allowed in 'user' messages")
            if not file.get("file_id") and not file.get("file_data"):
                problems.append(f"{where}.file: one of file_id or file_data is required")
            if file.get("file_data"):
                problems += _data_url_problems(str(file["file_data"]), where, ("application/pdf",))
        elif kind not in ("text", "input_audio", "refusal") and not (role == "assistant" and kind in also):
            problems.append(f"{where}.type: Invalid value: {kind!r}")
    return problems


def _data_url_problems(url: str, where: str, media_types: tuple[str, ...]) -> list[str]:
    if url.startswith(("http://", "https://")):
        return []
    match = re.match(r"^data:([^;,]+);base64,(.*)$", url, re.S)
    if not match:
        return [f"{where}: expected a URL or a base64 data URL"]
    if match.group(1) not in media_types:
        return [f"{where}: Invalid MIME type {match.group(1)!r}. Supported: {', '.join(media_types)}"]
    if not BASE64.match(match.group(2)):
        return [f"{where}: the data URL is not valid base64"]
    return []


RESPONSES_PARTS = frozenset({"input_text", "output_text", "refusal", "input_image", "input_file"})
"""The content parts a Responses input message takes (``ResponseInputContentParam``, and an assistant message's own
``output_text`` and ``refusal`` sent back)."""


FUNCTION_OUTPUT_PARTS = frozenset({"input_text", "input_image", "input_file"})
"""The parts a ``function_call_output``'s list output takes (``ResponseFunctionCallOutputItemParam``)."""


def openai_responses(body: Mapping[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    problems = []
    text = body.get("text")
    if isinstance(text, Mapping) and "format" in text:
        problems += _format_problems(text["format"], "text.format", named=True)
    items = body.get("input")
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "function_call_output" and isinstance(item.get("output"), list):
            for j, part in enumerate(item["output"]):
                problems += _responses_part(f"input.{i}.output.{j}", part, FUNCTION_OUTPUT_PARTS)
            continue
        content = item.get("content")
        for j, part in enumerate(content if isinstance(content, list) else ()):
            where = f"input.{i}.content.{j}"
            problems += _responses_part(where, part, RESPONSES_PARTS | also)
            if part.get("type") in ("input_image", "input_file") and item.get("role") not in ("user", None):
                problems.append(f"{where}: {part.get('type')} is only allowed in user messages")
    return problems


def _responses_part(where: str, part: Any, allowed: frozenset[str]) -> list[str]:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind not in allowed:
        return [f"{where}.type: Invalid value: {kind!r}. Supported values are: "
                f"{', '.join(map(repr, sorted(allowed)))}."]
    if kind == "input_image":
        return _data_url_problems(str(part.get("image_url") or ""), where, IMAGE_TYPES)
    if kind == "input_file" and not part.get("file_id") and not part.get("file_data") and not part.get("file_url"):
        return [f"{where}: one of file_id, file_data or file_url is required"]
    if kind == "input_file" and part.get("file_data") and not part.get("filename"):
        return [f"{where}.filename: a filename is required with file_data"]
    return []


def declared_kinds(union: Any) -> frozenset[str]:
    """The ``type`` literals of the members of an SDK's union of models or TypedDicts (annotations read as written,
    so a forward reference counts too)."""
    kinds: set[str] = set()
    pending = [union]
    while pending:
        member = pending.pop()
        pending.extend(typing.get_args(member))
        hint = (getattr(member, "__annotations__", None) or {}).get("type") if isinstance(member, type) else None
        kinds.update(re.findall(r"Literal\[['\"](\w+)['\"]\]", str(getattr(hint, "__forward_arg__", hint))))
    return frozenset(kinds)


@cache
def anthropic_block_kinds() -> frozenset[str]:
    """The content block kinds a request's messages may hold, as the installed SDK declares them
    (``BetaContentBlockParam``: the stable kinds and the beta features'); empty without the SDK (nothing refused)."""
    try:
        from anthropic.types.beta import BetaContentBlockParam
    except ImportError:
        return frozenset()
    return declared_kinds(BetaContentBlockParam)


def _anthropic_kinds(body: Mapping[str, Any], also: frozenset[str]) -> list[str]:
    """A message block of a kind the API does not take: one it never declared, unless it sent that kind itself."""
    known = anthropic_block_kinds()
    if not known:
        return []
    problems = []
    for i, m in enumerate(body.get("messages") or ()):
        content = m.get("content") if isinstance(m, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else ()):
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind not in known and kind not in also:
                problems.append(f"messages.{i}.content.{j}: Input tag {kind!r} found using 'type' does not match "
                                "any of the expected tags")
    return problems


def anthropic(body: Mapping[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    problems = _anthropic_kinds(body, also)
    config = body.get("output_config")
    if isinstance(config, Mapping) and config.get("format") is not None:
        problems += _format_problems(config["format"], "output_config.format", named=False)
    marks = 0
    for where, block in _anthropic_blocks(body):
        if "cache_control" in block:
            marks += 1
            if not isinstance(block["cache_control"], Mapping) or block["cache_control"].get("type") != "ephemeral":
                problems.append(f"{where}.cache_control.type: Input should be 'ephemeral'")
        problems += _anthropic_source(where, block)
    problems += _tool_result_content(body)
    if marks > MAX_CACHE_BREAKPOINTS:
        problems.append(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
                        f"Found {marks}.")
    return problems


def _anthropic_blocks(body: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every block that may carry ``cache_control``: tools, system blocks, message blocks (and nested results)."""
    for i, tool in enumerate(body.get("tools") or ()):
        if isinstance(tool, Mapping):
            yield f"tools.{i}", tool
    system = body.get("system")
    for i, block in enumerate(system if isinstance(system, list) else ()):
        if isinstance(block, Mapping):
            yield f"system.{i}", block
    for i, m in enumerate(body.get("messages") or ()):
        content = m.get("content") if isinstance(m, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if not isinstance(block, Mapping):
                continue
            yield f"messages.{i}.content.{j}", block
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for k, sub in enumerate(inner if isinstance(inner, list) else ()):
                if isinstance(sub, Mapping):
                    yield f"messages.{i}.content.{j}.content.{k}", sub


TOOL_RESULT_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_reference"})
"""The blocks a ``tool_result``'s content list takes (``ToolResultBlockParam``'s ``Content``)."""


def _tool_result_content(body: Mapping[str, Any]) -> list[str]:
    problems = []
    for i, m in enumerate(body.get("messages") or ()):
        content = m.get("content") if isinstance(m, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else ()):
            inner = block.get("content") if isinstance(block, Mapping) and block.get("type") == "tool_result" else None
            for k, sub in enumerate(inner if isinstance(inner, list) else ()):
                kind = sub.get("type") if isinstance(sub, Mapping) else None
                if kind not in TOOL_RESULT_BLOCKS:
                    expected = ", ".join(map(repr, sorted(TOOL_RESULT_BLOCKS)))
                    problems.append(f"messages.{i}.content.{j}.content.{k}.type: Input tag {kind!r} found does not "
                                    f"match any of the expected tags: {expected}")
    return problems


def _anthropic_source(where: str, block: Mapping[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind not in ("image", "document"):
        return []
    source = block.get("source")
    if not isinstance(source, Mapping):
        return [f"{where}.source: Field required"]
    if source.get("type") in ("url", "file"):
        return []
    allowed = IMAGE_TYPES if kind == "image" else ("application/pdf", "text/plain")
    problems = []
    if source.get("media_type") not in allowed:
        problems.append(f"{where}.source.media_type: Input should be {', '.join(map(repr, allowed))}")
    data = source.get("data")
    if source.get("type") == "base64" and (not isinstance(data, str) or not BASE64.match(data)):
        problems.append(f"{where}.source.data: the image data is not valid base64")
    elif source.get("type") == "text" and not isinstance(data, str):
        problems.append(f"{where}.source.data: Input should be a valid string")
    elif source.get("type") not in ("base64", "text"):
        problems.append(f"{where}.source.type: Input should be 'base64', 'text', 'url' or 'file'")
    return problems


CHECKS = {"openai_chat": openai_chat, "openai_responses": openai_responses, "anthropic": anthropic}


def problems(api: str, body: Mapping[str, Any]) -> list[str]:
    return CHECKS[api](body) if api in CHECKS else []
