"""LLMModel: any model an installed simonw ``llm`` plugin offers (``-m llm:MODEL``), through the ``LLM`` transport.

The model comes from ``llm``'s own registry, so its plugins, aliases, ``extra-openai-models.yaml`` and stored keys
(``llm keys set``) all apply. The async variant streams text out as ``assistant_delta`` events; a plugin with only
a sync model runs on a worker thread. The reply is appended whole, as every provider's is.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

import anyio.to_thread

from brute_nb.errors import ProviderNotConfiguredError
from brute_nb.events import emit
from brute_nb.message import Message
from brute_nb.providers.base import Provider, server_tool_entries, tool_specs
from brute_nb.transports.llm import LLM


class LLMModel(Provider):
    """``agent.run(LLMModel("gpt-4.1-mini"))`` or ``LLMModel(a_model_object)``; ``-m llm:MODEL`` in a notebook."""

    provider = "llm"
    key_variable = "the key its llm plugin reads (llm keys set NAME)"

    def __init__(self, model: Any, **options: Any) -> None:
        self._model_object = None if isinstance(model, str) else model
        super().__init__(model if isinstance(model, str) else model.model_id, **options)

    def _sees_requests(self) -> bool:
        return False  # llm's plugins make their own requests

    def resolve(self) -> Any:
        """The ``llm`` model object (async when the plugin has one)."""
        if self._model_object is not None:
            return self._model_object
        import llm

        try:
            return llm.get_async_model(self.model)
        except llm.UnknownModelError:
            pass
        try:
            return llm.get_model(self.model)
        except llm.UnknownModelError:
            known = ", ".join(sorted(m.model_id for m in llm.get_models())[:20])
            raise ProviderNotConfiguredError(
                f"llm knows no model {self.model!r}; install the plugin that offers it (llm install ...) or pick "
                f"one of: {known} (llm models lists them all)") from None

    async def _complete(self, env: dict[str, Any]) -> Message:
        import llm

        server_tool_entries("llm", env.get("tools"))  # llm's models run none: refused by name
        model = self.resolve()
        request = LLM.dump_all(env["messages"])
        tools = [llm.Tool(name=s["name"], description=s["description"], input_schema=s["parameters"])
                 for s in tool_specs(env.get("tools"))]
        kwargs: dict[str, Any] = {"messages": request.history, "tool_results": request.tool_results,
                                  "key": self.api_key, **self.params}
        # llm has no tool_choice: a prompt with no tools= is its way to ask for none (FinalAnswer's answer at a
        # limit); the history's calls and results are still sent, as every plugin sends them.
        if tools and env.get("tool_choice") != "none":
            kwargs["tools"] = tools
        with _closing_clients(model) as made:
            response = model.prompt(request.prompt, **kwargs)
            if isinstance(response, llm.AsyncResponse):
                async for chunk in response:
                    emit(env, "assistant_delta", {"text": chunk})
            else:
                await anyio.to_thread.run_sync(response.text)
            for client in made:
                await _close(client)
        return LLM.wrap_one(response)


@contextlib.contextmanager
def _closing_clients(model: Any) -> Iterator[list[Any]]:
    """The SDK clients an llm plugin makes for one prompt, to close after it.

    llm's OpenAI plugin builds a new client for every prompt and never closes it, so each turn would leave a
    kept-alive connection open until the garbage collector finds it (a ResourceWarning, and a socket held per turn
    against a real API). ``get_client`` is wrapped on this model object only (its class is untouched), and only
    when the plugin has one.
    """
    made: list[Any] = []
    original = getattr(model, "get_client", None)
    if not callable(original) or "get_client" in vars(model):
        yield made
        return

    def get_client(*args: Any, **kwargs: Any) -> Any:
        client = original(*args, **kwargs)
        made.append(client)
        return client

    model.get_client = get_client
    try:
        yield made
    finally:
        del model.get_client


async def _close(client: Any) -> None:
    result = client.close()
    if inspect.isawaitable(result):
        await result
