//! Claude Code's older tool names, in one table used everywhere a tool is
//! named: the model's calls (the pool), permission rules, hook matchers and
//! the `tools:` lists of agent definitions.
//!
//! Claude Code renamed tools over time and still honours the old names, so
//! files and models written against an older name keep working. A name is
//! mapped one hop, to today's tool. Where an old tool's job moved into a
//! broader one (`MultiEdit` into `Edit`, `LS` into `Glob`), a rule or hook
//! naming the old tool now covers the whole new one: for a deny rule or a
//! guard hook that is the safe direction.

/// Old name → today's name.
pub const TOOL_ALIASES: &[(&str, &str)] = &[
    ("Task", "Agent"),
    ("KillShell", "TaskStop"),
    ("KillBash", "TaskStop"),
    ("BashOutput", "TaskOutput"),
    ("MultiEdit", "Edit"),
    ("LS", "Glob"),
    ("ListMcpResources", "ListMcpResourcesTool"),
    ("ReadMcpResource", "ReadMcpResourceTool"),
    ("ReadMcpResourceDir", "ReadMcpResourceDirTool"),
    ("ListPeers", "ListAgents"),
];

/// Today's name for `name` (itself when it is not an old name).
pub fn canonical_tool_name(name: &str) -> &str {
    TOOL_ALIASES
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new)
}

/// Whether `a` and `b` name the same tool once old names are mapped.
pub fn same_tool(a: &str, b: &str) -> bool {
    a == b || canonical_tool_name(a) == canonical_tool_name(b)
}

/// The old names of `name` (empty for most tools).
pub fn old_names(name: &str) -> impl Iterator<Item = &'static str> + '_ {
    TOOL_ALIASES
        .iter()
        .filter(move |(_, new)| *new == name)
        .map(|(old, _)| *old)
}

/// Tools of other tool sets that do a Claude Code tool's job → the Claude
/// Code names users' hook matchers use for that job. A matcher `Bash`
/// selects every tool that runs a shell command, `Edit|Write` a patch: a
/// guard written for Claude Code must not be walked around by a model that
/// was given codex's tools. (How such a call is *shown* to hooks, and what
/// its command text is, the tool declares itself: `ToolKind`.)
pub const CLAUDE_CODE_EQUIVALENTS: &[(&str, &[&str])] = &[
    ("exec_command", &["Bash"]),
    ("shell", &["Bash"]),
    ("shell_command", &["Bash"]),
    ("apply_patch", &["Edit", "Write"]),
];

/// The Claude Code names of `name`'s job (empty for Claude Code's own
/// tools and tools without one).
pub fn claude_code_names(name: &str) -> &'static [&'static str] {
    CLAUDE_CODE_EQUIVALENTS
        .iter()
        .find(|(tool, _)| *tool == name)
        .map_or(&[], |(_, names)| names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_names_map_one_hop_and_others_stay() {
        assert_eq!(canonical_tool_name("Task"), "Agent");
        assert_eq!(canonical_tool_name("KillBash"), "TaskStop");
        assert_eq!(
            canonical_tool_name("ReadMcpResource"),
            "ReadMcpResourceTool"
        );
        assert_eq!(canonical_tool_name("Bash"), "Bash");
        assert!(same_tool("KillShell", "KillBash"));
        assert!(!same_tool("Edit", "Write"));
        let mut old: Vec<_> = old_names("TaskStop").collect();
        old.sort();
        assert_eq!(old, ["KillBash", "KillShell"]);
        // No target is itself an old name: a lookup never needs two hops.
        for (_, new) in TOOL_ALIASES {
            assert_eq!(canonical_tool_name(new), *new);
        }
    }

    #[test]
    fn other_sets_map_to_claude_codes_jobs() {
        assert_eq!(claude_code_names("exec_command"), ["Bash"]);
        assert_eq!(claude_code_names("apply_patch"), ["Edit", "Write"]);
        assert!(claude_code_names("Bash").is_empty());
    }
}
