"""Which top-level body fields each endpoint of the fake takes: those the installed SDK's create params declare.

The real APIs refuse any other field with a 400 (Anthropic: ``<field>: Extra inputs are not permitted``; OpenAI:
``Unrecognized request argument supplied: <field>``), so a fake that took them would hide a body brute_nb built
wrong. One reading serves the synchronous and streaming routes (``fake_server``) and the batch routes
(``fake_batches``), so the two cannot disagree about what a body may hold.
"""

from __future__ import annotations

from typing import Any

HEADER_PARAMS = frozenset({"betas", "workspace_id"})
"""The SDK's create params it sends as headers (``anthropic-beta``, ``anthropic-workspace-id``), never in a body."""


def unknown_fields(api: str, body: dict[str, Any], beta: bool = True) -> list[str]:
    """The body's fields its endpoint does not take, read from the installed SDK's create params. For Anthropic,
    ``beta`` (an ``anthropic-beta`` header was sent) reads the beta params, which hold the plain ones; without it
    the plain params, as the plain endpoint knows no beta field."""
    if api == "anthropic":
        if beta:
            from anthropic.types.beta import message_create_params as beta_params

            fields = set(beta_params.MessageCreateParamsBase.__annotations__) - HEADER_PARAMS
        else:
            from anthropic.types import message_create_params

            fields = set(message_create_params.MessageCreateParamsBase.__annotations__) - HEADER_PARAMS
    elif api == "openai_chat":
        from openai.types.chat import completion_create_params

        fields = set(completion_create_params.CompletionCreateParamsBase.__annotations__)
    else:
        from openai.types.responses import response_create_params

        fields = set(response_create_params.ResponseCreateParamsBase.__annotations__)
    return sorted(k for k in body if k not in fields | {"stream"})


def unknown_message(api: str, field: str) -> str:
    """What the real API says of a body field it does not take."""
    if api == "anthropic":
        return f"{field}: Extra inputs are not permitted"
    return f"Unrecognized request argument supplied: {field}"
