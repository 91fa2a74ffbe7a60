//! Whether a bearer token can protect a worker.
//!
//! A worker runs any command its clients send, so its token is the only
//! thing between the network and a shell. Deployments copied from examples
//! keep their placeholder (`replace-me-with-a-long-random-value`), and
//! hand-made tokens are often short words; either is guessable. The server
//! therefore refuses, before it listens:
//!
//! - a known placeholder, on any address (it always means the secret was
//!   never set, whatever the network);
//! - a token shorter than [`MIN_LEN`] characters on an address beyond
//!   loopback, where anyone on the network may try it. (On 127.0.0.1 only
//!   local processes can connect, and the token is optional there.)

/// The shortest token accepted beyond loopback: 32 characters, e.g.
/// `openssl rand -hex 16` (128 bits) or longer.
pub const MIN_LEN: usize = 32;

/// Parts of the placeholders found in examples and manifests, lowercase.
const PLACEHOLDERS: &[&str] = &[
    "replace-me",
    "replace_me",
    "replaceme",
    "change-me",
    "change_me",
    "changeme",
    "placeholder",
    "your-token",
    "your_token",
    "example",
    "<token>",
];

/// Why `token` is too weak for a server reachable as `beyond_loopback`
/// says, or `None` when it will do.
pub fn weakness(token: &str, beyond_loopback: bool) -> Option<String> {
    let token = token.trim();
    let lower = token.to_ascii_lowercase();
    if let Some(word) = PLACEHOLDERS.iter().find(|p| lower.contains(*p)) {
        return Some(format!(
            "the token is a placeholder (it contains `{word}`): generate a secret, e.g. \
             `openssl rand -hex 32`, and give it with --token-file or BATON_MCP_TOKEN"
        ));
    }
    let mut chars = token.chars();
    let first = chars.next();
    if token.chars().count() > 1 && chars.all(|c| Some(c) == first) {
        return Some("the token repeats one character: generate a random secret".into());
    }
    let len = token.chars().count();
    if beyond_loopback && len < MIN_LEN {
        return Some(format!(
            "the token has {len} characters; beyond loopback at least {MIN_LEN} are required \
             (e.g. `openssl rand -hex 32`)"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_refused_everywhere() {
        for t in [
            "replace-me-with-a-long-random-value",
            "CHANGEME-0123456789abcdef0123456789abcdef",
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        ] {
            assert!(weakness(t, false).is_some(), "{t}");
            assert!(weakness(t, true).is_some(), "{t}");
        }
    }

    #[test]
    fn short_tokens_are_refused_beyond_loopback_only() {
        let short = "s3cret-but-short";
        assert!(weakness(short, true).unwrap().contains("16 characters"));
        assert_eq!(weakness(short, false), None);
        let long = "0f9c2b1e7d4a6c3b8e5f0a1d2c3b4a5e";
        assert_eq!(long.len(), MIN_LEN);
        assert_eq!(weakness(long, true), None);
        assert!(weakness(&long[1..], true).is_some());
    }
}
