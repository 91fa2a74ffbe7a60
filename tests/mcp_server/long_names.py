"""A stdio MCP server whose tool names break OpenAI's rules once Baton
prefixes them (`mcp__<server>__<tool>`): dotted names, and names past 64
characters. Used by tests/wire_one_layer.rs. Standard library only.

Speaks newline-delimited JSON-RPC: `initialize`, `tools/list`,
`tools/call` (echoes its arguments); any other request gets `{}`.
"""

import json
import sys

OPTIONAL = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for."},
        "limit": {"type": "integer", "minimum": 1},
        "labels": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["query"],
}

TOOLS = [
    {"name": "repo.issues.list", "description": "Lists the issues of a repository.",
     "inputSchema": OPTIONAL},
    {"name": "create_a_pull_request_review_comment_reply_on_a_specific_line_of_a_file",
     "description": "Replies to a review comment.", "inputSchema": OPTIONAL},
    {"name": "search.code.across_every_repository_of_the_organisation_by_query",
     "description": "Searches code.", "inputSchema": OPTIONAL},
    {"name": "search.code.across_every_repository_of_the_organisation_by_query_v2",
     "description": "Searches code, second edition.", "inputSchema": OPTIONAL},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if "id" not in request:
        continue
    method = request.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": request.get("params", {}).get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "long-names", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        args = request.get("params", {}).get("arguments", {})
        result = {"content": [{"type": "text", "text": json.dumps(args)}]}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})
