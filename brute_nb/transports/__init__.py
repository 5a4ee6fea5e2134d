"""Message transports: translate between the Brute ``Message`` log and one library's wire format (pure, no I/O)."""

from brute_nb.transports.anthropic import Anthropic
from brute_nb.transports.any_llm import AnyLLM
from brute_nb.transports.base import MessageTransport
from brute_nb.transports.llm import LLM, LLMRequest
from brute_nb.transports.openai import OpenAI
from brute_nb.transports.openai_responses import OpenAIResponses
from brute_nb.transports.pydantic_ai import PydanticAI

__all__ = ["LLM", "Anthropic", "AnyLLM", "LLMRequest", "MessageTransport", "OpenAI", "OpenAIResponses", "PydanticAI"]
