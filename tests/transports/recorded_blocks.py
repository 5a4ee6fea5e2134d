"""Recorded-shape replies: one for every content block kind the Messages API documents and every output item of the
Responses API's server tools, written from the installed SDKs' types (``anthropic.types.ContentBlock`` and
``openai.types.responses.ResponseOutputItem``); tests validate each against those types before using it.

Each is the reply's content as the API sends it; after such a reply, the next request must send the same blocks
back, in the same order, on the assistant turn.
"""

from __future__ import annotations

from typing import Any

SEARCH_USE = {"type": "server_tool_use", "id": "srvtoolu_01A", "name": "web_search",
              "input": {"query": "capital of France"}}
SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01A", "content": [
    {"type": "web_search_result", "url": "https://example.org/paris", "title": "Paris",
     "encrypted_content": "EqkCCioIBxgCIiQ0ZDk2...", "page_age": "April 30, 2025"}]}
CITED = {"type": "text", "text": "Paris is the capital of France.", "citations": [
    {"type": "web_search_result_location", "url": "https://example.org/paris", "title": "Paris",
     "cited_text": "Paris is the capital and largest city of France.", "encrypted_index": "Eo8BCioIBxgC..."}]}

ANTHROPIC: dict[str, list[dict[str, Any]]] = {
    "web_search with citations": [
        {"type": "text", "text": "I'll search for that."}, SEARCH_USE, SEARCH_RESULT, CITED,
        {"type": "text", "text": " It has about two million people."}],
    "web_search error": [
        SEARCH_USE, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01A",
                     "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
        {"type": "text", "text": "The search limit was reached."}],
    "web_fetch": [
        {"type": "server_tool_use", "id": "srvtoolu_02B", "name": "web_fetch",
         "input": {"url": "https://example.org/article"}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_02B", "content": {
            "type": "web_fetch_result", "url": "https://example.org/article", "retrieved_at": "2025-08-25T10:30:02Z",
            "content": {"type": "document", "title": "An article", "citations": {"enabled": True},
                        "source": {"type": "text", "media_type": "text/plain", "data": "Full text of the page."}}}},
        {"type": "text", "text": "The article says the page is full of text."}],
    "web_fetch error": [
        {"type": "server_tool_use", "id": "srvtoolu_02C", "name": "web_fetch",
         "input": {"url": "https://example.org/missing"}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_02C",
         "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"}},
        {"type": "text", "text": "That page could not be fetched."}],
    "code_execution": [
        {"type": "server_tool_use", "id": "srvtoolu_03C", "name": "code_execution",
         "input": {"code": "print(sum(range(10)))"}},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_03C", "content": {
            "type": "code_execution_result", "stdout": "45\n", "stderr": "", "return_code": 0, "content": []}},
        {"type": "text", "text": "The sum is 45."}],
    "code_execution encrypted": [
        {"type": "server_tool_use", "id": "srvtoolu_03D", "name": "code_execution",
         "input": {"code": "r = web_search('x')"}},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_03D", "content": {
            "type": "encrypted_code_execution_result", "encrypted_stdout": "EuQDCioIBxgC...", "stderr": "",
            "return_code": 0, "content": []}},
        {"type": "text", "text": "Done."}],
    "bash_code_execution": [
        {"type": "server_tool_use", "id": "srvtoolu_04D", "name": "bash_code_execution",
         "input": {"command": "ls -la"}},
        {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_04D", "content": {
            "type": "bash_code_execution_result", "stdout": "total 0\n", "stderr": "", "return_code": 0,
            "content": [{"type": "bash_code_execution_output", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}]}},
        {"type": "text", "text": "The folder is empty."}],
    "text_editor_code_execution": [
        {"type": "server_tool_use", "id": "srvtoolu_05E", "name": "text_editor_code_execution",
         "input": {"command": "view", "path": "/tmp/a.py"}},
        {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_05E", "content": {
            "type": "text_editor_code_execution_view_result", "file_type": "text", "content": "print(1)\n",
            "num_lines": 1, "start_line": 1, "total_lines": 1}},
        {"type": "text", "text": "It prints 1."}],
    "tool_search": [
        {"type": "server_tool_use", "id": "srvtoolu_06F", "name": "tool_search_tool_regex",
         "input": {"pattern": "weather"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_06F", "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
        {"type": "text", "text": "Found a weather tool."}],
    "container_upload": [
        {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
        {"type": "text", "text": "I read the uploaded file."}],
    "interleaved text and a tool call": [
        {"type": "text", "text": "First I will look."},
        {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"file_path": "a.py"}},
        {"type": "text", "text": "And then think again."}],
    "interleaved thinking": [
        {"type": "thinking", "thinking": "Look first.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
        {"type": "text", "text": "Let me check."},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
        {"type": "tool_use", "id": "toolu_02", "name": "read", "input": {"file_path": "b.py"}}],
}
"""Anthropic content blocks, by what they show."""

RESPONSES: dict[str, list[dict[str, Any]]] = {
    "web_search_call": [
        {"type": "web_search_call", "id": "ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609", "status": "completed",
         "action": {"type": "search", "query": "capital of France",
                    "sources": [{"type": "url", "url": "https://example.org/paris"}]}},
        {"type": "message", "id": "msg_67c9fa077e288190af08fdffda2e34f20be649c1a5ff9609", "status": "completed",
         "role": "assistant", "content": [{"type": "output_text", "text": "Paris is the capital of France.",
                                           "annotations": [{"type": "url_citation", "start_index": 0, "end_index": 5,
                                                            "url": "https://example.org/paris", "title": "Paris"}]}]}],
    "code_interpreter_call": [
        {"type": "reasoning", "id": "rs_68a1", "summary": [], "encrypted_content": "gAAAAABo..."},
        {"type": "code_interpreter_call", "id": "ci_68a2", "status": "completed", "container_id": "cntr_68a3",
         "code": "print(2**10)", "outputs": [{"type": "logs", "logs": "1024\n"}]},
        {"type": "message", "id": "msg_68a4", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "2**10 is 1024.", "annotations": []}]}],
    "reasoning before a function call": [
        {"type": "reasoning", "id": "rs_68b1", "summary": [{"type": "summary_text", "text": "Read the file."}],
         "encrypted_content": "gAAAAABp..."},
        {"type": "function_call", "id": "fc_68b2", "call_id": "call_68b2", "name": "read",
         "arguments": "{\"file_path\":\"a.py\"}", "status": "completed"}],
    "two messages": [
        {"type": "message", "id": "msg_68c1", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "One.", "annotations": []}]},
        {"type": "message", "id": "msg_68c2", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": " Two.", "annotations": []}]}],
}
"""Responses API output items, by what they show."""

NEW_ANTHROPIC: dict[str, list[dict[str, Any]]] = {
    "mcp connector": [
        {"type": "text", "text": "I'll ask the server."},
        {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "echo", "server_name": "example-mcp",
         "input": {"text": "hi"}},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": False,
         "content": [{"type": "text", "text": "hi"}]},
        {"type": "text", "text": "The server said hi."}],
    "compaction": [
        {"type": "compaction", "content": "Summary of the earlier conversation.",
         "encrypted_content": "EqQBCgIYAhIMcmVjb3JkZWQ=", "signature": "EpYDCkYIBxgCKkB4", "tool_changes": []},
        {"type": "text", "text": "Carrying on from the summary."}],
}
"""Anthropic content blocks of the beta features (``anthropic.types.beta``: ``BetaMCPToolUseBlock``,
``BetaMCPToolResultBlock``, ``BetaCompactionBlock``), which the installed SDK's ``Message`` does not list."""

FUTURE_ANTHROPIC = [
    {"type": "hologram", "id": "holo_01", "frames": [{"t": 0, "data": "AAEC"}], "encrypted_payload": "Zm9vYmFy"},
    {"type": "text", "text": "Here is the hologram."}]
"""A content block of a kind no API has yet, with fields of its own."""

NEW_RESPONSES: dict[str, list[dict[str, Any]]] = {
    "remote mcp": [
        {"type": "mcp_list_tools", "id": "mcpl_68d1", "server_label": "deepwiki", "tools": [
            {"name": "ask_question", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
             "description": "Ask a question.", "annotations": {"read_only": True}}]},
        {"type": "mcp_call", "id": "mcp_68d2", "name": "ask_question", "arguments": "{\"q\":\"what is it?\"}",
         "server_label": "deepwiki", "output": "It is a wiki.", "status": "completed"},
        {"type": "message", "id": "msg_68d3", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "The wiki says it is a wiki.", "annotations": []}]}],
    "image_generation_call": [
        {"type": "image_generation_call", "id": "ig_68e1", "status": "completed", "result": "iVBORw0KGgoAAAANSUhEUg==",
         "revised_prompt": "A grey cat on a mat", "background": "opaque", "output_format": "png",
         "quality": "high", "size": "1024x1024", "action": "generate"},
        {"type": "message", "id": "msg_68e2", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "Here is the cat.", "annotations": []}]}],
    "file_search_call": [
        {"type": "file_search_call", "id": "fs_68f1", "status": "completed", "queries": ["refund policy"],
         "results": [{"file_id": "file-2dtbBZdjtDKS8eqWxqbgDi", "filename": "policy.pdf", "score": 0.91,
                      "text": "Refunds within 30 days.", "attributes": {"team": "support"}}]},
        {"type": "message", "id": "msg_68f2", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "Refunds within 30 days.", "annotations": [
             {"type": "file_citation", "file_id": "file-2dtbBZdjtDKS8eqWxqbgDi", "filename": "policy.pdf",
              "index": 0}]}]}],
}
"""Responses output items of the provider tools ``ResponsesItems`` did not read before (``McpListTools``,
``McpCall``, ``ImageGenerationCall``, ``ResponseFileSearchToolCall``), every documented field filled in."""

FUTURE_RESPONSES = [
    {"type": "hologram", "id": "holo_68g1", "status": "completed", "frames": [{"t": 0, "data": "AAEC"}]},
    {"type": "message", "id": "msg_68g2", "status": "completed", "role": "assistant",
     "content": [{"type": "output_hologram", "frames": 3},
                 {"type": "output_text", "text": "Here is the hologram.", "annotations": []}]}]
"""An output item, and a message part, of kinds no API has yet."""

CHAT_PARTS: dict[str, list[dict[str, Any]]] = {
    "mistral thinking": [
        {"type": "thinking", "thinking": [{"type": "text", "text": "The user wants a greeting."}], "closed": True},
        {"type": "text", "text": "Hello!"}],
    "a kind no API has yet": [
        {"type": "text", "text": "Here is "},
        {"type": "hologram_2031", "id": "holo_c1", "frames": [{"t": 0, "data": "AAEC"}]},
        {"type": "text", "text": "the hologram."}],
}
"""Chat Completions assistant content as a list of parts, as compatible servers send it: Mistral's documented
``ThinkChunk`` (``type``, ``thinking`` as a list of text chunks, ``closed``) before the answer, and a part of a kind no
API has yet between two texts. The openai SDK types the reply's content as a string; a server that sends parts takes
them back."""
