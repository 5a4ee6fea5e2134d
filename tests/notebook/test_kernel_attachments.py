"""``{fig}`` and ``{Out[n]}`` in a real kernel: the figure goes to the model as an image, the session names it
by hash and keeps its bytes once, and the cell shows a thumbnail."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from kernel_helpers import html_of, kernel, ok, run, text_of, value_of

from brute_nb.testing import API_KEY, FakeProvider

pytestmark = pytest.mark.kernel


def test_a_figure_in_a_prompt_is_sent_as_an_image(tmp_path: Path) -> None:
    with FakeProvider(["A rising line.", "The same image."]) as fake:
        env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "OLLAMA_HOST": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
        with kernel(tmp_path, **env) as (_, kc):
            ok(kc, "%load_ext brute_nb\nimport brute_nb")
            ok(kc, "from matplotlib.figure import Figure\nfig = Figure(figsize=(1, 1))\n"
                   "_ = fig.add_subplot().plot([1, 2, 3])\nfig")  # shown as Out[2]
            outputs = ok(kc, "%%brute\nWhat does {fig} show?")
            png = base64.b64decode(_png_of(kc))
            sent = fake.requests[0]["json"]["messages"][0]["content"]
            assert sent[0]["type"] == "image" and base64.b64decode(sent[0]["source"]["data"]) == png
            assert sent[1]["text"] == "What does [attached image: fig] show?"
            assert "<img src=\"data:image/png;base64," in html_of(outputs)
            ok(kc, "%%brute\nAnd {Out[2]}?")
            again = fake.requests[1]["json"]["messages"][-1]["content"]
            assert again[0]["type"] == "image"
        lines = [json.loads(x) for x in (tmp_path / "demo.brute" / "default.jsonl").read_text().splitlines()]
        assert [x["attachments"][0]["media_type"] for x in lines if x["role"] == "user"] == ["image/png"] * 2
        stored = sorted(p.name for p in (tmp_path / "demo.brute" / "attachments").iterdir())
        assert stored == sorted({f"{x['attachments'][0]['sha256']}.png" for x in lines if x["role"] == "user"})


def _png_of(kc: object) -> str:
    code = ("__import__('base64').b64encode(next(m for m in brute_nb.current().log if m.role == 'user')"
            ".attachments[0].read_bytes()).decode()")
    return str(value_of(kc, code))


def test_hostile_attachments_end_the_cell_with_a_clear_error_and_send_nothing(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.png")
    with open(tmp_path / "huge.pdf", "wb") as f:
        f.truncate(2 << 30)  # sparse: reading it whole would take 2 GiB
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("HOSTILE-SECRET")
    session = tmp_path / "demo.brute" / "cloned.jsonl"
    session.parent.mkdir()
    line = {"role": "user", "content": "x",
            "attachments": [{"media_type": "text/plain", "sha256": "../../outside/secret"}]}
    session.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n" + json.dumps(line) + "\n")
    with FakeProvider(["never sent"]) as fake:
        env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "OLLAMA_HOST": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
        with kernel(tmp_path, **env) as (_, kc):
            ok(kc, "%load_ext brute_nb")
            for cell, expected in (("%%brute --attach pipe.png\nlook", "is a FIFO"),
                                   ("%%brute --attach huge.pdf\nread", "2.0 GiB, more than 32.0 MiB"),
                                   ("%%brute -s cloned\ngo on", f"{session}:2: ")):
                reply, outputs = run(kc, cell, timeout=60)
                said = text_of(outputs) + html_of(outputs) + str(reply.get("evalue", ""))
                assert expected in said, f"{cell!r}: {said[:500]}"
                assert "HOSTILE-SECRET" not in said
        assert fake.requests == []
