"""The four tool shapes, @tool and duck typing through one Adapter; bad definitions refused at definition time."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal

import pydantic
import pytest

from brute_nb import ToolDefinitionError, agent
from brute_nb.errors import ToolArgumentError
from brute_nb.testing.scripted import Scripted
from brute_nb.tools import Adapter, SubAgent, Tool, ToolPipeline, ValidateParams, tool, wrap_all
from brute_nb.tools.docstring import parse_docstring

pytestmark = pytest.mark.anyio


class Echo(Tool):
    name = "echo"
    description = "Echo the input back"
    params: ClassVar[dict[str, Any]] = {
        "msg": {"type": "string", "desc": "What to echo", "required": True},
        "times": {"type": "integer", "desc": "How often"},
    }

    def execute(self, msg: str, times: int = 1) -> str:
        return msg * times


async def test_tool_subclass_through_adapter() -> None:
    adapter = Adapter.wrap(Echo)
    assert adapter.name == "echo"
    assert adapter.params == {"msg": {"type": "string", "desc": "What to echo", "required": True},
                              "times": {"type": "integer", "desc": "How often", "required": False}}
    assert await adapter.call({"msg": "ab", "times": "2"}) == "abab"  # "2" coerced to int
    assert adapter.to_dict() == {
        "name": "echo",
        "description": "Echo the input back",
        "parameters": {"type": "object", "properties": {
            "msg": {"type": "string", "description": "What to echo"},
            "times": {"type": "integer", "description": "How often"}}, "required": ["msg"]},
    }


async def test_adapter_refuses_bad_arguments_naming_every_problem() -> None:
    adapter = Adapter.wrap(Echo)
    with pytest.raises(ToolArgumentError) as info:
        await adapter.call({"times": "many", "extra": 1})
    text = str(info.value)
    assert "missing required 'msg'" in text
    assert "'times' must be an integer" in text
    assert "unknown 'extra'" in text


def test_bad_tool_class_lists_every_problem() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        class Bad(Tool):
            name = "has space"
            params: ClassVar[dict[str, Any]] = {"a": {"type": "text"}, "b": {"type": "string"}}

            def execute(self, a: str, c: str) -> str:
                return a

    text = str(info.value)
    for expected in ("name 'has space'", "description", "type 'text'", "does not accept declared param 'b'",
                     "requires 'c'"):
        assert expected in text


def test_tool_class_without_execute_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="implement execute"):

        class NoExec(Tool):
            name = "x"
            description = "d"


def test_raw_schema_tool() -> None:
    class Ask(Tool):
        name = "ask"
        description = "Ask the user a question"
        schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"text": {"type": "string"}},
                                            "required": ["text"]}

        def execute(self, text: str) -> str:
            return text

    assert Adapter.wrap(Ask).to_dict()["parameters"]["required"] == ["text"]


async def test_at_tool_builds_schema_from_hints_and_docstring() -> None:
    @tool
    def area(width: float, unit: Literal["m", "cm"], tags: list[str] | None = None, exact: bool = False) -> str:
        """Compute an area.

        Args:
            width: The width,
                in units.
            unit: The unit.
            tags (list): Labels to attach.
            exact: Round or not.
        """
        return f"{width}{unit}{tags}{exact}"

    d = Adapter.wrap(area).to_dict()
    assert d["description"] == "Compute an area."
    props = d["parameters"]["properties"]
    assert props["width"] == {"type": "number", "description": "The width, in units."}
    assert props["unit"] == {"enum": ["m", "cm"], "type": "string", "description": "The unit."}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "description": "Labels to attach."}
    assert props["exact"]["type"] == "boolean"
    assert d["parameters"]["required"] == ["width", "unit"]
    assert area(2.0, "m") == "2.0mNoneFalse"  # still a plain function
    assert await Adapter.wrap(area).call({"width": 1, "unit": "cm", "exact": "true"}) == "1cmNoneTrue"


def test_at_tool_refuses_what_cannot_be_a_tool() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @tool
        def bad(a, b: object, *rest: int) -> None:  # type: ignore[no-untyped-def]
            """Args:
            zzz: not a parameter
            """

    text = str(info.value)
    assert "'a' has no type hint" in text
    assert "'b': type" in text
    assert "*args" in text
    assert "'zzz'" in text
    assert "description" in text


@pytest.mark.parametrize("doc", [
    "Args:\n            zzz: not a parameter\n            ",  # as Python 3.11 and 3.12 keep it
    "Args:\nzzz: not a parameter\n",  # as Python 3.13 compiles it (indentation stripped)
])
def test_a_docstring_opening_with_args_reads_the_same_on_every_python(doc: str) -> None:
    assert parse_docstring(doc) == ("", {"zzz": "not a parameter"})


async def test_async_at_tool_with_options() -> None:
    @tool(name="shout", risk="write")
    async def loud(text: str) -> str:
        """Upper-case text."""
        return text.upper()

    adapter = Adapter.wrap(loud)
    assert (adapter.name, adapter.risk) == ("shout", "write")
    assert await adapter.call({"text": "hi"}) == "HI"


async def test_inline_dict_tool() -> None:
    adapter = Adapter.wrap({"name": "echo", "description": "Echo the input back",
                            "params": {"msg": {"type": "string", "required": True}},
                            "execute": lambda msg: msg})
    assert await adapter.call({"msg": "hi"}) == "hi"
    with pytest.raises(ToolDefinitionError) as info:
        Adapter.wrap({"name": "", "descripton": "typo", "execute": 3})
    assert "unknown key 'descripton'" in str(info.value)
    assert "execute" in str(info.value)


async def test_duck_typed_tools() -> None:
    class Callable_:
        name = "dbl"
        description = "Double"

        async def __call__(self, n: int) -> int:
            return n * 2

    class Executes:
        name = "neg"

        def execute(self, n: int) -> int:
            return -n

    assert await Adapter.wrap(Callable_()).call({"n": 4}) == 8
    assert await Adapter.wrap(Executes()).call({"n": 4}) == -4
    with pytest.raises(ToolDefinitionError, match="is not a tool"):
        Adapter.wrap(object())


async def test_plain_function_is_made_a_tool() -> None:
    def greet(who: str) -> str:
        """Greet someone."""
        return f"hi {who}"

    assert await Adapter.wrap(greet).call({"who": "x"}) == "hi x"


async def test_tool_pipeline_with_validate_params() -> None:
    seen: list[str] = []

    class Log:
        def __init__(self, app: Any, label: str) -> None:
            self.app, self.label = app, label

        async def __call__(self, env: dict[str, Any]) -> Any:
            seen.append(f"{self.label}:{env['name']}")
            return await self.app(env)

    pipe = (ToolPipeline(name="upper", description="Upper-case", params={"s": {"type": "string", "required": True}})
            .use(Log, label="log").use(ValidateParams)
            .run(lambda env: env.update(result=env["arguments"]["s"].upper())))
    adapter = Adapter.wrap(pipe)
    assert adapter.params["s"]["required"] is True
    assert await adapter.call({"s": "ab"}) == "AB"
    assert seen == ["log:upper"]
    with pytest.raises(ToolArgumentError, match="missing required 's'"):
        await adapter.call({})


def test_wrap_all_refuses_duplicates_and_collects_problems() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        wrap_all([Echo, Echo(), {"name": "x"}])
    assert "two tools are named 'echo'" in str(info.value)
    assert "tool dict 'x'" in str(info.value)
    assert list(wrap_all([Echo])) == ["echo"]


async def test_sub_agent_returns_last_text_and_keeps_its_traffic() -> None:
    inner = agent().run(Scripted(["first findings", ""]))
    sub = SubAgent(inner, name="explore", description="Explore the code")
    adapter = Adapter.wrap(sub)
    assert adapter.to_dict()["parameters"]["required"] == ["task"]
    assert await adapter.call({"task": "look"}) == "first findings"
    assert await adapter.call({"task": "again"}) == "(sub-agent completed but produced no text response)"
    with pytest.raises(ToolDefinitionError):
        SubAgent(object(), name="bad name", description="")


RAW = {"type": "object", "properties": {"city": {"type": "string", "description": "Where"},
                                        "days": {"type": "integer"}}, "required": ["city"]}


async def test_params_may_be_a_raw_json_schema_as_in_brute() -> None:
    class Weather(Tool):
        name = "weather"
        description = "The forecast"
        params: ClassVar[dict[str, Any]] = RAW

        def execute(self, city: str, days: int = 1) -> str:
            return f"{city} x{days}"

    adapter = Adapter.wrap(Weather)
    assert Weather.parameters_schema() == RAW and adapter.to_dict()["parameters"] == RAW
    assert await adapter.call({"city": "Oslo", "days": "2"}) == "Oslo x2"
    with pytest.raises(ToolArgumentError, match="missing required 'city'"):
        await adapter.call({})


def test_a_broken_raw_schema_or_flat_spec_is_a_definition_error_not_a_type_error() -> None:
    with pytest.raises(ToolDefinitionError, match="'properties' must be a dict"):

        class BadSchema(Tool):
            name = "bad"
            description = "d"
            params: ClassVar[dict[str, Any]] = {"type": "object", "properties": ["city"]}

            def execute(self, city: str) -> str:
                return city

    with pytest.raises(ToolDefinitionError, match="param 'city' must be a dict like") as info:

        class BadSpec(Tool):
            name = "bad"
            description = "d"
            params: ClassVar[dict[str, Any]] = {"city": "string"}

            def execute(self, city: str) -> str:
                return city

    assert "requires 'city', which is not a declared param" in str(info.value)


async def test_at_tool_takes_nested_types_and_builds_them() -> None:
    @tool
    def place(box: Box, points: list[Point], title: str | None = None) -> str:
        """Place a box.

        :param box: Where the box goes.
        :param points: Extra points.
        :param title: A title.
        """
        assert isinstance(box, Box) and isinstance(box.corner, Point) and all(isinstance(p, Point) for p in points)
        return f"{box.label}@{box.corner.x},{box.corner.y}+{len(points)} {title}"

    params = Adapter.wrap(place).to_dict()["parameters"]
    assert params["properties"]["box"] == {
        "type": "object", "description": "Where the box goes.", "required": ["corner", "label"],
        "properties": {"corner": {"type": "object", "properties": {"x": {"type": "integer"},
                                                                   "y": {"type": "integer", "default": 0}},
                                  "required": ["x"]},
                       "label": {"type": "string"}}}
    assert params["properties"]["points"]["items"]["required"] == ["x"]
    assert params["required"] == ["box", "points"] and "$defs" not in repr(params) and "title" in params["properties"]
    result = await Adapter.wrap(place).call({"box": {"corner": {"x": 1}, "label": "b"}, "points": [{"x": 2}]})
    assert result == "b@1,0+1 None"


def test_at_tool_reads_numpy_style_docstrings() -> None:
    @tool
    def scale(factor: float) -> str:
        """Scale things.

        Parameters
        ----------
        factor : float
            How much,
            as a ratio.
        """
        return str(factor)

    d = Adapter.wrap(scale).to_dict()
    assert d["description"] == "Scale things."
    assert d["parameters"]["properties"]["factor"] == {"type": "number", "description": "How much, as a ratio."}


def test_at_tool_refuses_types_a_model_cannot_send() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        @tool
        def bad(thing: Opaque, node: Node) -> None:
            """Do it."""

    text = str(info.value)
    assert "'thing': type" in text and "cannot be a JSON tool argument" in text
    assert "'node'" in text and "refers to itself" in text


class Opaque:
    pass


class Node(pydantic.BaseModel):
    children: list[Node]


class Point(pydantic.BaseModel):
    x: int
    y: int = 0


@dataclasses.dataclass
class Box:
    corner: Point
    label: str
