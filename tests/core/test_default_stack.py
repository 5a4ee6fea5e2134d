"""One default stack: the core's ``default_stack`` is the order docs/architecture.md draws and its own docstring
lists, and the notebook's session agent and a map row's agent are both built from it (each leaving layers out,
never reordering them)."""

from __future__ import annotations

import re
from pathlib import Path

import brute_nb
from brute_nb.middleware import stack as stack_module
from brute_nb.middleware.stack import default_stack
from brute_nb.testing import Scripted

DOCS = Path(brute_nb.__file__).parent.parent / "docs" / "architecture.md"


def every_layer(tmp_path: Path) -> list[str]:
    """The names of the layers of a default stack with every value given."""
    agent = default_stack(Scripted([]), session=tmp_path / "s.jsonl", system="hi", approve={},
                          budget={"tokens": 1000})
    return [layer.__name__ for layer in agent.layers]


def drawn() -> list[str]:
    """The layers docs/architecture.md's first diagram draws, outermost first, up to the model call."""
    diagram = DOCS.read_text().split("```")[1]
    names = re.findall(r"^\s+(\w+) ──(?!►)", diagram, flags=re.MULTILINE)
    return names[:names.index("handler")]


def listed(doc: str) -> list[str]:
    """The layers a docstring's numbered list names, in order."""
    return re.findall(r"^\d+\. (\w+):", doc, flags=re.MULTILINE)


def test_the_docs_the_docstring_and_the_code_list_the_same_layers(tmp_path: Path) -> None:
    code = every_layer(tmp_path)
    assert len(code) == 13
    assert drawn() == code
    assert listed(stack_module.__doc__ or "") == code


def test_the_notebook_stacks_docstring_lists_the_same_layers(tmp_path: Path) -> None:
    from brute_nb.notebook import stack as notebook_stack

    code = every_layer(tmp_path)
    named = re.findall(r"\b(" + "|".join(code) + r")\b", notebook_stack.__doc__ or "")
    assert named == code


def test_a_layer_left_out_leaves_the_others_in_their_order(tmp_path: Path) -> None:
    agent = default_stack(Scripted([]), final_answer=False, doom_loop=False, compaction=False, retry=False)
    assert [layer.__name__ for layer in agent.layers] == [
        "ToolResultLoop", "MaxIterations", "DefaultToolPipeline", "PartialReply", "TurnContext"]


def test_the_notebook_agent_is_the_whole_default_stack(tmp_path: Path) -> None:
    from brute_nb.notebook.settings import Settings
    from brute_nb.notebook.stack import build_agent

    settings = Settings(tools="read", budget={"tokens": 1000.0})
    agent = build_agent(settings, name="default", session_path=tmp_path / "nb.brute" / "default.jsonl",
                        notebook=tmp_path / "nb.ipynb", provider=Scripted([]))
    assert [layer.__name__ for layer in agent.layers] == every_layer(tmp_path)


def test_a_map_row_is_the_default_stack_less_what_a_row_has_no_use_for(tmp_path: Path) -> None:
    from brute_nb.map.row import row_stack
    from brute_nb.tools import READ_ONLY

    agent = row_stack(Scripted([]), tmp_path / "row.jsonl", home=tmp_path, system="be brief", tools=list(READ_ONLY),
                      max_iterations=5, approve={})
    names = [layer.__name__ for layer in agent.layers]
    assert names == ["SessionLog", "SystemPrompt", "Approvals", "ToolResultLoop", "MaxIterations",
                     "DefaultToolPipeline"]
    full = every_layer(tmp_path)
    assert [full.index(n) for n in names] == sorted(full.index(n) for n in names)
