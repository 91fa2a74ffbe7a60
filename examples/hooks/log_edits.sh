#!/bin/bash
# PostToolUse hook for file-writing tools: appends the edited path to
# .claude/edits.log under the project, so a human can review what changed.
# Exit 0 and no output: the hook never changes what the model sees.
set -euo pipefail
path=$(python3 -c 'import json, sys; print(json.load(sys.stdin).get("tool_input", {}).get("file_path", "?"))')
mkdir -p "$CLAUDE_PROJECT_DIR/.claude"
printf '%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$path" >> "$CLAUDE_PROJECT_DIR/.claude/edits.log"
