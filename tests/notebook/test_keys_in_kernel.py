"""``%brute keys set`` in a real kernel (issue 41): a client that allows stdin (JupyterLab) is asked with a password
prompt (ipykernel's ``getpass``), the key is saved readable by the user only and never shown, and a turn then finds
it, sending it to its provider's own host only (here the loopback fake is another host: it gets nothing)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from kernel_helpers import kernel, ok, run
from test_confirm_in_kernel import answering

from brute_nb.testing import FakeProvider

KEY = "sk-ant-typed-in-a-kernel-41"


@pytest.mark.kernel
def test_a_key_typed_at_the_hidden_prompt_is_saved_and_kept_at_home(tmp_path: Path) -> None:
    config = tmp_path / "config"
    with FakeProvider(["never sent"], api_key=None) as elsewhere:
        env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "BRUTE_MODEL": "", "OLLAMA_HOST": "",
               "ANTHROPIC_BASE_URL": elsewhere.base_url, "BRUTE_NB_CONFIG_DIR": str(config),
               "BRUTE_NB_NOTEBOOK": "keys.ipynb"}
        with kernel(tmp_path, **env) as (_, kc):
            ok(kc, "%load_ext brute_nb")
            kc.execute("%brute keys set anthropic", allow_stdin=True)
            request = kc.get_stdin_msg(timeout=60)
            assert request["content"]["password"] is True  # hidden as typed
            kc.input(KEY)
            _, printed, reply = answering(kc, "%brute keys set openai", "sk-openai-typed-41")
            assert reply["status"] == "ok" and "saved the openai key" in printed
            file = config / "keys.json"
            assert json.loads(file.read_text())["anthropic"] == KEY
            assert stat.S_IMODE(file.stat().st_mode) == 0o600
            _, outputs = run(kc, "%brute keys")
            assert "saved" in str(outputs) and KEY not in str(outputs)
            reply, outputs = run(kc, "%%brute\nhello")
            assert reply["status"] == "error" and "not sent there" in str(outputs) and KEY not in str(outputs)
        assert elsewhere.received == 0
