#!/usr/bin/env python3
"""PreToolUse hook for Bash: one example of each thing a hook can say.

- deny a force push to main (the model sees the reason and can adapt);
- ask before installing packages (the host's approver decides);
- rewrite `git log` so it never waits for a pager (the rewritten command
  is what the permission rules then check, and what runs);
- otherwise say nothing: the permission rules decide alone.

Reads the event from stdin and answers on stdout, as Claude Code hooks do.
"""
import json
import sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
words = command.split()


def answer(**specific):
    specific["hookEventName"] = "PreToolUse"
    print(json.dumps({"hookSpecificOutput": specific}))
    sys.exit(0)


if words[:2] == ["git", "push"] and ("--force" in words or "-f" in words) and "main" in words:
    answer(
        permissionDecision="deny",
        permissionDecisionReason="force-pushing main rewrites shared history; push a branch and open a pull request instead",
    )

if words[:2] in (["npm", "install"], ["pip", "install"], ["cargo", "install"]):
    answer(
        permissionDecision="ask",
        permissionDecisionReason="installing packages changes the environment for everyone on this machine",
    )

if words[:2] == ["git", "log"]:
    answer(
        updatedInput={"command": "git --no-pager " + command.strip()[len("git "):]},
        additionalContext="git log was run with --no-pager so it cannot hang waiting for input.",
    )

sys.exit(0)
