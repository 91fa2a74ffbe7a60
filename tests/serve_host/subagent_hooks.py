"""A host over `baton serve` whose settings have SubagentStart and
SubagentStop hooks (docs/serve-protocol.md, "Subagent hooks").

The SubagentStart hook gives the subagent context (it arrives in the
`subagent_request` line); the SubagentStop hook sends the subagent back once
(`subagent_continue`), and the host answers with a second
`subagent_result`. Prints a JSON summary for the Rust test.

Usage: subagent_hooks.py BATON WORKDIR
"""

import json
import os
import subprocess
import sys


def main():
    baton, work = sys.argv[1], sys.argv[2]
    home = os.path.join(work, "home")
    project = os.path.join(work, "project")
    os.makedirs(os.path.join(project, ".claude"))
    os.makedirs(home)
    log = os.path.join(work, "hooks.jsonl")
    start = ("input=$(cat); printf '%s\\n' \"$input\" >> " + log + "; "
             "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SubagentStart\","
             "\"additionalContext\":\"house rules\"}}'")
    stop = ("input=$(cat); printf '%s\\n' \"$input\" >> " + log + "; "
            "case \"$input\" in *'\"stop_hook_active\":false'*) "
            "echo '{\"decision\":\"block\",\"reason\":\"run the tests\"}';; esac")
    settings = {"hooks": {
        "SubagentStart": [{"hooks": [{"type": "command", "command": start}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": stop}]}],
    }}
    with open(os.path.join(project, ".claude", "settings.json"), "w") as f:
        json.dump(settings, f)
    env = dict(os.environ, HOME=home)
    proc = subprocess.Popen(
        [baton, "serve", "--cwd", project, "--state-dir", os.path.join(work, ".state")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )

    def send(obj):
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()

    call = {"type": "tool_use", "id": "A", "name": "Agent",
            "input": {"description": "checked task", "prompt": "do it"}}
    send({"type": "message", "message": {"role": "assistant", "content": [call]}})
    request, continues, result, errors = None, [], None, []
    for raw in proc.stdout:
        line = json.loads(raw)
        kind = line["type"]
        if kind == "subagent_request":
            request = line
            send({"type": "subagent_result", "agent_id": line["agent_id"], "text": "first try"})
        elif kind == "subagent_continue":
            continues.append(line)
            send({"type": "subagent_result", "agent_id": line["agent_id"],
                  "text": "tests pass now"})
        elif kind == "result" and not line.get("agent_id"):
            result = line
        elif kind == "done" and not line.get("agent_id"):
            send({"type": "shutdown"})
        elif kind == "error":
            errors.append(line)
    proc.wait(timeout=30)
    with open(log) as f:
        logged = [json.loads(l) for l in f if l.strip()]
    print(json.dumps({
        "exit": proc.returncode,
        "errors": errors,
        "additional_context": request and request.get("additional_context"),
        "continues": continues,
        "text": result and result["block"]["content"][0]["text"],
        "events": [(e["hook_event_name"], e.get("agent_type"), e.get("stop_hook_active"),
                    e.get("last_assistant_message")) for e in logged],
    }))


if __name__ == "__main__":
    main()
