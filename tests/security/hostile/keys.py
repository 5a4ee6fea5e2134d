"""Hostile cases: keys (see the package docstring).

Two kinds. ``host`` cases name a key in the environment and a server that is not its provider's: the key must never
reach it (``brute_nb.providers.credentials``), and the error must say how to give a key for it. ``allowed`` cases
are the ways a key does go to a server, which must keep working. ``redirect`` cases have the provider's own server
answer with a redirect to another host, which must receive no key. ``redact`` cases put a key where a turn picks
it up and sends it on (``brute_nb.sendable``, the redaction point of every request; ``DefaultToolPipeline`` for a
tool's arguments): the key must appear in no request body, workspace file or session file.

``header`` cases are an extra header given with ``-o extra_headers=...`` (or ``configure(options=...)``):
``data["shown"]`` is a secret the header carries (a proxy's key, a bearer token, a cookie), which the request to
the provider's host carries but nothing brute_nb shows (``%brute config``, an error, the session) may; a case with
``data["refused"]`` is a header brute_nb refuses, saying so without the secret (a line break that would split the
request's headers into one more, carrying a key).

``file`` cases are a keys file (``%brute keys set``'s, issue 41) as a careless edit or another program may leave
it: every one is a clear error naming the file, never a traceback, never the text of a value in it, and never
overwritten by a later save (``data``: the file's bytes).

``data`` for ``host``: ``model`` (as ``-m`` takes it) and ``variable`` (where the key is); for ``allowed``: ``how``;
for ``redirect``: ``api``; for ``redact``: ``where``. ``results`` cases have a batch name where its results are,
on another host (Anthropic's ``results_url``, which its SDK fetches as given): that host gets no key (``data``:
``api``).
"""

from __future__ import annotations

from tests.security.hostile.case import Case

HOST = frozenset({"host"})
ALLOWED = frozenset({"allowed"})
REDIRECT = frozenset({"redirect"})
REDACT = frozenset({"redact"})
RESULTS = frozenset({"results"})
FILE = frozenset({"file"})
HEADER = frozenset({"header"})

KEYS: tuple[Case, ...] = (
    Case("openai-key-to-a-base-url", {"model": "openai:gpt-fake", "variable": "OPENAI_API_KEY"},
         "OPENAI_API_KEY is not sent to a --base-url that is not OpenAI's; the error names api_key", HOST),
    Case("openai-key-to-a-responses-base-url", {"model": "openai-responses:gpt-fake", "variable": "OPENAI_API_KEY"},
         "the Responses API keeps the key at home too", HOST),
    Case("anthropic-key-to-a-base-url", {"model": "anthropic:claude-fake", "variable": "ANTHROPIC_API_KEY"},
         "ANTHROPIC_API_KEY is not sent to another host", HOST),
    Case("anthropic-token-to-a-base-url", {"model": "anthropic:claude-fake", "variable": "ANTHROPIC_AUTH_TOKEN"},
         "ANTHROPIC_AUTH_TOKEN, which the SDK reads too, is not sent to another host", HOST),
    Case("hosted-key-to-a-base-url", {"model": "gemini:gemini-fake", "variable": "GEMINI_API_KEY"},
         "a hosted endpoint's key (Gemini) is not sent to a --base-url that is not its endpoint", HOST),
    Case("base-url-variable", {"how": "env_base_url"},
         "a key goes to the base URL set in the same environment (OPENAI_BASE_URL)", ALLOWED),
    Case("key-given", {"how": "given"}, "a key given for the server (api_key=...) goes to it", ALLOWED),
    Case("key-variable-named", {"how": "env_name"},
         "api_key=env:NAME sends the named variable's key, and never OPENAI_API_KEY", ALLOWED),
    Case("no-key-for-a-local-server", {"how": "none"},
         "api_key=none sends no key of the user's to a local server", ALLOWED),
    Case("redirect-openai-chat", {"api": "openai_chat"},
         "a redirect to another host carries no Authorization", REDIRECT),
    Case("redirect-openai-responses", {"api": "openai_responses"},
         "a redirect to another host carries no Authorization", REDIRECT),
    Case("redirect-anthropic", {"api": "anthropic"},
         "a redirect to another host carries no x-api-key (httpx2 strips only Authorization)", REDIRECT),
    Case("batch-results-url-elsewhere", {"api": "anthropic"},
         "a batch whose results_url names another host: the SDK fetches it without x-api-key", RESULTS),
    Case("key-in-the-prompt", {"where": "prompt"}, "a prompt quoting the key sends it redacted", REDACT),
    Case("key-in-the-context", {"where": "context"}, "--context cells quoting the key send it redacted", REDACT),
    Case("key-in-a-tool-result", {"where": "tool_output"}, "a tool output holding the key is sent redacted",
         REDACT),
    Case("key-in-tool-arguments", {"where": "tool_arguments"},
         "a reply echoing the key into write(content=...) writes no key to the workspace or the session", REDACT),
    Case("key-in-a-fix-report", {"where": "fix"},
         "%brute fix sends the failing line's values redacted (item 7)", REDACT),
    Case("header-a-proxys-key", {"name": "X-Portkey-Api-Key", "value": "pk-hostile-header-0001",
                                 "shown": "pk-hostile-header-0001"},
         "a gateway's key in its own header goes to that host and is shown nowhere", HEADER),
    Case("header-a-bearer-token", {"name": "X-Upstream", "value": "Bearer tok-hostile-header-0002",
                                   "shown": "tok-hostile-header-0002"},
         "a bearer token under a header name that says nothing is shown nowhere", HEADER),
    Case("header-a-cookie", {"name": "Cookie", "value": "session=hostile-header-0003",
                             "shown": "hostile-header-0003"}, "a cookie is a secret wherever it shows", HEADER),
    Case("header-a-line-break", {"name": "X-Trace", "value": "run-1\r\nX-Api-Key: sk-hostile-header-0004",
                                 "refused": "line break", "shown": "sk-hostile-header-0004"},
         "a header value with a line break would add a header (a key) to the request: refused", HEADER),
    Case("header-a-key-header", {"name": "x-api-key", "value": "sk-hostile-header-0005", "refused": "api_key=",
                                 "shown": "sk-hostile-header-0005"},
         "the provider's key header is refused: a key goes as api_key=, to its own host only", HEADER),
    Case("key-file-not-json", b"anthropic = sk-ant-hostile-file-0001\n", "a keys file that is not JSON", FILE),
    Case("key-file-a-list", b'["sk-ant-hostile-file-0002"]', "a JSON list, not an object", FILE),
    Case("key-file-a-number", b'{"anthropic": 41}', "a key that is not a string", FILE),
    Case("key-file-header-injection", b'{"anthropic": "sk-ant-hostile-file-0003\\r\\nX-Evil: 1"}',
         "a key with a line break would split the request's headers: refused when read", FILE),
    Case("key-file-not-utf8", b'{"anthropic": "sk-ant-\xff\xfe"}', "bytes that are no text", FILE),
    Case("key-file-deep", b"[" * 30_000 + b"]" * 30_000, "JSON nested too deep to parse (no RecursionError)", FILE),
)
