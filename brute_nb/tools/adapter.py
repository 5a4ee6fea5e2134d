"""The Adapter: every tool shape behind one interface (Brute's ``Tools::Adapter``).

Shapes accepted by ``Adapter.wrap``: a ``Tool`` subclass or instance, an ``@tool`` function (or a plain typed,
documented function, made a tool on the spot), an inline dict ``{"name", "description", "params", "execute"}``,
anything with an ``as_adapter()`` method (``ToolPipeline``, ``SubAgent``), and, by duck typing, any object with
a ``name`` plus ``execute`` or ``__call__``. Whatever the shape, ``await adapter.call(args)`` takes a dict and
returns the tool's raw result (str, dict or ``ToolOutput``); exceptions propagate (the pipeline turns them into
``Error: ...`` results). Declared parameters are checked first (``schema.validate``), so a model's bad arguments
become a readable error rather than a Python ``TypeError``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from brute_nb.errors import ToolDefinitionError
from brute_nb.maybe_async import call_maybe_async
from brute_nb.tools.base import FunctionTool, Tool, definition_problems, tool
from brute_nb.tools.docstring import typed
from brute_nb.tools.schema import split_params, to_flat, to_schema, validate

Invoke = Callable[[dict[str, Any]], Awaitable[Any]]
DICT_KEYS = {"name", "description", "params", "schema", "execute", "risk", "interactive"}


async def invoke(fn: Callable[..., Any], arguments: Mapping[str, Any]) -> Any:
    """Call a tool function with keyword arguments (``calls.call_maybe_async``: async inline, sync on a worker
    thread, abandoned on cancel)."""
    return await call_maybe_async(functools.partial(fn, **arguments))


class Adapter:
    """One tool, normalised: ``name``, ``description``, ``params``, ``await call(args)``, ``to_dict()``."""

    def __init__(self, *, name: str, description: str, schema: Mapping[str, Any], invoke: Invoke,
                 validate: bool = True, risk: str = "read", interactive: bool = False, source: Any = None) -> None:
        self.name = name
        self.description = description
        self.schema: dict[str, Any] = dict(schema)
        self._invoke = invoke
        self.validate = validate
        self.risk = risk
        self.interactive = interactive
        self.source = source

    @property
    def params(self) -> dict[str, dict[str, Any]]:
        """Brute's flat view: ``{key: {"type", "desc", "required"}}``."""
        return to_flat(self.schema)

    async def call(self, args: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Any:
        """Run the tool with a dict of arguments (keys as str); returns its raw result."""
        arguments = {str(k): v for k, v in {**(args or {}), **kwargs}.items()}
        if self.validate:
            arguments = validate(self.schema, arguments)
        return await self._invoke(arguments)

    def to_dict(self) -> dict[str, Any]:
        """The library-neutral definition a transport reshapes for its provider."""
        return {"name": self.name, "description": self.description, "parameters": dict(self.schema)}

    def __repr__(self) -> str:
        return f"Adapter({self.name!r}, params={list(self.params)})"

    @classmethod
    def wrap(cls, obj: Any) -> Adapter:
        """Normalise any supported tool shape; raises ToolDefinitionError listing every problem."""
        if isinstance(obj, Adapter):
            return obj
        if isinstance(obj, type):
            try:
                obj = obj()
            except TypeError as exc:
                raise ToolDefinitionError(f"tool class {obj.__qualname__} cannot be built without "
                                          f"arguments ({exc}); pass an instance instead") from None
        if hasattr(obj, "as_adapter"):
            adapter: Adapter = obj.as_adapter()
            return adapter
        if isinstance(obj, Tool | FunctionTool):
            return cls(name=obj.name, description=obj.description, schema=obj.parameters_schema(),
                       invoke=functools.partial(invoke, _executor(obj)), risk=obj.risk,
                       interactive=obj.interactive, source=obj)
        if isinstance(obj, Mapping):
            return _from_dict(obj)
        if (inspect.isfunction(obj) or inspect.ismethod(obj)) and not hasattr(obj, "name"):
            return cls.wrap(tool(obj))
        return _from_duck(obj)


def _executor(obj: Tool | FunctionTool) -> Callable[..., Any]:
    # An @tool's own function, not FunctionTool.execute (a sync wrapper): an async one then runs on the loop,
    # rather than on a worker thread that only hands its coroutine back. Its arguments of a rich type (a
    # pydantic model, a dataclass) are built from the model's JSON first.
    if isinstance(obj, FunctionTool) and type(obj).execute is FunctionTool.execute:
        return typed(obj.fn)
    return obj.execute


def _from_dict(spec: Mapping[str, Any]) -> Adapter:
    params, schema = split_params(spec.get("params"))
    schema = spec.get("schema", schema)
    risk = spec.get("risk", "read")
    problems = [f"unknown key {k!r} (allowed: {sorted(DICT_KEYS)})" for k in sorted(set(spec) - DICT_KEYS)]
    problems += definition_problems(spec.get("name"), spec.get("description"), params, schema, risk)
    if not callable(spec.get("execute")):
        problems.append("execute: give a callable taking the arguments as keywords")
    if problems:
        raise ToolDefinitionError(f"tool dict {spec.get('name')!r} is not a valid tool:\n  - "
                                  + "\n  - ".join(problems))
    return Adapter(name=spec["name"], description=spec["description"],
                   schema=schema if schema is not None else to_schema(params),
                   invoke=functools.partial(invoke, spec["execute"]), risk=risk,
                   interactive=bool(spec.get("interactive")), source=spec)


def _from_duck(obj: Any) -> Adapter:
    name = getattr(obj, "name", None)
    fn = getattr(obj, "execute", None) or (obj if callable(obj) else None)
    if not isinstance(name, str) or fn is None:
        raise ToolDefinitionError(f"{obj!r} is not a tool: give it a str `name` and an `execute(**kwargs)` or "
                                  f"`__call__(**kwargs)` method, or use @tool, a Tool subclass or a dict")
    description = getattr(obj, "description", None) or inspect.getdoc(obj) or name
    params, schema = split_params(getattr(obj, "params", None))
    schema = getattr(obj, "schema", None) or schema
    declared = schema is not None or bool(params)
    problems = definition_problems(name, description, params, schema, getattr(obj, "risk", "read"))
    if problems:
        raise ToolDefinitionError(f"{obj!r} is not a valid tool:\n  - " + "\n  - ".join(problems))
    return Adapter(name=name, description=str(description), schema=schema or to_schema(params),
                   invoke=functools.partial(invoke, fn), validate=declared, risk=getattr(obj, "risk", "read"),
                   interactive=bool(getattr(obj, "interactive", False)), source=obj)


def wrap_all(tools: Iterable[Any]) -> dict[str, Adapter]:
    """``{name: adapter}`` for a tool list (Brute's ``Brute.tools``); refuses bad tools and duplicate names."""
    adapters: dict[str, Adapter] = {}
    problems: list[str] = []
    for obj in tools:
        try:
            adapter = Adapter.wrap(obj)
        except ToolDefinitionError as exc:
            problems.append(str(exc))
            continue
        if adapter.name in adapters:
            problems.append(f"two tools are named {adapter.name!r}; tool names must be unique")
            continue
        adapters[adapter.name] = adapter
    if problems:
        raise ToolDefinitionError("cannot use these tools:\n" + "\n".join(problems))
    return adapters
