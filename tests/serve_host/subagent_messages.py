"""A host over `baton serve` that messages its subagents (SendMessage)
and stops a background one through the task list (docs/serve-protocol.md,
"Messages to subagents").

1. A background Agent named "helper": its subagent_request; a SendMessage
   to it while it runs arrives as a `subagent_message` line.
2. The host ends it; a SendMessage to it now resumes it: a second
   subagent_request for the same agent id with `resume: true`.
3. A second background agent is stopped with `task_stop` (it is a task
   of kind `agent`): `subagent_cancelled`, then `task_stopped`.
Prints a JSON summary for the Rust test.

Usage: subagent_messages.py BATON WORKDIR
"""

import json
import os
import subprocess
import sys


def main():
    baton, work = sys.argv[1], sys.argv[2]
    home = os.path.join(work, "home")
    os.makedirs(home)
    proc = subprocess.Popen(
        [baton, "serve", "--cwd", work, "--state-dir", os.path.join(work, ".state")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, HOME=home),
    )

    def send(obj):
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()

    def message(*calls):
        send({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": i, "name": n, "input": x} for (i, n, x) in calls]}})

    s = {"requests": [], "messages": [], "results": {}, "errors": [], "finished": [],
         "agent_tasks": [], "cancelled": [], "stopped": None}
    step = 0
    message(("A1", "Agent", {"description": "helper", "prompt": "help out",
                             "name": "helper", "run_in_background": True}))
    for raw in proc.stdout:
        line = json.loads(raw)
        kind = line["type"]
        if kind == "subagent_request":
            s["requests"].append({k: line.get(k) for k in ("agent_id", "resume", "prompt")})
        elif kind == "subagent_message":
            s["messages"].append({k: line.get(k) for k in ("agent_id", "message", "from")})
            # The running subagent got it: end its run.
            send({"type": "subagent_result", "agent_id": line["agent_id"],
                  "text": "first-answer"})
        elif kind == "subagent_cancelled":
            s["cancelled"].append(line["agent_id"])
        elif kind == "result" and not line.get("agent_id"):
            s["results"][line["block"]["tool_use_id"]] = line["block"]["content"][0]["text"]
        elif kind == "notification" and line["kind"] == "tasks_changed":
            for t in line["data"]["tasks"]:
                if t["kind"] == "agent":
                    s["agent_tasks"].append([t["id"], t["status"]])
        elif kind == "notification" and line["kind"] == "agent_finished":
            s["finished"].append([line["data"]["agent_id"], line["data"]["status"]])
            if step == 1 and line["data"]["agent_id"] == "agent-1":
                step = 2
                message(("M2", "SendMessage", {"to": "helper", "message": "again please"}))
            elif step == 3 and line["data"]["agent_id"] == "agent-1":
                step = 4
                message(("A2", "Agent", {"description": "victim", "prompt": "run long",
                                         "run_in_background": True}))
        elif kind == "task_stopped":
            s["stopped"] = line["task"]
        elif kind == "error":
            s["errors"].append(line)
        elif kind == "done" and not line.get("agent_id"):
            if step == 0:
                step = 1
                message(("M1", "SendMessage", {"to": "helper", "message": "more work"}))
            elif step == 4:
                step = 5
                send({"type": "task_stop", "task_id": "agent-2"})
        if kind == "subagent_request" and line.get("resume"):
            step = 3
            send({"type": "subagent_result", "agent_id": line["agent_id"],
                  "text": "second-answer"})
        if step == 5 and s["stopped"] is not None and ["agent-2", "stopped"] in s["finished"]:
            send({"type": "shutdown"})
            step = 6
    proc.wait(timeout=60)
    s["exit"] = proc.returncode
    print(json.dumps(s))


if __name__ == "__main__":
    main()
