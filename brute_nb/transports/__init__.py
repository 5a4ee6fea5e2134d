"""Message transports: translate between the Brute ``Message`` log and one library's wire format (pure, no I/O)."""

from brute_nb.transports.anthropic import Anthropic
from brute_nb.transports.base import MessageTransport
from brute_nb.transports.openai import OpenAI
from brute_nb.transports.openai_responses import OpenAIResponses

__all__ = ["Anthropic", "MessageTransport", "OpenAI", "OpenAIResponses"]
