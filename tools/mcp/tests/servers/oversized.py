"""A hand-written MCP server (Python standard library only) for the size
limits and the resource tools.

    oversized.py [--http]

Tools:
  big {mb, id_last, delay_ms}
                      answers with one message of `mb` MiB, written in
                      chunks; the id comes first (as Python's SDK writes it)
                      or last (as the TypeScript SDK writes it)
  cut {newline}       writes half a message; with `newline` it ends the line,
                      without it the next answer is glued to the half
  echo {text}         returns `text`
  toggle {}           changes the tool list (adds `extra`, removes `gone`)
                      without telling the client
  crash {}            exits in the middle of the call
  gone {}, extra {}   exist before / after `toggle`

Resources: a tree under dir://root/ (text files, a subdirectory, a PNG
blob) and other://x.
"""

import base64
import json
import sys
import time

CHUNK = "x" * (1024 * 1024)
PNG = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + bytes(range(256)) * 4

RESOURCES = [
    {"uri": "dir://root/a.txt", "name": "a.txt", "mimeType": "text/plain"},
    {"uri": "dir://root/logo.png", "name": "logo.png", "mimeType": "image/png"},
    {"uri": "dir://root/sub/b.txt", "name": "b.txt", "mimeType": "text/plain"},
    {"uri": "dir://root/sub/deep/c.txt", "name": "c.txt", "mimeType": "text/plain"},
    {"uri": "other://x", "name": "x", "mimeType": "text/plain"},
]


def schema(props=None):
    return {"type": "object", "properties": props or {}}


TOOLS = {
    "big": schema({"mb": {"type": "integer"}, "id_last": {"type": "boolean"},
                   "delay_ms": {"type": "integer"}}),
    "cut": schema({"newline": {"type": "boolean"}}),
    "echo": schema({"text": {"type": "string"}}),
    "toggle": schema(),
    "crash": schema(),
    "gone": schema(),
}


def tool_list():
    return [{"name": n, "description": f"The {n} tool.", "inputSchema": s}
            for n, s in sorted(TOOLS.items())]


def text_result(rid, text):
    return {"jsonrpc": "2.0", "id": rid,
            "result": {"content": [{"type": "text", "text": text}]}}


def read_resource(rid, uri):
    if uri == "dir://root/logo.png":
        content = {"uri": uri, "mimeType": "image/png",
                   "blob": base64.b64encode(PNG).decode()}
    elif any(r["uri"] == uri for r in RESOURCES):
        content = {"uri": uri, "mimeType": "text/plain", "text": f"text of {uri}"}
    else:
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32002, "message": f"no resource {uri}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": {"contents": [content]}}


def handle(msg, out):
    """Answers one message; `out(text)` writes raw text to the client."""
    method = msg.get("method")
    rid = msg.get("id")
    if method is None or rid is None:
        return None
    params = msg.get("params") or {}
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "oversized", "version": "1.0.0"}}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": tool_list()}}
    if method == "resources/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"resources": RESOURCES}}
    if method == "resources/read":
        return read_resource(rid, params.get("uri"))
    if method != "tools/call":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    name = params.get("name")
    args = params.get("arguments") or {}
    rid_text = json.dumps(rid)
    if name == "big":
        # Lets a test put a second request in flight before the answer.
        time.sleep(int(args.get("delay_ms", 0)) / 1000)
        start = '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % rid_text
        end = '"}]}}\n'
        if args.get("id_last"):
            start = '{"result":{"content":[{"type":"text","text":"'
            end = '"}]},"jsonrpc":"2.0","id":%s}\n' % rid_text
        out(start)
        for _ in range(int(args.get("mb", 1))):
            out(CHUNK)
        out(end)
        return None
    if name == "cut":
        out('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"half' % rid_text)
        if args.get("newline"):
            out("\n")
        return None
    if name == "echo":
        return text_result(rid, args.get("text", ""))
    if name == "toggle":
        TOOLS.pop("gone", None)
        TOOLS["extra"] = schema()
        return text_result(rid, "toggled")
    if name == "crash":
        sys.exit(3)
    if name in TOOLS:
        return text_result(rid, f"{name} works")
    return {"jsonrpc": "2.0", "id": rid,
            "error": {"code": -32602, "message": f"unknown tool {name}"}}


def serve_stdio():
    def out(text):
        sys.stdout.write(text)
        sys.stdout.flush()

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        reply = handle(json.loads(line), out)
        if reply is not None:
            out(json.dumps(reply) + "\n")


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
            parts = []
            answer = handle(msg, parts.append)
            if answer is not None:
                parts.append(json.dumps(answer))
            if not parts:
                self.reply(202)
                return
            body = "".join(parts).strip().encode()
            self.reply(200, body, [("Content-Type", "application/json")])

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
