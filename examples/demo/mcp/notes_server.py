"""A small offline MCP server for the demo (official Python SDK, `mcp`).

Three tools over an in-memory notebook: `search` (read-only, so Baton runs
parallel searches at once), `add` (a writer) and `digest` (reports progress).
"""

import asyncio

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

notes = [
    "Baton runs read-only calls in parallel and writers alone, in order.",
    "Every call gets exactly one result, in call order.",
    "MCP tools are named mcp__<server>__<tool>.",
]

server = MCPServer("notes")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def search(query: str) -> str:
    """Notes containing `query` (case-insensitive)."""
    await asyncio.sleep(0.2)
    hits = [n for n in notes if query.lower() in n.lower()]
    return "\n".join(hits) if hits else f"no note mentions {query!r}"


@server.tool()
def add(text: str) -> str:
    """Adds a note."""
    notes.append(text)
    return f"added note {len(notes)}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def digest(ctx: Context) -> str:
    """Counts the notes, reporting progress per note."""
    for i, _ in enumerate(notes):
        await asyncio.sleep(0.05)
        await ctx.report_progress(i + 1, len(notes), f"read note {i + 1}")
    return f"{len(notes)} notes"


if __name__ == "__main__":
    server.run()
