"""A local mock of the Anthropic Messages API (127.0.0.1) for the peer harness.

The twin of mock_responses.py for clients that speak Anthropic's wire:
Claude Code, and `baton agent --provider anthropic`. Turn 1 streams the
workload's shell calls as `tool_use` blocks of the client's `Bash` tool; the
server notes when the last byte of turn 1 was flushed and when the request
carrying the `tool_result` blocks has been read whole (the turn gap). Every
other request (turn 2, and side requests a client may make, such as title
or topic generation) is answered with a short text.

It shares `Run` with mock_responses.py, so run.py reads both alike.
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler

import mock_responses
from mock_responses import Run


def event(wfile, kind, data):
    data = dict(data, type=kind)
    wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())


def usage(output_tokens):
    return {"input_tokens": 100, "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def start(wfile, msg_id, model):
    event(wfile, "message_start", {"message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage(1)}})


def stream_calls(handler, run, model):
    run.tool = "Bash"
    w = handler.wfile
    start(w, "msg_1", model)
    for i, cmd in enumerate(run.commands):
        call_id = "toolu_%03d" % i
        event(w, "content_block_start", {"index": i, "content_block": {
            "type": "tool_use", "id": call_id, "name": "Bash", "input": {}}})
        event(w, "content_block_delta", {"index": i, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps({"command": cmd})}})
        event(w, "content_block_stop", {"index": i})
        run.call_ids.append(call_id)
    event(w, "message_delta", {"delta": {"stop_reason": "tool_use", "stop_sequence": None},
                               "usage": usage(50)})
    event(w, "message_stop", {})
    w.flush()
    run.turn1_end = time.monotonic()
    run.turn1_flushed.set()


def stream_text(handler, model, text="All done."):
    w = handler.wfile
    start(w, "msg_2", model)
    event(w, "content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    event(w, "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}})
    event(w, "content_block_stop", {"index": 0})
    event(w, "message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": usage(5)})
    event(w, "message_stop", {})
    w.flush()


def tool_results(request):
    """The (tool_use_id, content) pairs of the request's last user message."""
    messages = request.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return []
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return []
    return [(b.get("tool_use_id"), b.get("content")) for b in content
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def offers_bash(request):
    return any(isinstance(t, dict) and t.get("name") == "Bash"
               for t in request.get("tools") or [])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = "mock-messages"

    def log_message(self, *args):
        if self.server.verbose:
            sys.stderr.write("mock: %s\n" % (args[0] % args[1:]))

    def reply_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.server.current.requests.append(("GET", self.path, None))
        self.reply_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                        "message": "not here"}})

    def do_HEAD(self):
        self.send_response(200)
        self.end_headers()

    def do_POST(self):
        run = self.server.current
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        at = time.monotonic()
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        path = self.path.split("?")[0].rstrip("/")
        run.requests.append(("POST", path, request))
        if not isinstance(request, dict):
            self.reply_json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "not JSON"}})
            return
        if path.endswith("/count_tokens"):
            self.reply_json(200, {"input_tokens": 100})
            return
        if not path.endswith("/messages"):
            self.reply_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": path}})
            return
        model = request.get("model") or "claude-sonnet-4-5"
        results = tool_results(request)
        streaming = bool(request.get("stream"))
        if not streaming:
            # Side requests some clients make without streaming.
            self.reply_json(200, {"id": "msg_x", "type": "message", "role": "assistant",
                                  "model": model, "stop_reason": "end_turn",
                                  "stop_sequence": None, "usage": usage(5),
                                  "content": [{"type": "text", "text": "ok"}]})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        if results:
            with run.lock:
                if run.turn2_at is None:
                    run.turn2_at = at
                    run.outputs = results
            run.turn2_seen.set()
            stream_text(self, model)
            return
        with run.lock:
            first = offers_bash(request) and run.turn1_end is None and not run.call_ids
            if first:
                run.call_ids.append(None)  # claimed: later side requests get text
        if not first:
            stream_text(self, model, "ok")
            return
        run.call_ids.clear()
        stream_calls(self, run, model)


def serve(verbose=False):
    return mock_responses.serve(verbose, Handler)


if __name__ == "__main__":
    mock_responses.probe(serve(verbose=True), ["true"] * 4, "")
