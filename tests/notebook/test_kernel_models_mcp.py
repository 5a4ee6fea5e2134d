"""Issue 19 in a real kernel: aliases, ``-o``, ``--base-url``, ``%brute models``, and MCP servers that start with
a turn, stop at ``%unload_ext`` and do not outlive a killed kernel (no orphan process)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import psutil
import pytest
from kernel_helpers import kernel, ok, run, text_of, value_of

from brute_nb.testing import API_KEY, FakeProvider, call, reply

pytestmark = pytest.mark.kernel

SERVER = str(Path(__file__).parents[1] / "tools" / "mcp_server.py")


def mcp_children(pid: int) -> list[int]:
    found = []
    for p in psutil.Process(pid).children(recursive=True):
        try:
            if SERVER in " ".join(p.cmdline()):
                found.append(p.pid)
        except psutil.Error:
            pass
    return found


def gone(pid: int, within: float = 30) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.2)
    return False


def test_models_options_aliases_and_mcp_in_a_kernel(tmp_path: Path) -> None:
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": [SERVER]}}}))
    env = {"OPENAI_API_KEY": API_KEY, "ANTHROPIC_API_KEY": "", "OLLAMA_HOST": "", "BRUTE_MODEL": "",
           "OPENAI_BASE_URL": "", "XDG_CONFIG_HOME": str(tmp_path / "config"), "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
    with FakeProvider() as fake:
        with kernel(tmp_path, **env) as (_km, kc):
            ok(kc, "%load_ext brute_nb")
            # the key goes to --base-url only when named so, for that server (a new base URL drops a key for another)
            ok(kc, f"%brute config base_url={fake.openai_base_url} api_key=env:OPENAI_API_KEY")
            kernel_pid = value_of(kc, "__import__('os').getpid()")
            ok(kc, "%brute alias fast openai:gpt-fast")
            assert json.loads((tmp_path / "config" / "brute_nb" / "aliases.json").read_text()) == {
                "fast": "openai:gpt-fast"}

            fake.add(reply("", call("demo_add", {"a": 2, "b": 40})), "42")
            ok(kc, f"%%brute -m fast --base-url {fake.openai_base_url} -o temperature=0.5 --mcp {servers} "
                   "--approve mcp=allow\nadd 2 and 40")
            first, second = (r["json"] for r in fake.requests[-2:])
            assert (first["model"], first["temperature"]) == ("gpt-fast", 0.5)
            assert "demo_add" in [t["function"]["name"] for t in first["tools"]]
            assert {"role": "tool", "tool_call_id": "call_1_0", "content": "42"} in second["messages"]

            reply_content, _ = run(kc, "%%brute -o temprature=1\nhi")
            assert reply_content["status"] == "error" and "did you mean temperature" in reply_content["evalue"]

            out = text_of(ok(kc, "%brute models"))
            assert "fast             openai:gpt-fast" in out and "environment (OPENAI_API_KEY)" in out
            assert "models at openai:gpt-fast: cannot list them (HTTP 404)" in out  # the fake has no /models

            (server_pid,) = mcp_children(kernel_pid)
            ok(kc, "%unload_ext brute_nb")
            assert gone(server_pid) and mcp_children(kernel_pid) == []

            ok(kc, "%load_ext brute_nb")
            ok(kc, f"%brute config base_url={fake.openai_base_url} api_key=env:OPENAI_API_KEY")
            fake.add("ok")
            ok(kc, f"%%brute -m fast --base-url {fake.openai_base_url} --mcp {servers}\nhello again")
            (server_pid,) = mcp_children(kernel_pid)
        assert gone(server_pid)  # the kernel was killed: its server still ended (stdin closed)
