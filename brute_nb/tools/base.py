"""Defining tools: the ``Tool`` base class (Brute's DSL, as class attributes) and the ``@tool`` decorator.

The invariant: a tool that cannot be advertised to a model is refused when it is *defined* (class statement or
decoration), with one ``ToolDefinitionError`` listing every problem, never later in the middle of a turn.

    class Echo(Tool):
        name = "echo"
        description = "Echo the input back"
        params = {"msg": {"type": "string", "desc": "What to echo", "required": True}}
        def execute(self, msg: str) -> str: return msg

Flat ``params`` are ``{key: {type, desc, required}}`` (``required`` defaults to False, as in JSON schema); nested
arguments use a raw JSON schema (``{"type": "object", "properties": ...}``), in ``schema`` or, as in Brute, in
``params`` itself. ``risk`` (read, write, shell, network, python, mcp, notebook) is the seam approvals hook into;
``interactive`` tools (question) run one at a time before the concurrent batch.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from brute_nb.errors import ToolDefinitionError
from brute_nb.tools.docstring import function_schema
from brute_nb.tools.schema import param_problems, schema_problems, split_params, to_schema

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
RISKS = ("read", "write", "shell", "network", "python", "mcp", "notebook")


class Tool:
    """Base class of class-defined tools (the built-ins are written this way)."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    schema: ClassVar[Mapping[str, Any] | None] = None
    risk: ClassVar[str] = "read"
    interactive: ClassVar[bool] = False
    # A subclass defines ``execute(self, <its params>)``, sync or async; declared (not defined) here so each
    # subclass can name its own keyword parameters.
    execute: Callable[..., Any]

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if abstract:
            return
        params, schema = split_params(cls.params)
        problems = definition_problems(cls.name, cls.description, params, cls.schema or schema, cls.risk)
        problems += signature_problems(getattr(cls, "execute", None), cls.parameters_schema(), is_method=True)
        if problems:
            raise ToolDefinitionError(f"tool class {cls.__qualname__} is not a valid tool:\n  - "
                                      + "\n  - ".join(problems))

    @classmethod
    def parameters_schema(cls) -> dict[str, Any]:
        """The JSON schema object of this tool's arguments."""
        params, schema = split_params(cls.params)
        if cls.schema is not None:
            return dict(cls.schema)
        if schema is not None:
            return dict(schema)
        if not isinstance(params, Mapping):
            return to_schema({})
        # Specs that are not dicts are reported by definition_problems; leave them out rather than crash.
        return to_schema({k: v for k, v in params.items() if isinstance(v, Mapping)})


def definition_problems(name: object, description: object, params: object, schema: object,
                        risk: object) -> list[str]:
    problems = []
    if not isinstance(name, str) or not NAME_RE.match(name):
        problems.append(f"name {name!r}: set name to 1-64 letters, digits, '_' or '-'")
    if not isinstance(description, str) or not description.strip():
        problems.append("description: give a non-empty description (a class attribute, or the function's docstring)")
    if schema is not None:
        if params:
            problems.append("give either flat params or a raw schema, not both")
        problems += schema_problems(schema)
    elif not isinstance(params, Mapping):
        problems.append("params must be a dict {key: {'type': ..., 'desc': ..., 'required': ...}}")
    else:
        for key, spec in params.items():
            problems += param_problems(key, spec)
    if risk not in RISKS:
        problems.append(f"risk {risk!r}: use one of {', '.join(RISKS)}")
    return problems


def signature_problems(fn: Callable[..., Any] | None, schema: Mapping[str, Any], *, is_method: bool) -> list[str]:
    """Does ``execute`` accept every declared parameter, and are its required ones all declared?"""
    if not callable(fn):
        return ["execute: implement execute(self, **kwargs) (sync or async)"]
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    parameters = list(sig.parameters.values())[1 if is_method else 0:]
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return []
    names = {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        return []  # a broken schema is already reported; there is nothing sound to compare execute with
    declared = set(properties)
    problems = [f"execute does not accept declared param {k!r}" for k in sorted(declared - names)]
    needed = {p.name for p in parameters if p.default is p.empty and p.kind is not p.VAR_POSITIONAL}
    problems += [f"execute requires {k!r}, which is not a declared param" for k in sorted(needed - declared)]
    return problems


class FunctionTool:
    """A plain function made into a tool by ``@tool``; calling it still calls the function."""

    def __init__(self, fn: Callable[..., Any], name: str, description: str, schema: dict[str, Any],
                 risk: str) -> None:
        self.fn = fn
        self.name = name
        self.description = description
        self.schema = schema
        self.risk = risk
        self.interactive = False
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def parameters_schema(self) -> dict[str, Any]:
        return dict(self.schema)

    def execute(self, **kwargs: Any) -> Any:
        return self.fn(**kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tool {self.name!r} from {getattr(self.fn, '__qualname__', self.fn)!r}>"


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None,
         risk: str = "read") -> Any:
    """Make a typed, documented function a tool: ``@tool`` or ``@tool(name="x", risk="write")``.

    The JSON schema comes from the type hints through pydantic (scalars, containers, Literal, Optional, pydantic
    models, dataclasses) and each parameter's text from the docstring (Google, NumPy or reST); parameters with
    defaults are optional.
    """

    def build(f: Callable[..., Any]) -> FunctionTool:
        summary, schema, problems = function_schema(f)
        tool_name = str(name or getattr(f, "__name__", ""))
        text: str = description if description is not None else summary
        problems = definition_problems(tool_name, text, {}, schema, risk) + problems
        if problems:
            where = getattr(f, "__qualname__", repr(f))
            raise ToolDefinitionError(f"@tool cannot make {where} a tool:\n  - " + "\n  - ".join(problems))
        return FunctionTool(f, tool_name, text, schema, risk)

    if fn is not None:
        return build(fn)
    return build
