#!/bin/bash
# One script for the session-level events of examples/settings.json, picked
# by hook_event_name. It keeps a per-session log in .claude/session.log and
# answers where the event lets it.
set -euo pipefail
input=$(cat)
event=$(jq -r .hook_event_name <<<"$input")
log="$CLAUDE_PROJECT_DIR/.claude/session.log"
mkdir -p "$(dirname "$log")"
case "$event" in
  SessionStart)
    printf 'start %s %s\n' "$(jq -r .session_id <<<"$input")" "$(jq -r .source <<<"$input")" >>"$log" ;;
  SessionEnd)
    printf 'end %s\n' "$(jq -r .reason <<<"$input")" >>"$log" ;;
  PostToolBatch)
    # Tell the model how many calls failed in the batch it just sent.
    failed=$(jq '[.tool_calls[] | select(.tool_response.interrupted == true)] | length' <<<"$input")
    calls=$(jq '.tool_calls | length' <<<"$input")
    jq -n --arg t "$calls calls ran; $failed were interrupted" \
      '{hookSpecificOutput: {hookEventName: "PostToolBatch", additionalContext: $t}}' ;;
  PermissionRequest)
    # Formatting never needs a question: allow it, and for the rest of the
    # session too.
    jq -n '{hookSpecificOutput: {hookEventName: "PermissionRequest", decision: {behavior: "allow",
      updatedPermissions: [{type: "addRules", rules: [{toolName: "Bash", ruleContent: "cargo fmt:*"}],
                            behavior: "allow", destination: "session"}]}}}' ;;
  PermissionDenied)
    # A denied read of a secret should not be retried; anything else may be.
    case "$(jq -r .reason <<<"$input")" in
      *Read*) ;;
      *) echo '{"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}}' ;;
    esac ;;
  SubagentStart)
    printf 'agent %s %s started\n' "$(jq -r .agent_id <<<"$input")" "$(jq -r .agent_type <<<"$input")" >>"$log"
    jq -n '{hookSpecificOutput: {hookEventName: "SubagentStart",
      additionalContext: "Report the files you changed in your final message."}}' ;;
  SubagentStop)
    # Send a subagent back once if its final message names no file; the
    # second time (stop_hook_active) let it go.
    printf 'agent %s stopped\n' "$(jq -r .agent_id <<<"$input")" >>"$log"
    if [ "$(jq -r .stop_hook_active <<<"$input")" = false ] &&
       ! jq -r '.last_assistant_message // ""' <<<"$input" | grep -q '[./]'; then
      echo '{"decision": "block", "reason": "Name the files you changed before you stop."}'
    fi ;;
  Stop)
    # Fired by the host's model loop (Engine::fire_hook), never by Baton.
    printf 'stop\n' >>"$log" ;;
esac
exit 0
