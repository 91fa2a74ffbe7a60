"""A scripted host running subagents over `baton serve` (docs/serve-protocol.md).

The "model" of each subagent is its prompt: a JSON object with `calls`
(one message of tool calls, each {id, name, input}) and then `reply`, or
`fail`. An Agent call inside `calls` carries the next level's script, so
one message describes a tree. The host answers every permission request
with allow and records what it saw; at the end it checks the results and
prints a JSON summary for the Rust test.

Usage: subagents.py BATON WORKDIR
"""

import json
import os
import subprocess
import sys


def agent(call_id, script, kind=None):
    inp = {"description": "scripted task", "prompt": json.dumps(script)}
    if kind:
        inp["subagent_type"] = kind
    return {"type": "tool_use", "id": call_id, "name": "Agent", "input": inp}


def bash(call_id, command):
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}


def main():
    baton, work = sys.argv[1], sys.argv[2]
    proc = subprocess.Popen(
        [baton, "serve", "--cwd", work, "--state-dir", os.path.join(work, ".state")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def send(obj):
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()

    touched = os.path.join(work, "touched.txt")
    inner = {"calls": [bash("deep", "echo from-depth-two")], "reply": "inner done"}
    message = {
        "role": "assistant",
        "content": [
            agent("A", {"calls": [bash("a-echo", "echo from-sub-a"), agent("A2", inner)],
                        "reply": "A finished"}),
            agent("B", {"fail": "the model gave up"}),
            agent("C", {"calls": [bash("c-touch", "touch " + touched)], "reply": "C finished"}),
            agent("E", {"calls": [], "reply": "nothing"}, kind="code-reviewer"),
        ],
    }
    send({"type": "message", "message": message})

    agents = {}         # agent_id -> request line
    sub_results = {}    # agent_id -> list of result lines
    sub_done = {}       # agent_id -> done line
    approvals = []
    top_results = []
    top_done = None
    errors = []

    for raw in proc.stdout:
        line = json.loads(raw)
        kind = line["type"]
        aid = line.get("agent_id")
        if kind == "subagent_request":
            agents[aid] = line
            script = json.loads(line["prompt"])
            if "fail" in script:
                send({"type": "subagent_result", "agent_id": aid, "error": script["fail"]})
                continue
            for call in script["calls"]:
                send({"type": "add", "agent_id": aid, "tool_use": call})
            send({"type": "end", "agent_id": aid})
        elif kind == "permission_request":
            approvals.append(line)
            send({"type": "approve", "request_id": line["request_id"], "decision": "allow"})
        elif kind == "result" and aid:
            sub_results.setdefault(aid, []).append(line)
        elif kind == "done" and aid:
            sub_done[aid] = line
            script = json.loads(agents[aid]["prompt"])
            texts = [b["block"]["content"][0]["text"] for b in sub_results.get(aid, [])]
            send({
                "type": "subagent_result",
                "agent_id": aid,
                "text": script["reply"] + "\n" + "\n".join(texts),
                "usage": {"input_tokens": 10, "output_tokens": 5},
            })
        elif kind == "result":
            top_results.append(line)
        elif kind == "done":
            top_done = line
            send({"type": "shutdown"})
        elif kind == "error":
            errors.append(line)
    proc.wait(timeout=30)

    by_call = {r["tool_use_id"]: r for r in top_results}
    text = lambda cid: by_call[cid]["block"]["content"][0]["text"]
    requests = {r["tool_use_id"]: r for r in agents.values()}
    summary = {
        "exit": proc.returncode,
        "errors": errors,
        "order": [r["tool_use_id"] for r in top_results],
        "a": text("A"),
        "a_outcome": by_call["A"]["outcome"]["kind"],
        "b": text("B"),
        "b_error": by_call["B"]["block"].get("is_error", False),
        "c": text("C"),
        "e": text("E"),
        "touched": os.path.exists(touched),
        "a2_chain": requests["A2"]["agent_chain"],
        "a_tools": sorted(t["name"] for t in requests["A"]["tools"]),
        "a_type": requests["A"]["agent_type"],
        "approval_chains": {a["tool_use_id"]: a.get("agent_chain") for a in approvals},
        "sub_orders": {requests_id: [r["tool_use_id"] for r in sub_results.get(agents_id, [])]
                       for agents_id, req in agents.items()
                       for requests_id in [req["tool_use_id"]]},
        "done_blocks": len(top_done["message"]["content"]) if top_done else None,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
