"""Provider: the shared shape of the SDK-backed handlers (``agent.run(OpenAIChat(...))``).

A provider is the only code that calls a model SDK. One call: dump ``env["messages"]`` with its transport,
advertise ``env["tools"]``, call the **async** client (streaming deltas out as events), wrap the reply and append
it with ``meta`` (provider, model, tokens, finish_reason, duration_ms, created_at). The invariant: the reply is
appended whole or not at all, so a failure (HTTP error, stalled or cut stream, malformed body) never leaves a
half reply or a dangling tool call in the log; it surfaces as ``ProviderError`` with the provider's own message.

Record and replay plug in under the SDK client as its httpx2 transport (see ``replay``), so a replayed call runs
the same SDK code a live one does.

A client belongs to the event loop that uses it: its pooled keep-alive connections are bound to that loop, so
``client`` keeps one SDK client per running loop (brute_nb runs every turn on one loop, ``brute_nb.event_loop``, so this
is one client, its connections reused turn after turn; a user's own ``await agent.astart()`` on the kernel's loop
gets a second). A streamed reply that sends nothing for ``stall_timeout`` seconds fails with a ProviderError saying
so, instead of waiting out the SDK's ten-minute read timeout.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, ClassVar

from brute_nb import raw_replies, structured
from brute_nb.cost import price
from brute_nb.errors import BruteError, ProviderError, ProviderNotConfiguredError
from brute_nb.event_loop import aclose_local, loop_local
from brute_nb.events import emit
from brute_nb.message import JSON, Message
from brute_nb.providers import keys
from brute_nb.providers.credentials import client_key, is_key, key_source, strip_keys_off_origin
from brute_nb.providers.failures import html_answer, is_timeout, no_key_message, translate_error
from brute_nb.redact import redact_exception, redact_value, remember
from brute_nb.redact_messages import redacted
from brute_nb.transports.base import as_data

EMPTY_SCHEMA: dict[str, JSON] = {"type": "object", "properties": {}}
"""A tool without parameters. Both APIs accept it: Anthropic's InputSchema requires only ``"type": "object"``."""
REPLAY_KEY = "replay-needs-no-key"
"""The SDKs refuse to start without a key; a replayed session never sends one anywhere."""
STALL_TIMEOUT = 90.0
"""Seconds a stream may send nothing before the call fails (``BRUTE_STALL_TIMEOUT`` or ``stall_timeout=``).
The real APIs send events or pings well within this while a model thinks; the SDKs' own default is 600 s."""
SDK_TIMEOUT = 600.0
CONNECT_TIMEOUT = 5.0
"""The SDKs' own defaults for the whole request and for connecting, kept when only the stall timeout is set."""


def stall_timeout_default() -> float:
    """``BRUTE_STALL_TIMEOUT`` (seconds) if set, so a notebook can change it with ``%env``; else STALL_TIMEOUT."""
    raw = os.environ.get("BRUTE_STALL_TIMEOUT", "").strip()
    if not raw:
        return STALL_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ProviderNotConfiguredError(
            f"BRUTE_STALL_TIMEOUT={raw!r} is not a number of seconds above 0; set it like %env BRUTE_STALL_TIMEOUT=120")
    return value


def tool_specs(tools: Any) -> list[dict[str, JSON]]:
    """``env["tools"]`` (adapters with ``to_dict()``, plain dicts, or a name → adapter dict) as plain specs."""
    if not tools:
        return []
    items = tools.values() if isinstance(tools, Mapping) else tools
    specs = []
    for t in items:
        d = t.to_dict() if hasattr(t, "to_dict") else dict(t)
        if "server" in d:  # a tool the provider runs itself: each provider maps it (``server_tool_entries``)
            continue
        specs.append({"name": d["name"], "description": d.get("description") or "",
                      "parameters": d.get("parameters") or d.get("input_schema") or EMPTY_SCHEMA})
    return specs


def wrapped(transport: Any, reply: Any) -> Message:
    """The reply as a Message, the reply itself held for ``Message.raw`` (in memory: ``brute_nb.raw_replies``)."""
    data = as_data(reply)
    raw_replies.keep(data)
    message: Message = transport.wrap_one(data)
    return message


def kept(message: Message) -> Message:
    """A reply as the log keeps it, whichever way it came (streamed, whole, or read back from a batch): a key it
    quotes, in its text, a call's arguments or its own blocks, redacted (the blocks alike, so they still match the
    text they hold)."""
    if "blocks" in message.meta:
        message = message.replace(meta={**message.meta, "blocks": redact_value(message.meta["blocks"])})
    clean: Message = redacted(message)
    return clean


def server_tool_entries(api: str, tools: Any) -> list[dict[str, JSON]]:
    """The server tools among ``env["tools"]`` in ``api``'s form; a ServerToolError if it offers any of them not."""
    from brute_nb.tools.server import of
    from brute_nb.transports.server_tools import request_tools

    return request_tools(api, of(tools))


def server_tool_extras(api: str, tools: Any) -> dict[str, Any]:
    """What else the request needs for the server tools among ``env["tools"]`` (Anthropic's ``mcp_servers``)."""
    from brute_nb.tools.server import of
    from brute_nb.transports.server_tools import request_extras

    return request_extras(api, of(tools))


class Provider:
    """Base of OpenAIChat, OpenAIResponses and AnthropicMessages; subclasses implement ``_build`` and ``_complete``."""

    provider: ClassVar[str] = "provider"
    key_variable: ClassVar[str] = ""
    sdk: ClassVar[str] = "openai"
    """The SDK package the client comes from (its ``DefaultAsyncHttpxClient`` is the HTTP client)."""
    home_url: str | None = None
    """The provider's own URL, where a key from the environment may go (None: the SDK's default URL)."""
    base_url_variable: ClassVar[str | None] = None
    """The variable of the SDK's base URL: a key from the environment may go where the same environment says."""
    service: str | None = None
    """What errors call the server when it is not the API's owner (``Ollama`` behind the OpenAI API)."""
    unreachable_hint: str = ""
    """Said after "could not reach ...": what to start or set."""
    url_api: ClassVar[str] = "none"
    """The API whose URL sources the transport uses (``attachment_blocks.URL_KINDS``); other URL files are fetched."""
    fetch_transport: Any = None
    """The httpx2 transport URL attachments are fetched through (a test's MockTransport); None: the network."""
    native_schema: ClassVar[bool] = False
    """Sends ``env["schema"]`` as the API's own structured-output option; otherwise the reply is only validated
    after the fact, so a caller such as ``brute_nb.map`` asks for the JSON in the prompt too."""

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        record: str | None = None,
        replay: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        cache: bool | None = None,
        stall_timeout: float | None = None,
        **params: Any,
    ) -> None:
        if record and replay:
            raise ProviderNotConfiguredError("pass record=... or replay=..., not both")
        if stall_timeout is not None and stall_timeout <= 0:
            raise ProviderNotConfiguredError(f"stall_timeout={stall_timeout!r}: pass a number of seconds above 0")
        if params.get("extra_headers") is not None:
            from brute_nb.providers.options import header_problems, remember_secret_headers

            remember_secret_headers(params)
            problems = header_problems(params["extra_headers"])
            if problems:  # a key in a header would go wherever the client goes: credentials follow the host
                raise ProviderNotConfiguredError("; ".join(problems))
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        if is_key(api_key):
            remember(api_key)
        self.stream = stream
        self.record = str(record) if record else None
        self.replay = str(replay) if replay else None
        self.max_retries = max_retries
        self.timeout = timeout
        self.stall_timeout = stall_timeout if stall_timeout is not None else stall_timeout_default()
        self.params = params
        self.cache = cache
        """Prompt caching (see ``brute_nb.prompt_cache``); None lets the provider choose (on where the API has it)."""
        self._given_client = client
        self._clients: dict[Any, Any] = {}
        self._transport: Any = None
        self._calls = 0
        """Model calls in flight (``__call__``): ``aclose`` waits for them to end."""
        self._close_after = False

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def replaying(self) -> bool:
        """True when replies come from a cassette (the notebook footer says "replayed")."""
        return self.replay is not None

    def describe(self) -> str:
        if self.replay:
            return f"{self.label} (replayed from {self.replay})"
        if self.record:
            return f"{self.label} (recording to {self.record})"
        return self.label

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"

    @property
    def client(self) -> Any:
        """The async SDK client of the running event loop, built on first use there (with the record/replay
        transport when asked)."""
        return loop_local(self._clients, self._make_client, close=_close_client)

    def _timeouts(self) -> Any:
        """The SDK's ``timeout``: a stream's read timeout is the stall timeout (a non-streamed reply sends nothing
        until it is whole, so it keeps the SDK's own); ``timeout=`` bounds every phase."""
        if not self.stream:
            return self.timeout
        import httpx2

        total = self.timeout if self.timeout is not None else SDK_TIMEOUT
        connect = self.timeout if self.timeout is not None else CONNECT_TIMEOUT
        return httpx2.Timeout(total, connect=connect, read=min(total, self.stall_timeout))

    def _make_client(self) -> Any:
        import httpx2

        options: dict[str, Any] = {}
        if self.max_retries is not None:
            options["max_retries"] = self.max_retries
        elif self.replay:
            options["max_retries"] = 0  # a cassette mismatch is not worth retrying
        timeout = self._timeouts()
        if timeout is not None:
            options["timeout"] = timeout
        if self._transport is None and (self.record or self.replay):
            # one cassette position (or one recording) shared by every loop's client; a live session never
            # imports the record/replay module (a first cell's import, issue 29 §2)
            from brute_nb.providers.replay import http_transport

            self._transport = http_transport(self._given_client, record=self.record, replay=self.replay,
                                             secrets=[self.api_key])
        http = httpx2.AsyncClient(transport=self._transport) if self._transport is not None else None
        if self._given_client is not None:
            remember(getattr(self._given_client, "api_key", None))
            if http is not None:
                options["http_client"] = http
            return self._given_client.copy(**options) if options else self._given_client
        key = REPLAY_KEY if self.replay else self.host_key()
        http = http or self._http_client()
        try:
            client = self._build(base_url=self.base_url, api_key=key, http_client=http, **options)
        except Exception as exc:
            raise ProviderNotConfiguredError(no_key_message(self.provider, self.key_variable, exc)) from exc
        http.event_hooks = {**http.event_hooks, "request": [*http.event_hooks["request"],
                                                            strip_keys_off_origin(str(client.base_url)), announce]}
        return client

    def _sees_requests(self) -> bool:
        """Whether this provider's HTTP requests pass ``announce`` (a client it built); otherwise ``model_call``
        is emitted as the call starts."""
        return self._given_client is None

    def host_key(self) -> str | None:
        """The key for this client's host (``credentials.client_key``): None lets the SDK read its own variable."""
        homes = (self.home_url, os.environ.get(self.base_url_variable) if self.base_url_variable else None)
        key = client_key(provider=self.label.split(":")[0], key_variables=self.key_variables(), homes=homes,
                         base_url=self.base_url, api_key=self.api_key,
                         stored=lambda: keys.stored(self.key_name()))
        remember(key)
        return key

    def key_variables(self) -> tuple[str, ...]:
        """The environment variables this provider's key may come from (the SDK's own, for the built-ins)."""
        return (self.key_variable,) if self.key_variable else ()

    def key_name(self) -> str:
        """The name its key is stored under (``%brute keys set NAME``): the vendor's, whichever of its APIs."""
        return self.provider

    def _http_client(self) -> Any:
        """The SDK's own HTTP client (its timeouts, pool limits and keep-alive), built here so that the hook keeping
        keys at home (``strip_keys_off_origin``) can be added to it."""
        import importlib

        return importlib.import_module(self.sdk).DefaultAsyncHttpxClient()

    def _build(self, **options: Any) -> Any:
        raise NotImplementedError

    async def _complete(self, env: dict[str, Any]) -> Message:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close this provider's SDK clients (and their kept-alive connections) now, or when the model calls in
        flight end, so a running turn keeps its client; a later call makes a new one. A client passed as
        ``client=`` is the caller's, and a cassette's transport is shared by every client: neither is closed."""
        if self._given_client is not None or self._transport is not None:
            return
        if self._calls:
            self._close_after = True
            return
        await aclose_local(self._clients)

    async def __call__(self, env: dict[str, Any]) -> None:
        self._calls += 1
        try:
            await self._call(env)
        finally:
            self._calls -= 1
            if self._close_after and not self._calls:
                self._close_after = False
                await aclose_local(self._clients)

    async def _call(self, env: dict[str, Any]) -> None:
        if env.get("schema") is not None:
            structured.check(env["schema"])  # a bad schema is the caller's mistake, said before anything is sent
        started = time.monotonic()
        call = {"provider": self.provider, "model": self.model}
        token = _CALL.set([env, call]) if self._sees_requests() else None
        if token is None:
            emit(env, "model_call", call)
        try:
            message = await self._complete(await self._with_url_files(env))
        except ProviderError as exc:
            raise html_answer(exc, self.provider, self._url()) or exc from exc.__cause__  # e.g. a cut stream
        except BruteError:
            raise
        except Exception as exc:
            raise self._translate(redact_exception(exc)) from exc
        finally:
            if token is not None:
                _CALL.reset(token)
        meta: dict[str, JSON] = {
            "provider": self.provider,
            "model": message.meta.get("model") or self.model,
            "input_tokens": None, "output_tokens": None, "cache_read_tokens": None, "finish_reason": None,
            **message.meta,
            "duration_ms": int((time.monotonic() - started) * 1000),
            "created_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
        if self.replay:
            meta["replayed"] = True
        meta["cost"] = price(meta)
        schema = env.get("schema")
        if schema is not None and not message.tool_calls:
            meta[structured.SCHEMA_KEY] = structured.name_of(schema)
        # A reply quoting a key (the user's prompt held one), in its text or a call's arguments, keeps it out of
        # the log, and so out of every view, file and tool.
        env["messages"].append(kept(message.replace(meta=meta)))
        if schema is not None and not message.tool_calls:
            structured.validate(schema, message.content)  # after the append: the text the model sent is kept

    async def _with_url_files(self, env: dict[str, Any]) -> dict[str, Any]:
        """``env`` for this request, with the URL attachments the API cannot read fetched (the log keeps URLs)."""
        from brute_nb.providers.url_attachments import fetched

        replaced = await fetched(env["messages"], self.url_api, transport=self.fetch_transport)
        return env if replaced is None else {**env, "messages": replaced}

    def _translate(self, exc: Exception) -> BruteError:
        if is_timeout(exc) and self.stream:
            tries, waited = self._tries(), min(self.stall_timeout, self.timeout or self.stall_timeout)
            return ProviderError(
                f"{self.provider} timed out: no data arrived for {waited:g} s (the stream stalled)"
                f"{f' ({tries} tries)' if tries > 1 else ''}, so the call was given up and nothing was added to the "
                "log; run the cell again, or wait longer with %brute config stall_timeout=180 (stall_timeout=... from "
                "Python, or %env BRUTE_STALL_TIMEOUT=...)",
                provider=self.provider)
        error = translate_error(exc, self.provider, self.base_url, service=self.service, hint=self.unreachable_hint)
        if isinstance(error, ProviderError) and error.status == 401 and not self.replay:
            # A refused key is the user's to fix, not a model's: say which variable or setting it came from.
            source = key_source(api_key=self.api_key, key_variables=self.key_variables(), stored_name=self.key_name(),
                                stored=lambda: keys.stored(self.key_name()))
            if self._given_client is not None:
                source = "the client passed as client=..."
            return type(error)(f"{error} The key came from {source}: check it, or set another and run the cell "
                               "again.", status=error.status, provider=error.provider)
        return error

    def _url(self) -> str | None:
        client: Any = next(iter(self._clients.values()), None)
        return self.base_url or (str(client.base_url) if hasattr(client, "base_url") else None)

    def _tries(self) -> int:
        retries = self.max_retries if self.max_retries is not None else getattr(self.client, "max_retries", 0)
        return int(retries) + 1


_CALL: ContextVar[list[Any]] = ContextVar("brute_nb_model_call")
"""``[env, payload]`` of the model call this task is making, emptied once its first request is out."""


async def announce(request: Any) -> None:
    """An httpx2 request hook: the first HTTP request of a model call emits ``model_call`` as it goes out, after
    the SDK has built it (what the notebook's warm-up waits for: ~40 ms of a first call's CPU is the SDK's)."""
    pending = _CALL.get(None)
    if pending:
        env, call = pending
        pending.clear()
        emit(env, "model_call", call)


async def _close_client(client: Any) -> None:
    await client.close()


