"""``%%brute`` options and help, through a fresh in-process IPython shell (no kernel): what the parser hands the
agent, what ``%%brute?`` and ``%brute help`` say, and the ``summarize`` setting of the notebook's compaction."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from brute_nb.compaction.summary import COMPACTION_PROMPT
from brute_nb.testing.scripted import Scripted


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shell: Any) -> Any:
    """The shared ``shell`` fixture, with this test's notebook and overflow folder in the environment."""
    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(tmp_path / "nb.ipynb"))
    monkeypatch.setenv("BRUTE_NB_OVERFLOW_DIR", str(tmp_path / "overflow"))
    return shell


def _model(ip: Any, replies: list[Any]) -> Scripted:
    from brute_nb.notebook.registry import registry

    model = Scripted(replies)
    registry().current().provider = model
    return model


@pytest.mark.parametrize("option", ['--system "Be brief."', "--system 'Be brief.'", '--system="Be brief."'])
def test_a_quoted_option_value_loses_its_quotes(ip: Any, option: str) -> None:
    model = _model(ip, ["ok"])
    result = ip.run_cell(f"%%brute {option} --tools none --quiet\nhi")
    assert result.success, result.error_in_exec
    assert model.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_an_unclosed_quote_is_a_usage_error(ip: Any) -> None:
    _model(ip, ["ok"])
    result = ip.run_cell('%%brute --system "Be brief.\nhi')
    assert isinstance(result.error_in_exec, UsageError) and "quotation" in str(result.error_in_exec)


def test_the_cell_magics_help_opens_with_its_usage() -> None:
    from brute_nb.notebook.front.magics import BruteMagics

    doc = BruteMagics.brute.__doc__ or ""
    assert doc.startswith("usage: %%brute [-m MODEL]"), doc[:80]
    assert "::" not in doc.split("\n\n")[0]


GROUPS = ("model", "tools", "context", "output", "cost", "map")


def _documented_groups() -> dict[str, list[str]]:
    """docs/options.md: each ``## Group`` heading and the long options its table lists, in order."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "options.md").read_text()
    groups: dict[str, list[str]] = {}
    for section in re.split(r"^## ", page, flags=re.M)[1:]:
        title, _, body = section.partition("\n")
        if title.startswith("Settings (`%brute config`)"):
            continue  # the settings that last, not the cell's options
        groups[title.strip().lower()] = re.findall(r"^\| (?:`-\w`, )?`(--[\w-]+)", body, flags=re.M)
    return groups


def test_the_help_groups_the_options_as_the_docs_do() -> None:
    """Thirty options in one list are hard to read (issue 41 item 3): ``%%brute?`` groups them, and the options page
    shows the same groups with the same options, so neither can drift from the parser."""
    from brute_nb.notebook.front.magics import BruteMagics

    parser = BruteMagics.brute.parser
    grouped = {g.title: [next(s for s in a.option_strings if s.startswith("--")) for a in g._group_actions]
               for g in parser._action_groups if g.title in GROUPS}
    assert list(grouped) == list(GROUPS)
    assert grouped == _documented_groups()
    every = {s for a in parser._actions for s in a.option_strings if s.startswith("--")} - {"--help"}
    assert every == {option for options in grouped.values() for option in options}  # none left out of a group
    doc = BruteMagics.brute.__doc__ or ""
    assert all(f"\n{group}:\n" in doc for group in GROUPS), doc


def test_help_lists_every_config_key(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from brute_nb.notebook.settings import KEYS, parse_settings

    ip.run_line_magic("brute", "help")
    text = capsys.readouterr().out
    for key in ("approve", "budget", "summarize", *KEYS):
        assert key in text.split("%brute config", 1)[1].split("%brute widget")[0], key
    with pytest.raises(ValueError, match=r"settable: notebook, .*summarize"):
        parse_settings({"no_such_key": "1"})


def test_summarize_is_a_config_setting(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from brute_nb.notebook.registry import registry

    assert registry().current().settings.summarize is True
    ip.run_line_magic("brute", "config summarize=false")
    assert registry().current().settings.summarize is False
    assert "summarize:" in capsys.readouterr().out
    with pytest.raises(UsageError, match="summarize takes true or false"):
        ip.run_line_magic("brute", "config summarize=maybe")


def test_final_answer_is_set_by_config_and_by_configure(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 28 §4: a turn stopped at its iteration limit makes one more call, without tools, for the model's answer;
    ``%brute config final_answer=false`` and ``brute_nb.configure(final_answer=False)`` both turn it off."""
    import brute_nb
    from brute_nb.notebook.registry import registry
    from brute_nb.testing.scripted import call, reply

    def stopped_turn() -> Scripted:
        model = _model(ip, [reply("Looking.", call("read", {"file_path": "."})), "Limit hit: I listed the folder."])
        result = ip.run_cell("%%brute --max-iterations 1 --tools read --quiet\nlook around")
        assert result.success, result.error_in_exec
        return model

    assert registry().current().settings.final_answer is True
    model = stopped_turn()
    assert model.calls == 2 and "tools are disabled" in str(model.requests[-1]["messages"][-1]["content"])
    assert registry().current().log[-1].content == "Limit hit: I listed the folder."

    ip.run_line_magic("brute", "config final_answer=false")
    assert "final_answer:" in capsys.readouterr().out
    assert stopped_turn().calls == 1  # the turn ends on the tool result, as the limit left it
    brute_nb.configure(final_answer=True)
    assert stopped_turn().calls == 2
    brute_nb.configure(final_answer=False)
    assert stopped_turn().calls == 1 and registry().current().log[-1].role == "tool"
    with pytest.raises(UsageError, match="final_answer takes true or false"):
        ip.run_line_magic("brute", "config final_answer=maybe")


def test_a_sub_cent_budget_is_listed_as_itself(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 28 §8: ``%brute config`` lists a budget in readable units, a sub-cent cost ceiling as itself."""
    ip.run_line_magic("brute", "config")
    assert "budget:         {}\n" in capsys.readouterr().out  # none set: as the demos recorded it
    ip.run_line_magic("brute", "config budget=cost=0.00005;tokens=1000;time=90")
    out = capsys.readouterr().out
    assert "budget:         cost=$0.00005, tokens=1,000, time=90 s\n" in out and "e-05" not in out


def _long_session(ip: Any, summarize: bool) -> tuple[Scripted, Any]:
    """Four turns of 2,000-character replies in a 2,000-token window: the recent steps alone are over target,
    so only the Summary rung can bring the conversation down."""
    from brute_nb.notebook.registry import registry

    nb = registry().current()
    nb.configure(tools="none", window=2000, summarize=summarize)

    def answer(env: dict[str, Any]) -> str:
        if env["messages"][0].content == COMPACTION_PROMPT:
            return "SUMMARY: four long replies"
        return "reply " + "x" * 2000

    model = _model(ip, [answer] * 20)
    for i in range(5):
        result = ip.run_cell(f"%%brute --quiet\nquestion {i}")
        assert result.success, result.error_in_exec
    return model, nb


def test_the_notebook_agent_summarises_with_its_own_model(ip: Any) -> None:
    model, nb = _long_session(ip, summarize=True)
    asked = [r for r in model.requests if r["messages"][0]["content"] == COMPACTION_PROMPT]
    assert asked, "the session's model was never asked for a summary"
    assert any(m.meta.get("summary") and "SUMMARY: four long replies" in m.content for m in nb.log)


def test_summarize_false_keeps_the_ladder_free(ip: Any) -> None:
    model, nb = _long_session(ip, summarize=False)
    assert not [r for r in model.requests if r["messages"][0]["content"] == COMPACTION_PROMPT]
    assert not any(m.meta.get("summary") for m in nb.log)


def test_the_magic_turns_server_tools_on_and_config_turns_them_off(ip: Any, fake_provider: Any) -> None:
    """--server-tools (issue 27 §2): the provider's own tools reach the request; config turns them off."""
    from brute_nb.notebook.registry import registry
    from brute_nb.testing import Reply
    from tests.providers.helpers import FACTORIES
    from tests.transports.recorded_blocks import ANTHROPIC

    registry().current().provider = FACTORIES["anthropic"](fake_provider)
    fake_provider.add(Reply(blocks=tuple(ANTHROPIC["web_search with citations"])), "plain")
    result = ip.run_cell("%%brute --server-tools web_search,web_fetch --tools none --quiet\ncapital?")
    assert result.success, result.error_in_exec
    assert [t["name"] for t in fake_provider.requests[0]["json"]["tools"]] == ["web_search", "web_fetch"]
    ip.run_line_magic("brute", "config server_tools=none")
    result = ip.run_cell("%%brute --tools none --quiet\nagain")
    assert result.success, result.error_in_exec
    assert "tools" not in fake_provider.requests[1]["json"]
    later = fake_provider.requests[1]["json"]["messages"]
    assert [b["type"] for b in later[1]["content"]][:3] == ["text", "server_tool_use", "web_search_tool_result"]


def test_a_bad_server_tool_option_is_a_usage_error(ip: Any) -> None:
    result = ip.run_cell("%%brute --server-tools web_serch --quiet\nhi")
    assert "--server-tools: server tools: unknown server tool 'web_serch'" in str(result.error_in_exec)


def test_config_names_paths_relative_to_the_notebooks_folder(ip: Any, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 4: every path was absolute, a long prefix that says nothing in a notebook whose kernel runs in
    the notebook's folder (as Jupyter starts it); a path outside that folder stays whole."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "work").mkdir()
    elsewhere = tmp_path.parent / f"elsewhere-{tmp_path.name[::-1]}" / "demo.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.touch()
    ip.run_line_magic("brute", f"config root=work replay={elsewhere}")
    text = capsys.readouterr().out
    assert "notebook:       nb.ipynb  (from BRUTE_NB_NOTEBOOK)" in text
    assert "session:        default  ->  nb.brute/default.jsonl" in text
    assert "root:           work\n" in text and f"replay:         {elsewhere}\n" in text
    assert str(tmp_path) not in text


@pytest.mark.parametrize("line", ["%brute config?", "%brute config ?", "%brute help config"])
def test_config_help_says_how_each_setting_goes_back(ip: Any, capsys: pytest.CaptureFixture[str], line: str) -> None:
    """``%brute config?`` showed IPython's own ``%config`` (the help suffix takes the last word); it shows how
    brute_nb's settings are set and put back, each with its default."""
    from brute_nb.notebook.settings import KEYS

    result = ip.run_cell(line)
    assert result.success, result.error_in_exec
    text = capsys.readouterr().out
    assert "KEY=default" in text and "KEY=none" in text and "Class.trait" not in text
    listed = text.split("settings (default", 1)[1]
    assert all(re.search(rf"\b{key} \(", listed) for key in KEYS), listed


def test_the_options_page_lists_every_config_setting() -> None:
    from brute_nb.notebook.settings import KEYS

    page = (Path(__file__).resolve().parents[2] / "docs" / "options.md").read_text()
    section = page.split("## Settings (`%brute config`)", 1)[1]
    assert "KEY=default" in section and "KEY=none" in section
    assert re.findall(r"^\| `(\w+)` \|", section, flags=re.M) == list(KEYS)
