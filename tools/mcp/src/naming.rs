//! Tool names as the model sees them: `mcp__<server>__<tool>`.
//!
//! Model APIs accept tool names of `[A-Za-z0-9_-]{1,128}`; anything else in
//! a server or tool name becomes `_`, and a name that is still too long is
//! dropped (with a diagnostic) rather than cut, since a cut name could
//! collide with another tool's.

/// Longest tool name the model APIs accept.
pub const MAX_TOOL_NAME: usize = 128;

/// `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The pool name of `tool` on `server`, or `None` when it is too long.
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    (name.len() <= MAX_TOOL_NAME).then_some(name)
}

/// The permission-rule prefix of every tool of `server`.
pub fn server_prefix(server: &str) -> String {
    format!("mcp__{}__", sanitize(server))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_server_and_tool() {
        assert_eq!(
            tool_name("my.server", "get-sum").unwrap(),
            "mcp__my_server__get-sum"
        );
        assert_eq!(tool_name("a b/c", "x.y").unwrap(), "mcp__a_b_c__x_y");
        assert_eq!(tool_name("ü", "t").unwrap(), "mcp_____t");
    }

    #[test]
    fn drops_names_over_128() {
        let tool = "t".repeat(MAX_TOOL_NAME - "mcp__s__".len());
        assert_eq!(tool_name("s", &tool).unwrap().len(), MAX_TOOL_NAME);
        assert!(tool_name("s", &format!("{tool}x")).is_none());
    }
}
