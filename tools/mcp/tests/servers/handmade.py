"""A hand-written MCP server (Python standard library only), the kind many
people write: it speaks the classic `initialize` handshake and answers
methods it does not know with an empty result `{}`.

Used by tools/mcp/tests/connect_fallback.rs and elicitation_defaults.rs.

    handmade.py [--discover MODE] [--http]

MODE says how `server/discover` is answered:
  empty     {} (what this server does for any unknown method; the default)
  error     a JSON-RPC "method not found" error
  reject    a "missing required client capability" error (-32021)
  nonsense  a result that is not a discovery result
  old       a discovery result offering only 2025-11-25
  modern    a discovery result offering 2026-07-28 (the new handshake)
  silent    never
  late      {} after 3 s (stdio: everything behind it waits too)

With --http it serves streamable HTTP on 127.0.0.1 (a free port, printed as
`PORT <n>` on stdout); otherwise newline-delimited JSON-RPC on stdio.

Tools: `handshake` returns the methods received so far (JSON list);
`ask_defaults` (stdio only) sends a form elicitation whose fields have
defaults and returns the raw `elicitation/create` result it got back.
"""

import json
import sys
import threading
import time

MODE = "empty"
if "--discover" in sys.argv:
    MODE = sys.argv[sys.argv.index("--discover") + 1]

SEEN = []
LOCK = threading.Lock()

DEFAULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
        "nickname": {"type": "string"},
    },
}

TOOLS = [
    {
        "name": "handshake",
        "description": "The methods this server received so far.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "ask_defaults",
        "description": "Asks for a form whose fields have defaults.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def discover_answer(rid):
    """The reply to server/discover, or None for no reply."""
    if MODE in ("empty", "late"):
        if MODE == "late":
            time.sleep(3)
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    if MODE == "error":
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32601, "message": "Method not found"}}
    if MODE == "reject":
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32021, "message": "missing capability"}}
    if MODE == "nonsense":
        return {"jsonrpc": "2.0", "id": rid, "result": {"hello": "world"}}
    if MODE in ("old", "modern"):
        versions = ["2025-11-25"] if MODE == "old" else ["2026-07-28", "2025-11-25"]
        return {"jsonrpc": "2.0", "id": rid, "result": {
            "resultType": "complete", "supportedVersions": versions,
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo":
                      {"name": "handmade", "version": "1.0.0"}}}}
    return None  # silent


def text_result(rid, text):
    return {"jsonrpc": "2.0", "id": rid,
            "result": {"content": [{"type": "text", "text": text}]}}


def handle(msg, ask):
    """The reply to one message (None: no reply). `ask(method, params)`
    sends a request to the client and returns its reply."""
    method = msg.get("method")
    rid = msg.get("id")
    if method is None:
        return None  # a reply to a request of ours, handled by `ask`
    with LOCK:
        SEEN.append(method)
    if rid is None:
        return None  # a notification
    if method == "server/discover":
        return discover_answer(rid)
    if method == "initialize":
        asked = msg.get("params", {}).get("protocolVersion")
        version = asked if asked in ("2025-06-18", "2025-11-25") else "2025-11-25"
        return {"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "handmade", "version": "1.0.0"}}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}}
    if method == "tools/call":
        name = msg.get("params", {}).get("name")
        if name == "handshake":
            with LOCK:
                return text_result(rid, json.dumps(SEEN))
        if name == "ask_defaults" and ask is not None:
            reply = ask("elicitation/create", {
                "message": "Please confirm your details",
                "requestedSchema": DEFAULTS_SCHEMA})
            return text_result(rid, json.dumps(reply))
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32602, "message": f"unknown tool {name}"}}
    # What many hand-written servers do with a method they do not know.
    return {"jsonrpc": "2.0", "id": rid, "result": {}}


def serve_stdio():
    def write(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def ask(method, params):
        write({"jsonrpc": "2.0", "id": "ask-1", "method": method, "params": params})
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("id") == "ask-1" and "method" not in msg:
                return msg.get("result", msg.get("error"))
            reply = handle(msg, None)
            if reply is not None:
                write(reply)
        return None

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        reply = handle(json.loads(line), ask)
        if reply is not None:
            write(reply)


def serve_http():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, body=b"", headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            size = int(self.headers.get("Content-Length", "0"))
            msg = json.loads(self.rfile.read(size))
            answer = handle(msg, None)
            if answer is None:
                if msg.get("method") == "server/discover":
                    time.sleep(600)  # silent: hold the request open
                self.reply(202)
                return
            headers = [("Content-Type", "application/json")]
            if msg.get("method") == "initialize":
                headers.append(("Mcp-Session-Id", "handmade-session"))
            self.reply(200, json.dumps(answer).encode(), headers)

        def do_GET(self):
            self.reply(405)

        def do_DELETE(self):
            self.reply(200)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        serve_stdio()
