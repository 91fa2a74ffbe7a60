//! Wire formats: how calls arrive and results leave.
//!
//! Anthropic Messages is the primary format, OpenAI chat completions the
//! second. Parsing is lenient where the APIs evolve (unknown block types are
//! passed over) and strict where a mistake would lose a call (a `tool_use`
//! without an id is an error, not silently dropped).

pub mod anthropic;
pub mod openai;

/// The host's message could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not an assistant message: {0}")]
    NotAMessage(String),
    #[error("malformed tool call at index {index}: {reason}")]
    BadToolCall { index: usize, reason: String },
}

/// Which wire format to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WireFormat {
    #[default]
    Anthropic,
    OpenAi,
}

impl std::str::FromStr for WireFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "anthropic" => Ok(WireFormat::Anthropic),
            "openai" => Ok(WireFormat::OpenAi),
            other => Err(format!(
                "unknown format `{other}` (expected anthropic or openai)"
            )),
        }
    }
}
