"""An MCP server (stdio, Python standard library only) whose calls fail on
demand, for tests/fault_injection_sources.rs. Every call runs on its own
thread, so a call that hangs or answers slowly does not hold the others:
faults stay on the call that asked for them.

    fault_mcp.py MARKER        (MARKER only tags the process for counting)

Tools, all read-only (so Baton runs them side by side):
  echo {text}     returns `text`
  slow {ms, text} sleeps `ms` milliseconds, then returns `text`
  hang {}         never answers
  big {mb}        answers with one message of `mb` MiB (over the 16 MiB limit)
  cut {}          writes half a message and a newline (a malformed frame)
  crash {}        the whole server exits in the middle of the call
  fail {}         answers with an error result
"""

import json
import os
import sys
import threading
import time

OUT = threading.Lock()
CHUNK = "y" * (1024 * 1024)
NAMES = ["echo", "slow", "hang", "big", "cut", "crash", "fail"]
PROPS = {
    "text": {"type": "string"},
    "ms": {"type": "integer"},
    "mb": {"type": "integer"},
}


def write(*parts):
    # One message at a time: a big answer is written in chunks, and another
    # thread's answer must not land in the middle of it.
    with OUT:
        for p in parts:
            sys.stdout.write(p)
        sys.stdout.flush()


def answer(rid, result):
    write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")


def text(rid, t, error=False):
    answer(rid, {"content": [{"type": "text", "text": t}], "isError": error})


def call(rid, name, args):
    if name == "echo":
        text(rid, str(args.get("text", "")))
    elif name == "slow":
        time.sleep(int(args.get("ms", 0)) / 1000)
        text(rid, str(args.get("text", "")))
    elif name == "hang":
        time.sleep(3600)
    elif name == "big":
        head = '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % json.dumps(rid)
        write(head, *([CHUNK] * int(args.get("mb", 17))), '"}]}}\n')
    elif name == "cut":
        write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"te\n' % json.dumps(rid))
    elif name == "crash":
        os._exit(3)
    elif name == "fail":
        text(rid, "the fail tool failed on purpose", error=True)
    else:
        write(json.dumps({"jsonrpc": "2.0", "id": rid,
                          "error": {"code": -32602, "message": f"unknown tool {name}"}}) + "\n")


def main():
    tools = [{"name": n, "description": f"The {n} tool.",
              "inputSchema": {"type": "object", "properties": PROPS},
              "annotations": {"readOnlyHint": True}} for n in NAMES]
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        if rid is None or method is None:
            continue
        if method == "initialize":
            answer(rid, {"protocolVersion": "2025-06-18",
                         "capabilities": {"tools": {}},
                         "serverInfo": {"name": "faults", "version": "1.0.0"}})
        elif method == "tools/list":
            answer(rid, {"tools": tools})
        elif method == "tools/call":
            params = msg.get("params") or {}
            threading.Thread(target=call, daemon=True,
                             args=(rid, params.get("name"), params.get("arguments") or {})).start()
        else:
            answer(rid, {})


if __name__ == "__main__":
    main()
