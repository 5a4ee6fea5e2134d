"""``Profile``: the record of what brute_nb knows about one provider kind. Its own module, importing nothing of ours,
so the built-in profiles (and ``providers.factories``, which the foundation's ``plugins`` reads) can use it without
reaching the registry in ``profiles/__init__``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    """What brute_nb knows about one provider kind (the ``KIND`` of ``-m KIND:MODEL``)."""

    kind: str
    title: str
    """How a message names the vendor or server (``Anthropic``, ``Ollama``)."""
    default_model: str = ""
    model_variable: str | None = None
    """A variable naming the default model instead (``OLLAMA_MODEL``)."""
    key_name: str | None = None
    """What its key is stored under (``%brute keys set NAME``); None: the kind itself. One vendor, one key: both
    OpenAI APIs keep OpenAI's."""
    key_variables: tuple[str, ...] = ()
    """The variables its key may come from (the SDK's own, or the endpoint's), first wins."""
    chosen_by: tuple[str, ...] = ()
    """The variables whose presence makes ``auto()`` (and the warm-up) pick this kind with no ``-m``."""
    secret_variables: tuple[str, ...] = ()
    """Further variables its SDK reads a secret from: redacted wherever they show up, like the keys."""
    base_url: str | None = None
    """Its own URL (where a key from the environment may go); None: the SDK's default."""
    base_url_variable: str | None = None
    """The variable the SDK reads a base URL from (a key from the environment may go there too)."""
    host_variable: str | None = None
    """A variable that configures a local server needing no key (``OLLAMA_HOST``)."""
    price_id: str | None = None
    """genai-prices' provider id for the replies it records; None: never priced."""
    sdk: str | None = None
    """The SDK package its provider calls (imported lazily, by the provider and the warm-up only)."""
    timeout_errors: tuple[str, ...] = ()
    connection_errors: tuple[str, ...] = ()
    """Class names in ``sdk`` that mean a timeout / an unreachable server (looked up only once ``sdk`` is loaded)."""
    error_statuses: tuple[tuple[str, int], ...] = ()
    """(error type or code, HTTP status) from its API's error table (``overloaded_error`` is a 529): an error its
    API sends inside a stream that began with 200 is the failure of that status, retried as the SDK retries it
    (``providers.failures.stream_error``); a type or code not listed is not retried."""
    options_call: tuple[str, str, str] | None = None
    """(module, class, label) of the SDK method ``-o`` options are checked against."""
    beta_options_call: tuple[str, str, str] | None = None
    """A beta method whose own parameters the options may use too (the provider then calls it)."""
    betas: tuple[tuple[str, str], ...] = ()
    """What in a request its API takes only under a beta header, and that beta: a request parameter, a tool's
    ``type`` or a content block's ``type`` sent back (``("mcp_tool_use", "mcp-client-2025-11-20")``); a request
    carrying one is sent with its beta (``providers.betas``)."""
    model_prefixes: tuple[str, ...] = ()
    """Bare model names that mean this kind (``-m claude-x`` with no ``KIND:``)."""
    attachment_api: str | None = None
    """Which API's URL attachment kinds its requests use (``transports.attachment_blocks.URL_KINDS``)."""
    server_tools_api: str | None = None
    """Which API's server tools it runs (``transports.server_tools``); None: none."""
    structured_output: str | None = None
    """The request field its structured output goes in; None: the reply is only validated after the fact."""
    cache_breakpoints: int = 0
    """How many ``cache_control`` marks a request may carry (0: the API caches prefixes on its own)."""
    cache_key_field: str | None = None
    """The request field routing one session to one cache (``prompt_cache_key``)."""
    count_tokens: str | None = None
    """``module:attribute`` of its token-count endpoint call; None: a tokenizer or an estimate."""
    beta_count_tokens: str | None = None
    """The beta API's token-count call, for a request carrying a parameter only its beta call takes (``betas``,
    ``mcp_servers``): the plain one would drop them, and the API refuse the features they turn on."""
    batch: str | None = None
    """``module:attribute`` of its batch API (``map(..., batch=True)``); None: it has none."""
    input_excludes_cache: bool = False
    """Its API's raw input count leaves cache reads and writes out (old session lines hold that raw count)."""
    warm_modules: tuple[str, ...] = ()
    """What the warm-up imports for it, in order: its SDK, its HTTP stack's lazy parts, its provider module."""
    warm_schemas: str | None = None
    """A module whose ``build_schemas`` builds the SDK models a reply needs (under its ``BUILD_LOCK``)."""
    unreachable_hint: str = ""
    """Said after "could not reach ...": what to start or set."""
    request_bytes: int | None = None
    """The most its API takes in one request (what an attachment may weigh), when it documents a limit."""
    image_bytes: int | None = None
    """The most its API takes for one image, when it documents a limit."""
    key_prefixes: tuple[str, ...] = ()
    """How its keys begin (``sk-ant-``): a key box picks this provider as one is pasted."""

    @property
    def stored_as(self) -> str:
        """The name its key is stored under."""
        return self.key_name or self.kind

    def key(self, environ: Mapping[str, str] = os.environ) -> str | None:
        """The first of its key variables that is set."""
        return next((environ[k] for k in self.key_variables if environ.get(k)), None)

    def chosen(self, environ: Mapping[str, str] = os.environ) -> bool:
        """Whether the environment picks this kind for ``auto()``."""
        return any(environ.get(k) for k in self.chosen_by)

    def model(self, environ: Mapping[str, str] = os.environ) -> str:
        """The model it uses when none is named."""
        return (environ.get(self.model_variable) if self.model_variable else None) or self.default_model
