//! Which names an agent definition's `tools:` and `disallowedTools:` may
//! use, so that a name Baton cannot honour is reported instead of being
//! dropped silently.
//!
//! A name is fine when it is a tool Baton offers, an old name of one (the
//! engine's alias table), or an MCP tool (`mcp__…`, known only once the
//! servers are up). A name Claude Code has but Baton does not, and a name
//! neither knows (a typo), each get a warning naming the file.

use baton_engine::aliases::canonical_tool_name;

/// Built-in tools Baton offers (the registry test keeps this list true),
/// plus the MCP tools the host adds when servers are configured (resources,
/// `RefreshMcpTools`, `WaitForMcpServers`).
pub(crate) const BATON_TOOLS: &[&str] = &[
    "Agent",
    "AskUserQuestion",
    "Bash",
    "Edit",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "ListAgents",
    "ListMcpResourcesTool",
    "Monitor",
    "NotebookEdit",
    "Read",
    "ReadMcpResourceDirTool",
    "ReadMcpResourceTool",
    "RefreshMcpTools",
    "SendMessage",
    "Skill",
    "Sleep",
    "TaskOutput",
    "TaskStop",
    "TodoWrite",
    "ToolSearch",
    "WaitForMcpServers",
    "WebFetch",
    "Write",
    // codex's interactive-session tools, under codex's names.
    "exec_command",
    "write_stdin",
];

/// Claude Code's `BUILTIN_TOOL_NAMES` (`@anthropic-ai/claude-agent-sdk`
/// 0.3.332, `sdk.d.ts`).
pub(crate) const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Agent",
    "Artifact",
    "AskUserQuestion",
    "Bash",
    "ClaudeDesign",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EndConversation",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "ListAgents",
    "ListMcpResourcesTool",
    "LSP",
    "Monitor",
    "NotebookEdit",
    "OfferChromeSetup",
    "PowerShell",
    "Projects",
    "propose_skills",
    "PushNotification",
    "Read",
    "ReadMcpResourceDirTool",
    "ReadMcpResourceTool",
    "ReadNotifications",
    "RemoteTrigger",
    "ReportFindings",
    "ScheduleWakeup",
    "SendFeedback",
    "SendMessage",
    "SendUserFile",
    "SendUserMessage",
    "SetGoal",
    "ShareOnboardingGuide",
    "ShowOnboardingRolePicker",
    "Skill",
    "SubagentHandback",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskStop",
    "TaskUpdate",
    "TodoWrite",
    "ToolSearch",
    "WaitForMcpServers",
    "WebFetch",
    "WebSearch",
    "Workflow",
    "Write",
];

/// A warning for each entry of `names` (a `tools:`-style list, entries may
/// carry a rule such as `Bash(git:*)`) that Baton cannot honour; `key` and
/// `label` (the file) name where it was written.
pub(crate) fn check(names: &[String], key: &str, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in names {
        let tool = entry.split('(').next().unwrap_or(entry).trim();
        if tool == "*" || tool.starts_with("mcp__") {
            continue;
        }
        let today = canonical_tool_name(tool);
        if BATON_TOOLS.contains(&today) {
            continue;
        }
        let why = if CLAUDE_CODE_TOOLS.contains(&today) {
            "a Claude Code tool that Baton does not offer"
        } else {
            "not a tool Baton or Claude Code knows (a typo?)"
        };
        out.push(format!(
            "{label}: `{key}` names `{tool}`, {why}; it is ignored"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_old_and_mcp_names_pass_and_others_are_named() {
        let names: Vec<String> = [
            "Read",
            "Bash(git log:*)",
            "Task",
            "KillShell",
            "mcp__github__search",
            "WebSearch",
            "Raed",
            "*",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let warnings = check(&names, "tools", "/p/.claude/agents/x.md");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("`WebSearch`, a Claude Code tool that Baton does not offer"));
        assert!(warnings[1].contains("`Raed`, not a tool"));
        assert!(warnings[1].starts_with("/p/.claude/agents/x.md: `tools`"));
    }

    #[test]
    fn every_builtin_is_listed() {
        for tool in crate::BuiltinConfig::default().tools().unwrap() {
            assert!(
                BATON_TOOLS.contains(&tool.name()),
                "{} missing",
                tool.name()
            );
        }
    }
}
