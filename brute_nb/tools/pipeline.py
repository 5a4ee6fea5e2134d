"""ToolPipeline: a tool that runs each call through its own middleware stack (Brute's ``Turn::ToolPipeline``).

    read = (ToolPipeline(name="read", description="Read a file", params={"file_path": {...}})
            .use(ValidateParams)
            .run(lambda env: env.update(result=open(env["arguments"]["file_path"]).read())))

The tool env is ``{"name", "arguments", "result", "params", "schema", "events", "metadata", "env"}`` (``env`` is
the turn's env, or None outside a pipeline). Middleware has the agent's shape: ``Mw(app, **options)`` awaited as
``await mw(env)``. The stack is built once, on the first call. Arguments are not checked unless the stack says
so (``ValidateParams``): the pipeline owns its policy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from brute_nb.errors import MiddlewareError, ToolDefinitionError
from brute_nb.maybe_async import call_maybe_async
from brute_nb.tools.adapter import Adapter
from brute_nb.tools.base import definition_problems
from brute_nb.tools.context import _current
from brute_nb.tools.schema import split_params, to_flat, to_schema, validate

ToolEnv = dict[str, Any]
ToolApp = Callable[[ToolEnv], Awaitable[Any]]


class ValidateParams:
    """Refuses arguments that do not fit the tool's params (missing, wrong type, unknown) before the terminal
    runs; the error names every problem and reaches the model as an ``Error: ToolArgumentError: ...`` result."""

    def __init__(self, app: ToolApp) -> None:
        self.app = app

    async def __call__(self, env: ToolEnv) -> Any:
        env["arguments"] = validate(env["schema"], env["arguments"])
        return await self.app(env)


class ToolPipeline:
    """A named tool whose calls run through ``use``d middleware around a ``run`` terminal."""

    def __init__(self, *, name: str, description: str, params: Mapping[str, Any] | None = None,
                 schema: Mapping[str, Any] | None = None, risk: str = "read") -> None:
        flat, raw = split_params(params)
        schema = schema if schema is not None else raw
        problems = definition_problems(name, description, flat, schema, risk)
        if problems:
            raise ToolDefinitionError(f"ToolPipeline {name!r} is not a valid tool:\n  - " + "\n  - ".join(problems))
        self.name = name
        self.description = description
        self.schema: dict[str, Any] = dict(schema) if schema is not None else to_schema(flat)
        self.risk = risk
        self._layers: list[tuple[Callable[..., Any], dict[str, Any]]] = []
        self._terminal: Callable[[ToolEnv], Any] | None = None
        self._app: ToolApp | None = None

    def use(self, middleware: Callable[..., Any], **options: Any) -> ToolPipeline:
        if not callable(middleware):
            raise MiddlewareError(f"use() takes a middleware class, got {middleware!r}")
        self._layers.append((middleware, options))
        self._app = None
        return self

    def run(self, terminal: Callable[[ToolEnv], Any]) -> ToolPipeline:
        """Set the terminal: ``fn(env)`` (sync or async) reads ``env["arguments"]`` and sets ``env["result"]``."""
        if not callable(terminal):
            raise MiddlewareError(f"run() takes a callable terminal(env), got {terminal!r}")
        self._terminal = terminal
        self._app = None
        return self

    def _build(self) -> ToolApp:
        terminal = self._terminal
        if terminal is None:
            raise MiddlewareError(f"ToolPipeline {self.name!r} has no terminal: call .run(fn) first")

        async def app(env: ToolEnv) -> Any:
            return await call_maybe_async(terminal, env, thread=False)

        built: ToolApp = app
        for cls, options in reversed(self._layers):
            built = cls(built, **options)
        return built

    async def call(self, arguments: Mapping[str, Any] | None = None) -> Any:
        """Run one call; returns ``env["result"]``."""
        if self._app is None:
            self._app = self._build()
        turn = _current.get()
        env: ToolEnv = {
            "name": self.name,
            "arguments": dict(arguments or {}),
            "result": None,
            "params": self.params,
            "schema": self.schema,
            "events": turn.get("events") if turn else None,
            "metadata": {},
            "env": turn,
        }
        await self._app(env)
        return env["result"]

    @property
    def params(self) -> dict[str, dict[str, Any]]:
        return to_flat(self.schema)

    def as_adapter(self) -> Adapter:
        return Adapter(name=self.name, description=self.description, schema=self.schema, invoke=self.call,
                       validate=False, risk=self.risk, source=self)
