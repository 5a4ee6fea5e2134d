"""A tool result that carries files names them as the tool named them, or not at all (issue 42 §6): the model never
reads brute_nb's storage names (``<sha256>.png``), through the real SDKs, whichever API. Where a named file's name
goes (a document's title, a file's filename) is tests/transports/test_attachment_forms.py."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from brute_nb import agent, tool
from brute_nb.attachments import attachment
from brute_nb.middleware import DefaultToolPipeline
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.testing import FakeProvider
from brute_nb.testing.script import call, reply
from tests.providers.helpers import FACTORIES

pytestmark = pytest.mark.anyio


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "red").save(buffer, format="PNG")
    return buffer.getvalue()


async def result_of(fake: FakeProvider, kind: str, returned: Any) -> tuple[Any, str]:
    @tool
    def snap() -> Any:
        """Take a picture."""
        return returned

    fake.add(reply("", call("snap", {})), "A red square.")
    a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[snap]).run(FACTORIES[kind](fake))
    env = await a.astart("snap it")
    result = next(m for m in env["messages"] if m.role == "tool")
    return result, json.dumps(fake.requests[1]["json"])


@pytest.mark.parametrize("kind", sorted(FACTORIES))
async def test_unnamed_files_are_not_named_by_their_storage_names(fake_provider: FakeProvider, kind: str) -> None:
    """An Attachment made from bytes (its label is its storage name) and a PIL image (a name brute_nb made up)."""
    data = png()
    result, sent = await result_of(fake_provider, kind, ["the picture", attachment(data), Image.new("RGB", (1, 1))])
    digest = hashlib.sha256(data).hexdigest()
    assert result.content == "the picture"
    assert digest not in sent and "image.png" not in sent
    assert result.attachments[0].sha256 == digest and len(result.attachments) == 2  # the files still go


@pytest.mark.parametrize("kind", sorted(FACTORIES))
async def test_images_the_tool_named_keep_their_names_but_go_unnamed(fake_provider: FakeProvider, kind: str,
                                                                  tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(png())
    named = attachment(png(), name="square.png")
    result, sent = await result_of(fake_provider, kind, ["two pictures", attachment(tmp_path / "chart.png"), named])
    assert result.content == "two pictures"  # the tool's text, no line of brute_nb's appended
    assert [a.name for a in result.attachments] == ["chart.png", "square.png"]  # kept: the cell and session show them
    assert "chart.png" not in sent and "square.png" not in sent  # no API has a name field for an image
