"""A real MCP server, written with the official SDK, for the MCP tests.

`python mcp_fixture_server.py` serves over stdio; `... http PORT` over streamable HTTP.
Its tools cover what agentls must handle: a read-only tool, progress, an error result,
an image, a structured result, and a crash (the process exits mid-call).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import ToolAnnotations

server = MCPServer("fixture", version="1.2.3")
# One pixel PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Says the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await asyncio.sleep(0.02)
    return f"counted to {steps}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
def picture() -> Image:
    """A one-pixel picture."""
    return Image(data=PIXEL, format="png")


@server.tool()
def crash() -> str:
    """Exits the server mid-call."""
    sys.stderr.write("fixture: crashing now\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleeps."""
    await asyncio.sleep(seconds)
    return "slept"


@server.resource("note://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    return "The fixture's readme."


@server.prompt()
def review(code: str) -> str:
    """Review a piece of code."""
    return f"Please review this code:\n{code}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", port=int(sys.argv[2]))
    else:
        server.run()
