"""Import what the first ``%%brute`` cell needs in the background right after ``%load_ext``: the model SDK, then
brute_nb's own stack, so the first cell (Run All included) does not pay for them.

``%load_ext`` stays fast because nothing heavy is imported on its path, which left the SDK (``anthropic`` is
~1 s of imports) and brute_nb's stack (built-in tools, the provider, the session agent, ``genai_prices``,
``mistune``, ``filelock``: ~0.5 s more) to the first cell. While the user is still typing, a daemon thread imports
them instead.

The thread works in two phases. First what a cell needs to send its request (the SDK, the provider, the stack
it builds); then what only a reply needs (the SDK's pydantic schemas for the stream's events, pricing's data
tables, the Markdown renderer and sanitiser), which it builds and imports while that request is in flight: on a Run
All, where the first ``%%brute`` cell runs right after ``%load_ext``, the model's time to first token pays for them
instead of the cell (issue 29 §2). The first phase ends by reading the notebook's current session ahead
(``preload.py``), which a first turn would otherwise parse itself (issue 29 §5). When a cell is already waiting
as the first phase ends, the second waits until that cell's request is on its way (the ``model_call`` event,
``request_out``): under the GIL the two would share the CPU, and the thread's ~80 ms of schemas and imports went
before the request (measured: it went out ~100 ms later).

The invariant: no deadlock and no half-imported module. A cell waits for the first phase (``settled``) before it
imports anything itself, ``%%brute`` and the runner both, since the SDKs' own lazy submodules are not safe to
import from two threads at once; the second phase imports plain packages and brute_nb modules, which a cell that
needs one sooner waits for on its module lock. Any import racing the thread can only wait on a module lock, never
deadlock, since brute_nb's imports have no cycle (``tests/core/test_package_layers.py``). The schemas are built
holding the provider's ``BUILD_LOCK``, taken before the first phase ends, and the turn waits on it before it reads
its reply (``anthropic_stream.schemas_built``), so the two never build the same pydantic models at once. The thread
builds no client (which event loop a client lives on is the kernel's business) and never fails anything: a module that
cannot be imported is left for the cell, which imports it again and reports the real error.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from brute_nb.providers.profiles import Profile

STACK = ("filelock", "anyio._backends._asyncio", "brute_nb.providers.auto",
         "brute_nb.providers.builtin", "brute_nb.agent", "brute_nb.tools.builtin",
         "brute_nb.middleware", "brute_nb.notebook.session", "brute_nb.notebook.stack", "brute_nb.notebook.runner",
         "brute_nb.notebook.commands.cell_turn", "brute_nb.middleware.session_log",
         "brute_nb.middleware.system_prompt", "brute_nb.middleware.tool_result_loop",
         "brute_nb.middleware.tool_pipeline", "brute_nb.middleware.compaction", "brute_nb.compaction",
         "brute_nb.notebook.kernel_tools.cell_tools", "brute_nb.notebook.kernel_tools.notebook_tools",
         "brute_nb.notebook.kernel_tools.kernel_journal",
         "brute_nb.providers.options", "brute_nb.providers.aliases", "brute_nb.providers.url_attachments",
         "importlib.metadata", "brute_nb.notebook.paths",
         "brute_nb.notebook.kernel_tools.environment",
         "brute_nb.tools.server", "brute_nb.transports.server_tools", "brute_nb.notebook.approvals",
         "brute_nb.middleware.approvals", "brute_nb.middleware.budget", "brute_nb.middleware.final_answer",
         "brute_nb.middleware.doom_loop", "brute_nb.middleware.partial_reply", "brute_nb.middleware.turn_context",
         "brute_nb.middleware.retry", "brute_nb.middleware.stack", "brute_nb.tools.selection",
         "concurrent.futures.thread", "platformdirs")
"""What the first cell imports after the SDK to send its request (seen with ``sys.modules`` around it), in the
order it needs them (``platformdirs``: the user's config folder, where aliases and stored keys live).
``tests/notebook/test_warm_list.py`` fails when a first turn on any SDK's path imports a module not warmed here, or
when a module listed here is one no first turn imports."""
REPLY = ("genai_prices", "genai_prices.data", "genai_prices.decompose", "genai_prices.validation",
         "brute_nb.notebook.views.render", "mistune", "mistune.plugins.url",
         "nh3", "brute_nb.notebook.views.terminal")
"""What only the reply needs: pricing (``genai_prices.data`` is its price tables as Python literals, the largest
module of the first cell) and the final render. Imported after ``STACK``, while the first request is in flight."""


def chosen(environ: Mapping[str, str] = os.environ) -> Profile | bool | None:
    """The profile of the model the environment chooses, told the way ``providers.auto`` picks one and from brute_nb's
    own profiles alone (no package metadata is read on ``%load_ext``'s path): ``BRUTE_MODEL``'s ``KIND:``, else a
    bare model name's prefix, else the first profile a variable chooses. None when nothing does, or when only another
    package's profile may name the kind (``declared_modules`` asks, on the thread); False when the choice needs an
    import to tell (a built-in provider with no profile, ``llm:``)."""
    from brute_nb import plugins
    from brute_nb.providers import profiles

    spec = environ.get("BRUTE_MODEL") or ""
    kind, sep, _ = spec.partition(":")
    if sep and kind:
        found = next((p for p in profiles.builtin() if p.kind == kind), None)
        return found if found is not None else False if kind in plugins.builtin(plugins.PROVIDERS) else None
    named = next((p for p in profiles.builtin() if spec and p.model_prefixes and spec.startswith(p.model_prefixes)),
                 None)
    return named or next((p for p in profiles.builtin() if p.chosen(environ)), None)


def modules_of(profile: Profile | None) -> tuple[str, ...]:
    """What warming ``profile``'s model imports: its SDK and provider (``Profile.warm_modules``), then the stack."""
    return profile.warm_modules + STACK if profile is not None and profile.warm_modules else ()


def sdk_modules(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """What the configured model will import (``chosen``), then brute_nb's stack.

    Empty when nothing is configured or the choice needs an import to tell (an ``llm:`` plugin model, or a kind
    only another package's profile may name: ``declared_modules`` asks on the thread).
    """
    found = chosen(environ)
    return modules_of(found) if isinstance(found, Profile) else ()


def declared_modules(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """``sdk_modules`` of a ``BRUTE_MODEL`` whose kind another package's profile declares (read on the thread:
    looking it up reads the installed packages' metadata)."""
    from brute_nb.providers import profiles

    kind, sep, _ = (environ.get("BRUTE_MODEL") or "").partition(":")
    return modules_of(profiles.of(kind)) if sep and kind and chosen(environ) is None else ()


def may_use_saved_key(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``providers.auto`` would look at the stored keys, told from the environment alone (no file is read
    on ``%load_ext``'s path): nothing in the environment chose, and no ``provider:`` prefix names one."""
    return chosen(environ) is None and ":" not in (environ.get("BRUTE_MODEL") or "")


def saved_sdk_modules() -> tuple[str, ...]:
    """``sdk_modules`` for a kernel whose only key is a stored one (``brute-nb keys set``), read on the warm-up's
    thread: the first provider, in ``auto()``'s order, that a key is stored for. Empty when no key is stored or the
    file cannot be read (the cell reports that)."""
    try:
        from brute_nb.providers import keys, profiles  # light: our leaves, stdlib and the profiles' data

        saved = {name for name, key in keys.load().items() if key}
    except Exception:  # the cell reads the file again and shows the real error
        return ()
    return modules_of(next((p for p in profiles.builtin() if p in profiles.keyed() and p.kind in saved), None))


def schemas_for(modules: tuple[str, ...]) -> str | None:
    """The module that builds the stream schemas of the profile whose modules ``modules`` start with, if any."""
    from brute_nb.providers import profiles

    return next((p.warm_schemas for p in profiles.every()
                 if p.warm_schemas and p.warm_modules and modules[:len(p.warm_modules)] == p.warm_modules), None)


def warm(modules: tuple[str, ...], later: tuple[str, ...] = (), sendable: threading.Event | None = None,
         schemas: str | None = None, ahead: Callable[[], object] | None = None) -> None:
    """Import ``modules``, run ``ahead`` (the session read ahead), take ``schemas``' build lock, set ``sendable``,
    build its schemas, then import ``later``.

    The lock is taken before ``sendable`` is set: from then on a cell may send its request, and its turn must find
    the build either done or in progress (it waits), never not yet begun (it would build the same models itself)."""
    lock: Any = None
    builder: Any = None
    try:
        for name in modules:
            with contextlib.suppress(Exception):  # the cell imports it again and shows the real error
                importlib.import_module(name)
        if ahead is not None:
            with contextlib.suppress(Exception):
                ahead()
        if schemas is not None:
            with contextlib.suppress(Exception):
                builder = importlib.import_module(schemas)
                lock = builder.BUILD_LOCK
                lock.acquire()
    finally:
        if sendable is not None:
            sendable.set()
    if _cell_waiting.is_set():
        _request_out.wait(REQUEST_WAIT)
    if lock is not None:
        try:
            builder.build_schemas()
        finally:
            lock.release()
    for name in later:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def warm_chosen(modules: tuple[str, ...], sendable: threading.Event, ahead: Callable[[], object] | None) -> None:
    """``warm`` the SDK the environment chose, else the one a stored key chooses (read here, on the thread), else
    nothing: the first phase is over at once and the first cell offers a box for a key."""
    picked = modules or declared_modules() or saved_sdk_modules()
    if not picked:
        sendable.set()
        return
    warm(picked, REPLY, sendable, schemas_for(picked), ahead)


_thread: threading.Thread | None = None
_sendable = threading.Event()
"""Set when the warm-up's first phase is over: a cell may import the SDK and build its request."""
_cell_waiting = threading.Event()
"""Set when a turn waits for the first phase (``turn``): the second phase then waits for ``_request_out``."""
_request_out = threading.Event()
"""Set when the first cell's request is about to go out, or its turn ended without one."""
REQUEST_WAIT = 30.0
"""The longest the second phase waits for a cell's request: a cell that never sends one (a confirmation left
unanswered) must not keep its work, and the schema build lock a reply waits on, from every later cell."""


def start(environ: Mapping[str, str] = os.environ, ahead: Callable[[], object] | None = None
          ) -> threading.Thread | None:
    """Start warming the configured SDK's and the stack's imports on a daemon thread (None when the environment
    rules a model out, an ``llm:`` one; when it names none, the thread reads the stored keys first and, finding
    none, imports nothing more: the first cell will offer a box for a key, and the stack is not worth importing).
    ``ahead`` ends the first phase: the front end hands down its read ahead of the current session."""
    global _thread, _sendable, _cell_waiting, _request_out
    modules = sdk_modules(environ)
    if not modules and not may_use_saved_key(environ) and chosen(environ) is not None:
        return None
    _sendable, _cell_waiting, _request_out = threading.Event(), threading.Event(), threading.Event()
    _thread = threading.Thread(target=warm_chosen, args=(modules, _sendable, ahead),
                               name="brute-warm-sdk", daemon=True)
    _thread.start()
    return _thread


def settled(timeout: float = 60.0, *, turn: bool = False) -> None:
    """Wait for the warm-up's first phase before a cell imports the SDK itself.

    Two threads importing one large package at once is not safe in practice: the openai SDK's lazy submodules,
    imported by a cell while the warm-up is still inside ``import openai``, failed with ``KeyError: 'openai'``.
    Waiting costs nothing the cell would not pay anyway (it needs the same modules), and after the first cell the
    thread is long done. The second phase (``REPLY``) is not waited for: the request goes out meanwhile.

    ``turn``: the caller is about to run a turn and tells the second phase when its request is out, or when it is
    over (``turn()`` does both); only such a caller makes the second phase wait, so that no other (a ``%brute``
    line, the chat widget) can leave it, and the schema build lock a reply waits on, held for ``REQUEST_WAIT``.
    """
    thread = _thread
    if thread is not None and thread.is_alive() and thread is not threading.current_thread():
        if turn:
            _cell_waiting.set()
        _sendable.wait(timeout)


@contextlib.contextmanager
def turn(timeout: float = 60.0) -> Iterator[bool]:
    """``settled`` for a turn about to be run: yields whether the second phase waits for its request (then subscribe
    ``request_out`` to its ``model_call``), and lets the second phase go on when the turn is over, however it ends."""
    try:
        settled(timeout, turn=True)  # inside: an interrupt while waiting must let the second phase go on too
        yield waiting_for_request()
    finally:
        request_out()


def waiting_for_request() -> bool:
    """Whether the warm-up's second phase waits for a turn's request (``request_out``): the turn then tells it."""
    return _cell_waiting.is_set() and not _request_out.is_set()


def request_out(*_: Any) -> None:
    """The cell's request is on its way, or its turn ended without one: the second phase may begin. Takes and
    ignores an event's ``(env, payload)``, so it can be subscribed to ``model_call`` as it is."""
    _request_out.set()
