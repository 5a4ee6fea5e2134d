"""``%load_ext brute_nb`` stays light, and the lazily loaded public names still import as before.

The load check runs in a fresh process (this test process has imported everything long ago): a bare IPython
shell, ``%load_ext``, the overflow cleanup thread joined, then the modules that appeared are compared.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import brute_nb
import brute_nb.middleware
import brute_nb.tools

ROOT = Path(__file__).resolve().parents[2]

LOAD = """
import json, sys, threading
import IPython
ip = IPython.InteractiveShell.instance()
before = set(sys.modules)
ip.run_line_magic('load_ext', 'brute_nb')
for t in threading.enumerate():
    if t.name in ('brute-cleanup', 'brute-warm-sdk'):
        t.join(10)  # brute_nb.tools.truncation, and the keys file's reader with no key set: light too
print(json.dumps(sorted(set(sys.modules) - before)))
"""

# The SDKs here sit on httpx2 (not httpx); both are listed so neither creeps into the load path.
HEAVY = {"openai", "anthropic", "pandas", "numpy", "ipywidgets", "anywidget", "anyio", "httpx", "httpx2", "filelock",
         "mistune", "bs4", "markdownify"}
# What %load_ext may import of ours: the hooks, the magics and what they need to parse options.
ALLOWED_OURS = {
    "brute_nb",
    "brute_nb._lazy",
    "brute_nb.env",  # the env's type, which tools.context names; typing only
    "brute_nb.errors",
    "brute_nb.notebook",
    "brute_nb.notebook.front",  # the layer folders' own modules: docstrings only
    "brute_nb.notebook.kernel_tools",
    "brute_nb.notebook.views",
    "brute_nb.notebook.kernel_tools.cells",
    "brute_nb.notebook.views.frame_view",  # the log frames' display, stdlib only until a frame is shown
    "brute_nb.notebook.front.magics",
    "brute_nb.notebook.front.subcommands",  # the line magic's table: what each runs it imports when it runs
    "brute_nb.notebook.front.load_again",  # a quiet second %load_ext, stdlib only
    "brute_nb.notebook.front.config_help",  # %brute config? read as brute_nb's help: the settings table only
    "brute_nb.transports",  # the transports load on first use (_lazy); its own module is a table of names
    "brute_nb.transports.server_tool_names",  # the server tools the helps list, stdlib only
    "brute_nb.notebook.front.map_api",  # the kernel's context handed to the map engine; stdlib only until a run
    "brute_nb.map",  # the engine's names load on first use (pandas with them)
    "brute_nb.map.context",  # what a run takes from its driver, stdlib only
    "brute_nb.map.pandas_hook",  # df.brute follows pandas' import (a finder, stdlib only)
    "brute_nb.fill",  # {expr} filling, stdlib only
    "brute_nb.amounts",  # the number parsers settings and the magics share, stdlib only
    "brute_nb.notebook.registry",
    "brute_nb.notebook.settings",
    "brute_nb.notebook.views.short_errors",  # the one-line error handler, installed at load (stdlib only)
    "brute_nb.redact",  # stdlib only; overflow files (truncation, cleaned at load) are redacted
    # the providers' profiles: plain data (the key variables redaction watches, the warm-up's modules)
    "brute_nb.providers.profiles",
    "brute_nb.providers.profiles.profile",
    "brute_nb.providers.factories",  # the built-in providers' table (plugins, the kernel tools' registry, reads it)
    "brute_nb.providers.profiles.anthropic",
    "brute_nb.providers.profiles.openai",
    "brute_nb.providers.profiles.compatible",
    "brute_nb.confine",  # stdlib only; the overflow cleanup at load opens only what confinement allows
    "brute_nb.notebook.warm",
    "brute_nb.plugins",  # the kernel's tools registered by name; stdlib only until a name is looked up
    "brute_nb.notebook.preload",  # stdlib only; what it reads ahead it imports in the warm-up thread
    "brute_nb.tools",
    "brute_nb.tools.context",
    "brute_nb.tools.truncation",
    # Nothing in the environment chose a model: the warm-up's thread reads the keys file (stdlib and these only).
    "brute_nb.providers",
    "brute_nb.providers.keys",
    "brute_nb.providers.user_config",
}


KEY_FILE_READER = {"brute_nb.providers", "brute_nb.providers.keys", "brute_nb.providers.user_config"}
"""What the warm-up thread imports to learn whether a key is saved: the keys file's reader, stdlib and ours only."""
assert KEY_FILE_READER <= ALLOWED_OURS
MODEL_SETTINGS = {"BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST", "GEMINI_API_KEY",
                  "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "MISTRAL_API_KEY"}


def _fresh(code: str, tmp: Path, **environ: str) -> str:
    env = {key: value for key, value in os.environ.items() if key not in MODEL_SETTINGS}  # no SDK warm-up
    env.update(PYTHONPATH=str(ROOT), BRUTE_NB_OVERFLOW_DIR=str(tmp / "overflow"), **environ)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_load_ext_imports_nothing_heavy(tmp_path: Path) -> None:
    loaded = set(json.loads(_fresh(LOAD, tmp_path)))
    assert "brute_nb.notebook.front.magics" in loaded  # the check itself worked: the extension did load
    assert not {m.split(".")[0] for m in loaded} & HEAVY, sorted(loaded)
    ours = {m for m in loaded if m.startswith("brute_nb")}
    assert ours <= ALLOWED_OURS, sorted(ours - ALLOWED_OURS)


def test_heavy_guard_names_what_the_sdks_really_import(tmp_path: Path) -> None:
    # The guard is only worth something if it lists the HTTP library the SDKs pull in: build a client, see.
    out = _fresh("import sys, openai\nopenai.AsyncOpenAI(api_key='k')\n"
                 "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} & {'httpx', 'httpx2'})))", tmp_path)
    assert set(out.split()) and set(out.split()) <= HEAVY


SUBPACKAGES = """
import sys, brute_nb
touched = {
    "middleware": brute_nb.middleware.SessionLog.__name__,
    "tools": brute_nb.tools.Adapter.__name__,
    "providers": brute_nb.providers.auto.__name__,
    "compaction": brute_nb.compaction.Summary.__name__,
    "transports": brute_nb.transports.OpenAI.__name__,
    "frames": brute_nb.frames.frame.__name__,
    "testing": brute_nb.testing.FakeProvider.__name__,
}
print(touched == {"middleware": "SessionLog", "tools": "Adapter", "providers": "auto", "compaction": "Summary",
                  "transports": "OpenAI", "frames": "frame", "testing": "FakeProvider"},
      callable(brute_nb.agent), "middleware" in dir(brute_nb), "event_loop" in dir(brute_nb))
"""


def test_subpackages_are_attributes_imported_on_first_touch(tmp_path: Path) -> None:
    # SPEC 1 lazy submodules: ``import brute_nb`` then ``brute_nb.middleware.SessionLog`` with no other import.
    assert _fresh(SUBPACKAGES, tmp_path).split() == ["True", "True", "True", "True"]
    untouched = _fresh("import sys, brute_nb\nprint('brute_nb.middleware' in sys.modules)", tmp_path)
    assert untouched.split() == ["False"]  # the attribute is there to touch, not imported up front


WARM = """
import json, sys, threading
import IPython
ip = IPython.InteractiveShell.instance()
ip.run_line_magic('load_ext', 'brute_nb')
for t in threading.enumerate():  # the overflow cleanup imports brute_nb's truncation on its own thread
    if t.name == 'brute-cleanup':
        t.join(60)
ours = {m for m in sys.modules if m.startswith('brute_nb')}
warming = [t for t in threading.enumerate() if t.name == 'brute-warm-sdk']
for t in warming:
    t.join(60)
print(json.dumps({"warming": len(warming), "sdks": sorted({'anthropic', 'openai'} & set(sys.modules)),
                  "ours_after": sorted({m for m in sys.modules if m.startswith('brute_nb')} - ours),
                  "stack": sorted({'genai_prices', 'mistune', 'filelock'} & set(sys.modules))}))
"""


@pytest.mark.parametrize(("environ", "sdk"), [
    ({"ANTHROPIC_API_KEY": "sk-test"}, "anthropic"),
    ({"OPENAI_API_KEY": "sk-test"}, "openai"),
    ({"BRUTE_MODEL": "openai:gpt-4.1", "ANTHROPIC_API_KEY": "sk-test"}, "openai"),
])
def test_load_ext_warms_the_configured_sdk_in_the_background(tmp_path: Path, environ: dict[str, str],
                                                            sdk: str) -> None:
    """The first %%brute cell finds the SDK imported, and brute_nb's own stack (issue 29: 82% of a Run All first
    cell was that stack, imported lazily by the cell): the provider, the built-in tools, the session agent."""
    got = json.loads(_fresh(WARM, tmp_path, **environ))
    assert got["warming"] == 1 and got["sdks"] == [sdk] and got["stack"] == ["filelock", "genai_prices", "mistune"]
    assert {f"brute_nb.providers.{sdk}", "brute_nb.tools.builtin", "brute_nb.notebook.session",
            "brute_nb.notebook.runner", "brute_nb.agent"} <= set(got["ours_after"])


@pytest.mark.parametrize(("saved", "sdk"), [({"anthropic": "sk-ant-saved"}, "anthropic"),
                                           ({"openai": "sk-saved"}, "openai"),
                                           ({"mistral": "saved-mistral-key"}, "openai")])
def test_a_saved_key_alone_warms_its_sdk(tmp_path: Path, saved: dict[str, str], sdk: str) -> None:
    """README's way in is ``brute-nb keys set anthropic``, with nothing in the environment: the warm-up reads the
    keys file on its thread (never on ``%load_ext``'s path) and imports that provider's SDK and the stack."""
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    (config / "keys.json").write_text(json.dumps(saved))
    (config / "keys.json").chmod(0o600)
    got = json.loads(_fresh(WARM, tmp_path, BRUTE_NB_CONFIG_DIR=str(config)))
    assert got["sdks"] == [sdk] and got["stack"] == ["filelock", "genai_prices", "mistune"]
    assert {f"brute_nb.providers.{sdk}", "brute_nb.notebook.session", "brute_nb.agent"} <= set(got["ours_after"])


def test_nothing_configured_warms_nothing(tmp_path: Path) -> None:
    """No key anywhere: the thread reads the (absent) keys file and stops; no SDK, no stack, nothing heavy."""
    got = json.loads(_fresh(WARM, tmp_path, BRUTE_NB_CONFIG_DIR=str(tmp_path / "no-config")))
    assert got["sdks"] == [] and got["stack"] == []
    assert set(got["ours_after"]) <= KEY_FILE_READER, got["ours_after"]


def test_a_submodule_import_does_not_shadow_a_public_name(tmp_path: Path) -> None:
    # ``import brute_nb.agent`` before anyone asked for ``brute_nb.agent``: the import system then sets the
    # package attribute to the module; the name must still be the builder function.
    out = _fresh("import brute_nb.agent\nfrom brute_nb import agent\nimport brute_nb\n"
                 "print(callable(agent), brute_nb.agent is agent, type(brute_nb.agent).__name__)", tmp_path)
    assert out.split() == ["True", "True", "function"]


@pytest.mark.parametrize("package", [brute_nb, brute_nb.middleware, brute_nb.tools])
def test_every_public_name_resolves(package: ModuleType) -> None:
    for name in package.__all__:
        value = getattr(package, name)
        assert not isinstance(value, ModuleType), name
        assert name in dir(package)
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_lazy_names_are_the_defining_modules_objects() -> None:
    from brute_nb import Message, agent, frame
    from brute_nb.middleware import SessionLog
    from brute_nb.tools import ALL, FSRead, toolset

    assert agent is importlib.import_module("brute_nb.agent").agent
    assert Message is importlib.import_module("brute_nb.message").Message
    assert frame is importlib.import_module("brute_nb.frames").frame
    assert SessionLog is importlib.import_module("brute_nb.middleware.session_log").SessionLog
    assert FSRead in ALL and any(isinstance(t, FSRead) for t in toolset())
    from brute_nb.tools import stores  # a submodule through ``from package import``, as before

    assert isinstance(stores, ModuleType)


def test_brute_help_keeps_the_real_usage() -> None:
    from brute_nb.notebook.front.magics import BruteMagics

    doc = BruteMagics.brute.__doc__ or ""
    assert "--session" in doc and "--replay" in doc and "Talk to the agent" in doc


ROUND_TRIP = """
import json, os, sys, threading, time
from pathlib import Path
import IPython
ip = IPython.InteractiveShell.instance()
old, new = Path(sys.argv[1]) / "tool_old.txt", Path(sys.argv[1]) / "tool_new.txt"
week_ago = time.time() - 8 * 86400
os.utime(old, (week_ago, week_ago))
names = set(ip.user_ns)
ip.run_line_magic('load_ext', 'brute_nb')
for t in threading.enumerate():
    if t.name == 'brute-cleanup':
        t.join(10)
loaded = {"line": 'brute' in ip.magics_manager.magics['line'], "cell": 'brute' in ip.magics_manager.magics['cell'],
          "old_kept": old.exists(), "new_kept": new.exists()}
ip.run_line_magic('unload_ext', 'brute_nb')
import brute_nb.notebook.registry as registry
print(json.dumps({**loaded, "after_line": 'brute' in ip.magics_manager.magics['line'],
                  "after_cell": 'brute' in ip.magics_manager.magics['cell'],
                  "classes": [c for c in ip.magics_manager.registry if 'Brute' in c],
                  "registry": registry._registry is not None,
                  "new_names": sorted(set(ip.user_ns) - names - {'_', '__', '___', '_i', '_ii', '_iii', '_oh',
                                                                   '_dh', 'In', 'Out', '_ih', '_sh', 'exit',
                                                                   'quit', 'get_ipython'})}))
"""


def test_load_cleans_old_overflow_files_and_unload_leaves_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "tool_old.txt").write_text("a week-old tool output")
    (tmp_path / "tool_new.txt").write_text("today's tool output")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BRUTE_NB_OVERFLOW_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", ROUND_TRIP, str(tmp_path)], capture_output=True, text=True,
                         env=env, cwd=tmp_path, check=True).stdout
    seen = json.loads(out.splitlines()[-1])
    assert seen["line"] and seen["cell"]  # %brute and %%brute registered
    assert not seen["old_kept"] and seen["new_kept"]  # files older than 7 days went at load, newer ones stay
    assert not seen["after_line"] and not seen["after_cell"] and seen["classes"] == []
    assert seen["registry"] is False and seen["new_names"] == []


def test_a_cell_waits_for_what_its_request_needs_not_for_what_the_reply_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run All: the first %%brute cell right after %load_ext sends its request once the SDK and the stack are in;
    pricing's tables and the renderer import while the request is in flight (issue 29 §2)."""
    import threading
    from types import SimpleNamespace

    from brute_nb.notebook import warm

    release, imported = threading.Event(), []

    def import_module(name: str) -> None:
        if name == "reply.module":
            release.wait(60)
        imported.append(name)

    monkeypatch.setattr(warm, "importlib", SimpleNamespace(import_module=import_module))
    monkeypatch.setattr(warm, "sdk_modules", lambda environ=None: ("sdk.module", "stack.module"))
    monkeypatch.setattr(warm, "REPLY", ("reply.module",))
    monkeypatch.setattr(warm, "_thread", None)
    thread = warm.start()
    assert thread is not None
    settled = threading.Event()
    threading.Thread(target=lambda: (warm.settled(timeout=60), settled.set()), daemon=True).start()
    assert settled.wait(10), "settled() waited for the reply's modules too"
    assert imported == ["sdk.module", "stack.module"] and thread.is_alive()
    release.set()
    warm.request_out()
    thread.join(10)
    assert imported == ["sdk.module", "stack.module", "reply.module"]


def test_with_a_cell_waiting_the_reply_side_waits_for_its_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the GIL the warm-up's reply-side work (~80 ms of schemas and imports) shared the CPU with the first
    cell building its request, which went out ~100 ms later than a raw SDK cell's: with a cell waiting, that work
    starts when the cell's request is out (issue 29 §2); with none (the user typing), at once."""
    import threading
    import time
    from types import SimpleNamespace

    from brute_nb.notebook import warm

    release, imported = threading.Event(), []

    def import_module(name: str) -> None:
        if name == "sdk.module":
            release.wait(60)
        imported.append(name)

    monkeypatch.setattr(warm, "importlib", SimpleNamespace(import_module=import_module))
    monkeypatch.setattr(warm, "sdk_modules", lambda environ=None: ("sdk.module",))
    monkeypatch.setattr(warm, "REPLY", ("reply.module",))
    monkeypatch.setattr(warm, "_thread", None)
    thread = warm.start()
    assert thread is not None
    cell = threading.Thread(target=warm.settled, kwargs={"timeout": 60, "turn": True}, daemon=True)
    cell.start()
    while not warm.waiting_for_request():  # the cell waits on the first phase
        time.sleep(0.005)
    release.set()
    cell.join(10)
    time.sleep(0.2)
    assert imported == ["sdk.module"] and thread.is_alive()  # the cell is building its request
    warm.request_out()
    thread.join(10)
    assert imported == ["sdk.module", "reply.module"] and not warm.waiting_for_request()

    imported.clear()  # no cell: the second phase follows the first at once
    thread = warm.start()
    assert thread is not None
    thread.join(10)
    assert imported == ["sdk.module", "reply.module"] and not warm.waiting_for_request()

    # A %brute line or the chat widget waits for the first phase but runs no cell's turn, which would tell the
    # second phase its request is out: it must not make that phase (and the schema lock a reply waits on) wait.
    imported.clear()
    release.clear()
    thread = warm.start()
    assert thread is not None
    other = threading.Thread(target=warm.settled, kwargs={"timeout": 60}, daemon=True)
    other.start()
    time.sleep(0.05)
    release.set()
    other.join(10)
    thread.join(10)
    assert imported == ["sdk.module", "reply.module"] and not warm.waiting_for_request()


def test_the_stream_schemas_are_built_under_the_lock_a_turn_waits_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up holds the provider's ``BUILD_LOCK`` from before a cell may send its request until its schema
    build is over, so a turn finds the build done or in progress (and waits), never not yet begun (issue 29 §2)."""
    import threading
    from types import SimpleNamespace

    from brute_nb.notebook import warm

    release, calls = threading.Event(), []
    builder = SimpleNamespace(BUILD_LOCK=threading.Lock(),
                              build_schemas=lambda: (calls.append("build"), release.wait(60)))
    modules = {"schemas.module": builder}
    monkeypatch.setattr(warm, "importlib", SimpleNamespace(import_module=lambda name: modules.get(name)))
    monkeypatch.setattr(warm, "sdk_modules", lambda environ=None: ("anthropic", "stack.module"))
    monkeypatch.setattr(warm, "schemas_for", lambda modules: "schemas.module" if modules[0] == "anthropic" else None)
    monkeypatch.setattr(warm, "REPLY", ())
    monkeypatch.setattr(warm, "_thread", None)
    thread = warm.start()
    assert thread is not None
    warm.settled(timeout=60)
    assert builder.BUILD_LOCK.locked()  # held since before the cell could go on
    warm.request_out()
    release.set()
    thread.join(10)
    assert calls == ["build"] and not builder.BUILD_LOCK.locked()


LIVE_TURN_MODULES = """
import json, sys
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.stack import mcp_tools
from brute_nb.providers.anthropic import AnthropicMessages
AnthropicMessages("claude-fake", api_key="sk-test", base_url="http://127.0.0.1:9").client
assert mcp_tools("default", Settings()) == []
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("brute_nb.providers.replay", "brute_nb.tools.mcp")))))
"""


def test_a_live_session_without_mcp_servers_imports_neither_replay_nor_mcp(tmp_path: Path) -> None:
    """A first cell imported the record/replay transports and the MCP client though it used neither (issue 29 §2)."""
    assert json.loads(_fresh(LIVE_TURN_MODULES, tmp_path)) == []


LOADED_BEFORE_A_FAKE = """
import json, os, sys, tempfile, threading
from brute_nb.testing import FakeProvider
fake = FakeProvider(keep_alive=True).__enter__()
fake.add("Hello!")
os.environ.update(ANTHROPIC_API_KEY=fake.api_key, ANTHROPIC_BASE_URL=fake.base_url)
os.chdir(tempfile.mkdtemp())
import IPython
ip = IPython.InteractiveShell.instance()
ip.run_line_magic('load_ext', 'brute_nb')
"""
"""A fresh process with a fake Anthropic server configured, right after ``%load_ext brute_nb``."""

RUN_ALL_FIRST_CELL = LOADED_BEFORE_A_FAKE + """
import time
started = time.monotonic()
ip.run_cell_magic('brute', '', 'hello')
took = time.monotonic() - started
from brute_nb.notebook import warm
warm._thread.join(20)
print(json.dumps({"took": took, "warm_alive": warm._thread.is_alive(), "waiting": warm.waiting_for_request(),
                  "requests": len(fake.requests)}))
"""


def test_a_run_all_first_cell_lets_the_warm_up_finish_after_its_request(tmp_path: Path) -> None:
    """The warm-up's second phase waits for the first cell's request (``model_call``); a cell that never told it
    would hang the reply on the schema build lock for ``REQUEST_WAIT`` (30 s)."""
    seen = json.loads(_fresh(RUN_ALL_FIRST_CELL, tmp_path).splitlines()[-1])
    assert seen["requests"] == 1 and seen["took"] < 20
    assert not seen["warm_alive"] and not seen["waiting"]


READ_AHEAD = """
import json, os, sys, tempfile, threading
from brute_nb.message import Message, Role
from brute_nb.sessions import file as session_file
from brute_nb.testing import FakeProvider
fake = FakeProvider(keep_alive=True).__enter__()
fake.add("Hello again!")
os.environ.update(ANTHROPIC_API_KEY=fake.api_key, ANTHROPIC_BASE_URL=fake.base_url)
os.chdir(tempfile.mkdtemp())
os.mkdir("notebook.brute")
session_file.SessionFile("notebook.brute/default.jsonl").append(
    [Message(Role.USER, f"question {i}") if i % 2 == 0 else Message(Role.ASSISTANT, f"answer {i}") for i in range(40)])
import IPython
ip = IPython.InteractiveShell.instance()
ip.run_line_magic('load_ext', 'brute_nb')
for t in threading.enumerate():
    if t.name == 'brute-warm-sdk':
        t.join(60)
parsed = []
real_parse = session_file._parse
session_file._parse = lambda *a, **k: parsed.append(1) or real_parse(*a, **k)
ip.run_cell_magic('brute', '', 'hello')
sent = fake.requests[-1]["json"]["messages"]
print(json.dumps({"parsed": len(parsed), "sent": len(sent), "first": sent[0]["content"],
                  "kept": session_file._preloaded is not None}))
"""


def test_the_warm_up_reads_the_notebooks_session_ahead_of_its_first_turn(tmp_path: Path) -> None:
    """Issue 29 §5: while the user types, the warm-up parses the current session's file, so the first turn of a
    kernel sends its history without parsing it again."""
    seen = json.loads(_fresh(READ_AHEAD, tmp_path).splitlines()[-1])
    assert seen["parsed"] == 0 and not seen["kept"]
    assert seen["sent"] == 41 and seen["first"] == "question 0"  # the history, then the prompt


REFUSED_FIRST_CELL = LOADED_BEFORE_A_FAKE + """
try:
    ip.run_cell_magic('brute', '', '   ')  # no prompt: refused before any turn
except Exception as exc:
    refused = type(exc).__name__
from brute_nb.notebook import warm
warm._thread.join(20)
print(json.dumps({"refused": refused, "warm_alive": warm._thread.is_alive(), "waiting": warm.waiting_for_request()}))
"""


def test_a_first_cell_refused_before_its_turn_lets_the_warm_up_finish(tmp_path: Path) -> None:
    """A %%brute cell holds the warm-up's second phase until its request is out; one refused before any turn (no
    prompt) must let it go at once, or a chat turn after it would wait ``REQUEST_WAIT`` for the schema lock."""
    seen = json.loads(_fresh(REFUSED_FIRST_CELL, tmp_path).splitlines()[-1])
    assert seen["refused"] == "UsageError"
    assert not seen["warm_alive"] and not seen["waiting"]


def test_an_interrupt_while_a_turn_waits_for_the_warm_up_lets_its_second_phase_go_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A user who stops the first cell while it waits for the SDK's imports: that turn will send nothing, so the
    second phase must not wait for it."""
    import threading

    from brute_nb.notebook import warm

    release = threading.Event()
    monkeypatch.setattr(warm, "importlib", type("I", (), {"import_module": staticmethod(lambda n: release.wait(60))}))
    monkeypatch.setattr(warm, "sdk_modules", lambda environ=None: ("sdk.module",))
    monkeypatch.setattr(warm, "REPLY", ())
    monkeypatch.setattr(warm, "_thread", None)
    thread = warm.start()
    assert thread is not None

    def interrupted(timeout: float | None = None) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(warm._sendable, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt), warm.turn():
        pytest.fail("the turn ran")
    assert not warm.waiting_for_request()
    release.set()
    thread.join(10)
    assert not thread.is_alive()
