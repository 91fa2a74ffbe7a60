"""An MCP server (official Python SDK, mcp 2.3.0) that misbehaves on demand.

Used by tools/mcp/tests: it sleeps, hangs, crashes mid-call, prints junk on
stdout, streams progress, returns huge output, changes its tool list and
asks for elicitation. `--junk` prints non-JSON lines on stdout at start-up.
"""

import asyncio
import os
import sys

from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.types import ToolAnnotations
from pydantic import BaseModel

if "--junk" in sys.argv:
    # What a careless server (or a library it imports) does at start-up.
    print("Starting misbehaving server v1...", flush=True)
    print("", flush=True)
    print("WARNING: debug mode", flush=True)

print("misbehaving server starting", file=sys.stderr, flush=True)

server = MCPServer("misbehaving")
READ_ONLY = ToolAnnotations(readOnlyHint=True)


@server.tool(annotations=READ_ONLY)
async def slow_read(ms: int) -> str:
    """Sleeps `ms` milliseconds, then answers (read-only)."""
    await asyncio.sleep(ms / 1000)
    return f"slept {ms} ms"


@server.tool()
async def slow_write(ms: int) -> str:
    """Sleeps `ms` milliseconds; declares no hints, so it counts as a writer."""
    await asyncio.sleep(ms / 1000)
    return f"wrote after {ms} ms"


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Returns `text`."""
    return text


@server.tool(annotations=READ_ONLY)
def whoami() -> str:
    """The server's pid, CLAUDE_PROJECT_DIR, cwd and the FROM_CONFIG variable."""
    return (
        f"pid={os.getpid()} project={os.environ.get('CLAUDE_PROJECT_DIR')} "
        f"cwd={os.getcwd()} from_config={os.environ.get('FROM_CONFIG')}"
    )


@server.tool()
async def hang() -> str:
    """Never answers; writes a marker file when it is cancelled."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        marker = os.environ.get("CANCEL_MARKER")
        if marker:
            with open(marker, "a") as f:
                f.write("cancelled\n")
        raise
    return "unreachable"


@server.tool(annotations=READ_ONLY)
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header of this call (remote transports)."""
    headers = ctx.headers or {}
    return str(headers.get(name.lower()))


@server.tool()
def crash() -> str:
    """Exits the whole process in the middle of the call."""
    print("fatal: crash requested by the test", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def junk() -> str:
    """Prints a non-JSON line on stdout, then answers."""
    sys.stdout.write("this is not JSON-RPC\n")
    sys.stdout.flush()
    return "answered after junk"


@server.tool(annotations=READ_ONLY)
async def progress(steps: int, delay_ms: int, ctx: Context) -> str:
    """Reports progress `steps` times, `delay_ms` apart (read-only)."""
    for i in range(steps):
        await asyncio.sleep(delay_ms / 1000)
        await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
    return f"done after {steps} steps"


@server.tool(annotations=READ_ONLY)
def huge(chars: int) -> str:
    """Returns `chars` characters of text."""
    return ("0123456789" * (chars // 10 + 1))[:chars]


@server.tool(annotations=READ_ONLY, meta={"anthropic/maxResultSizeChars": 300000})
def huge_allowed(chars: int) -> str:
    """Like huge, but declares a larger result threshold in _meta."""
    return ("abcdefghij" * (chars // 10 + 1))[:chars]


@server.tool(description="Long. " + "x" * 3000)
def long_description() -> str:
    return "ok"


@server.tool()
def failing() -> str:
    """Raises: the result is an error result."""
    raise ValueError("the failing tool failed on purpose")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
async def ask(answer: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Asks the user for a name (form elicitation; input_required on 2026-07-28)."""
    if answer.action == "accept":
        return f"hello {answer.data.name}"
    return f"elicitation {answer.action}"


@server.tool()
async def add_tool(ctx: Context) -> str:
    """Adds a tool named `added` and announces the change."""

    def added() -> str:
        """A tool added at run time."""
        return "added works"

    server.add_tool(added, name="added", annotations=READ_ONLY)
    # 2026-07-28 delivers this on subscriptions/listen streams; older
    # protocol versions get the plain notification.
    await ctx.notify_tools_changed()
    await ctx.request_context.session.send_tool_list_changed()
    return "added"


@server.resource("test://greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from a resource"


def serve_remote(mode: str, port: int) -> None:
    """Serves `mode` (`--http` or `--sse`) on 127.0.0.1:`port` (0: any free
    port) and prints `listening on PORT` once the socket listens. The tests
    read that line instead of probing the port: a probe can be answered by
    another test's server, or by the probing socket itself (a TCP
    self-connect), before this one is up."""
    import socket

    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    if mode == "--http":
        app = server.streamable_http_app(host="127.0.0.1")
    else:
        # The legacy HTTP+SSE transport (2024-11-05): GET /sse, POST /messages/.
        app = server.sse_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    for mode in ("--http", "--sse"):
        if mode in sys.argv:
            serve_remote(mode, int(sys.argv[sys.argv.index(mode) + 1]))
            break
    else:
        server.run()
