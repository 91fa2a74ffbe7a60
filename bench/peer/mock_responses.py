"""A local mock of the OpenAI Responses API (127.0.0.1) for the peer harness.

Turn 1 streams the workload's shell calls in the real event shapes, in the
calling agent's own tool shape (Baton's `Bash`, codex's `exec_command`,
`shell_command` or `shell`, whichever the request offers). The server notes
when the last byte of turn 1 was flushed, and when the turn-2 request (the
one carrying `function_call_output` items) has been read whole: the
difference is the turn gap. Turn 2 is answered with a short final message.

Used by run.py in-process (a thread); `python3 mock_responses.py` alone
serves the `true64` workload and logs every request, for probing a client.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def shell_tool(request):
    """(tool name, argument builder) for the shell tool this client offers."""
    tools = {}
    for t in request.get("tools") or []:
        name = t.get("name") or (t.get("function") or {}).get("name")
        if name:
            tools[name] = t
    if "Bash" in tools:
        return "Bash", lambda cmd: {"command": cmd}
    if "exec_command" in tools:
        return "exec_command", lambda cmd: {"cmd": cmd}
    if "shell_command" in tools:
        return "shell_command", lambda cmd: {"command": cmd}
    if "shell" in tools:
        return "shell", lambda cmd: {"command": ["bash", "-lc", cmd]}
    raise ValueError("no shell tool in the request: %s" % sorted(tools))


class Run:
    """One agent run against one workload."""

    def __init__(self, commands):
        self.commands = commands
        self.lock = threading.Lock()
        self.tool = None
        self.turn1_end = None
        self.turn2_at = None
        self.outputs = None
        self.call_ids = []
        self.requests = []
        self.errors = []
        self.turn1_flushed = threading.Event()
        self.turn2_seen = threading.Event()


def sse(wfile, kind, data, seq):
    data = dict(data, type=kind, sequence_number=seq)
    wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())


def stream_calls(handler, run, name, args_of):
    run.tool = name
    w = handler.wfile
    output = []
    seq = 0
    sse(w, "response.created", {"response": {"id": "resp_1", "object": "response",
                                             "status": "in_progress", "output": []}}, seq)
    seq += 1
    for i, cmd in enumerate(run.commands):
        call_id = "call_%03d" % i
        item_id = "fc_%03d" % i
        args = json.dumps(args_of(cmd))
        added = {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
                 "arguments": "", "status": "in_progress"}
        done = dict(added, arguments=args, status="completed")
        sse(w, "response.output_item.added", {"output_index": i, "item": added}, seq)
        sse(w, "response.function_call_arguments.delta",
            {"output_index": i, "item_id": item_id, "delta": args}, seq + 1)
        sse(w, "response.function_call_arguments.done",
            {"output_index": i, "item_id": item_id, "arguments": args}, seq + 2)
        sse(w, "response.output_item.done", {"output_index": i, "item": done}, seq + 3)
        seq += 4
        output.append(done)
        run.call_ids.append(call_id)
    sse(w, "response.completed", {"response": {
        "id": "resp_1", "object": "response", "status": "completed", "output": output,
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 150}}}, seq)
    w.flush()
    run.turn1_end = time.monotonic()
    run.turn1_flushed.set()


def stream_final(handler):
    w = handler.wfile
    text = "All done."
    item = {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    sse(w, "response.created", {"response": {"id": "resp_2", "object": "response",
                                             "status": "in_progress", "output": []}}, 0)
    sse(w, "response.output_item.added", {"output_index": 0, "item": dict(
        item, status="in_progress", content=[])}, 1)
    sse(w, "response.output_text.delta", {"output_index": 0, "item_id": "msg_2",
                                          "content_index": 0, "delta": text}, 2)
    sse(w, "response.output_item.done", {"output_index": 0, "item": item}, 3)
    sse(w, "response.completed", {"response": {
        "id": "resp_2", "object": "response", "status": "completed", "output": [item],
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 105}}}, 4)
    w.flush()


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: the body ends when the connection closes (no framing to get wrong).
    protocol_version = "HTTP/1.0"
    server_version = "mock-responses"

    def log_message(self, *args):
        if self.server.verbose:
            sys.stderr.write("mock: %s\n" % (args[0] % args[1:]))

    def do_GET(self):
        self.server.current.requests.append(("GET", self.path, None))
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": {"message": "not here", "type": "not_found"}}')

    def do_POST(self):
        run = self.server.current
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        at = time.monotonic()
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        run.requests.append(("POST", self.path, request))
        if not self.path.rstrip("/").endswith("/responses") or not isinstance(request, dict):
            self.send_response(404)
            self.end_headers()
            return
        items = request.get("input") or []
        outputs = [i for i in items if isinstance(i, dict)
                   and i.get("type") == "function_call_output"]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        if outputs:
            with run.lock:
                if run.turn2_at is None:
                    run.turn2_at = at
                    run.outputs = [(o.get("call_id"), o.get("output")) for o in outputs]
            run.turn2_seen.set()
            stream_final(self)
            return
        try:
            name, args_of = shell_tool(request)
        except ValueError as e:
            run.errors.append(str(e))
            stream_final(self)
            return
        stream_calls(self, run, name, args_of)


def serve(verbose=False, handler=None):
    """A server on 127.0.0.1 in a thread of its own; `handler` defaults to
    this mock's (mock_messages.py passes its own)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler or Handler)
    server.daemon_threads = True
    server.verbose = verbose
    server.current = Run([])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def probe(server, commands, path):
    """Serves `commands` and logs every request, for probing a client."""
    server.current = Run(commands)
    print("http://127.0.0.1:%d%s" % (server.server_address[1], path), flush=True)
    try:
        while True:
            time.sleep(1)
            for r in server.current.requests:
                print(json.dumps(r)[:3000], flush=True)
            server.current.requests.clear()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    probe(serve(verbose=True), ["true"] * 64, "/v1")
