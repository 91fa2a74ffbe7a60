"""A host over `baton serve` that evaluates prompt and agent hooks with its
"model" (docs/serve-protocol.md, "Prompt and agent hooks").

The settings hold a PreToolUse prompt hook on Bash and a PostToolUse agent
hook on Bash. The host's model says no to commands that mention `rm`, and
the agent hook objects to output containing "secret". Prints a JSON
summary for the Rust test.

Usage: model_hooks.py BATON WORKDIR
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
    settings = {
        "permissions": {"allow": ["Bash"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "prompt", "prompt": "Is this call safe? $ARGUMENTS", "model": "small"}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "agent", "prompt": "Check the output for leaks."}]}],
        },
    }
    with open(os.path.join(project, ".claude", "settings.json"), "w") as f:
        json.dump(settings, f)
    proc = subprocess.Popen(
        [baton, "serve", "--cwd", project, "--state-dir", os.path.join(work, ".state")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, HOME=home),
    )

    def send(obj):
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()

    def bash(call_id, command):
        return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}

    send({"type": "message", "message": {"role": "assistant", "content": [
        bash("rm", "rm -rf ./nothing"),
        bash("ok", "echo fine"),
        bash("leak", "echo the secret is 42"),
    ]}})
    requests, results, errors = [], {}, []
    for raw in proc.stdout:
        line = json.loads(raw)
        kind = line["type"]
        if kind == "hook_request":
            requests.append(line)
            event = line["input"]["hook_event_name"]
            if line["kind"] == "prompt":
                command = line["input"]["tool_input"]["command"]
                verdict = ({"ok": False, "reason": "the model says rm is unsafe"}
                           if "rm" in command else {"ok": True})
            else:
                out = json.dumps(line["input"].get("tool_response", ""))
                verdict = ({"ok": False, "reason": "the output leaks a secret"}
                           if "secret" in out else {"ok": True})
            send({"type": "hook_answer", "request_id": line["request_id"], "answer": verdict})
        elif kind == "result":
            results[line["tool_use_id"]] = line
        elif kind == "done":
            send({"type": "hook_answer", "request_id": "hook-999", "answer": {"ok": True}})
            send({"type": "shutdown"})
        elif kind == "error":
            errors.append(line["message"])
    proc.wait(timeout=30)

    def text(cid):
        return "\n".join(b.get("text", "") for b in results[cid]["block"]["content"])

    print(json.dumps({
        "exit": proc.returncode,
        "errors": errors,
        "kinds": sorted((r["kind"], r["input"]["hook_event_name"], r["input"]["tool_use_id"])
                        for r in requests),
        "prompt_ok": all("Is this call safe? {" in r["prompt"] for r in requests
                         if r["kind"] == "prompt"),
        "models": sorted({str(r["model"]) for r in requests}),
        "outcomes": {cid: r["outcome"]["kind"] for cid, r in results.items()},
        "rm": text("rm"),
        "ok": text("ok"),
        "leak": text("leak"),
    }))


if __name__ == "__main__":
    main()
