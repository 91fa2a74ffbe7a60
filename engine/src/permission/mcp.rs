//! Which tool a rule names.
//!
//! Most rules name one tool exactly. MCP tools are named
//! `mcp__<server>__<tool>`, and users want to trust or block a whole server
//! at once, so `mcp__server` and `mcp__server__*` name every tool of that
//! server. Wildcards are accepted nowhere else in a tool name: a typo such
//! as `Bas*` must be an error, not a rule that quietly covers several tools.

/// The tool part of a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ToolMatcher {
    /// One tool, by its exact name.
    Exact(String),
    /// Every tool of an MCP server.
    McpServer(String),
}

impl ToolMatcher {
    pub(crate) fn parse(name: &str) -> Result<ToolMatcher, String> {
        if name.is_empty() {
            return Err("the rule names no tool".into());
        }
        if let Some(rest) = name.strip_prefix("mcp__") {
            return parse_mcp(name, rest);
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(if bad == '*' {
                format!("`{name}`: wildcards in tool names are only allowed as `mcp__<server>__*`")
            } else {
                format!("`{name}` is not a tool name (unexpected character `{bad}`)")
            });
        }
        Ok(ToolMatcher::Exact(name.to_string()))
    }

    pub(crate) fn matches(&self, tool_name: &str) -> bool {
        match self {
            ToolMatcher::Exact(name) => baton_tool::aliases::same_tool(name, tool_name),
            ToolMatcher::McpServer(server) => tool_name
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(server.as_str()))
                .is_some_and(|rest| rest.starts_with("__") && rest.len() > 2),
        }
    }

    /// The name to show when this rule names exactly one tool.
    pub(crate) fn exact(&self) -> Option<&str> {
        match self {
            ToolMatcher::Exact(name) => Some(name),
            ToolMatcher::McpServer(_) => None,
        }
    }

    pub(crate) fn is_mcp(&self) -> bool {
        match self {
            ToolMatcher::Exact(name) => name.starts_with("mcp__"),
            ToolMatcher::McpServer(_) => true,
        }
    }
}

fn parse_mcp(name: &str, rest: &str) -> Result<ToolMatcher, String> {
    let valid = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    };
    let (server, tool) = match rest.split_once("__") {
        Some((server, tool)) => (server, Some(tool)),
        None => (rest, None),
    };
    if !valid(server) {
        return Err(format!(
            "`{name}`: expected `mcp__<server>`, `mcp__<server>__<tool>` or `mcp__<server>__*`"
        ));
    }
    match tool {
        None | Some("*") => Ok(ToolMatcher::McpServer(server.to_string())),
        Some(tool) if valid(tool) => Ok(ToolMatcher::Exact(name.to_string())),
        Some(_) => Err(format!(
            "`{name}`: the tool part must be a tool name or `*` (partial wildcards are not supported)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_rules_cover_only_that_server() {
        let server = ToolMatcher::parse("mcp__github").unwrap();
        assert!(server.matches("mcp__github__create_issue"));
        assert!(!server.matches("mcp__github2__create_issue"));
        assert!(!server.matches("mcp__github"));
        assert_eq!(server, ToolMatcher::parse("mcp__github__*").unwrap());
        let one = ToolMatcher::parse("mcp__github__create_issue").unwrap();
        assert!(one.matches("mcp__github__create_issue"));
        assert!(!one.matches("mcp__github__delete_repo"));
    }

    #[test]
    fn stray_wildcards_are_errors() {
        assert!(ToolMatcher::parse("Bas*").is_err());
        assert!(ToolMatcher::parse("mcp__github__create_*").is_err());
        assert!(ToolMatcher::parse("mcp__").is_err());
        assert!(ToolMatcher::parse("Bash ").is_err());
    }
}
