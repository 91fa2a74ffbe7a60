//! `baton agent`: a complete, minimal host loop on the engine.
//!
//! It sends the conversation with the pool's tool definitions to a model
//! (Anthropic Messages, OpenAI Chat Completions or OpenAI Responses),
//! streams the answer through the format's stream parser, adds each tool
//! call to the turn's batch the moment the parser hands it over (so tools
//! run while the model is still streaming), sends the results back and
//! loops until the model ends its turn. It is the reference for hosts
//! written against the Rust API, and small on purpose:
//!
//! - [`conversation`]: the history in the provider's own shapes, and the
//!   request body;
//! - [`client`]: HTTP (reqwest), SSE (sse-stream), retries with backoff;
//! - [`agent`]: the loop, its stop reasons, interrupts, and what it reports;
//! - [`turn`]: where a turn's calls run (the engine's batch, or a batch
//!   nested under an Agent call) and which tools each request carries
//!   (deferred tools per SPEC §10);
//! - [`subagent`]: the loop as the `Agent` tool's runner (SPEC §15).

pub mod agent;
pub mod client;
pub mod conversation;
mod live;
pub mod loop_hooks;
pub mod notices;
pub mod subagent;
pub mod system_prompt;
mod tool_changes;
pub mod transcript;
pub mod turn;

use std::time::Duration;

use baton_engine::wire::WireFormat;

pub use agent::{run_agent, AgentEnd, AgentEvent};
pub use subagent::{LoopRunner, SubagentReporter};

/// Everything `baton agent` needs besides the engine.
#[derive(Clone)]
pub struct AgentOptions {
    /// The provider's API format (Anthropic, Chat Completions, Responses).
    pub format: WireFormat,
    /// The model asked for.
    pub model: String,
    /// The API root: `https://api.anthropic.com` for Anthropic (the path
    /// `/v1/messages` is added), `https://api.openai.com/v1` for OpenAI
    /// (`/chat/completions` or `/responses` is added).
    pub base_url: String,
    /// The API key; `None` sends no key (a local server, a proxy that adds it).
    pub api_key: Option<String>,
    /// The most requests (turns) the loop makes before it stops.
    pub max_turns: usize,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// The system prompt, if any.
    pub system: Option<String>,
    /// Attempts after the first for one request (429, 529, 5xx, broken
    /// connections and streams cut before any call was complete).
    pub max_retries: u32,
    /// The first retry waits about this long; each next one twice as long.
    pub retry_base: Duration,
    /// Most time between two events of a model stream (and before its
    /// headers) before the attempt counts as stalled.
    pub stream_idle: Duration,
    /// Most time one model stream may take in all.
    pub stream_total: Duration,
    /// Whose tool names the model sees (calls are translated back).
    pub tool_set: baton_engine::wire::ToolSet,
    /// Anthropic: tools ToolSearch loads (and MCP list changes) reach the
    /// model as `tool_addition`/`tool_removal` blocks under the
    /// mid-conversation tool changes beta, not as a rewritten `tools`;
    /// back to rewriting when the provider refuses the beta.
    pub tool_changes: bool,
}

// Not derived: the API key stays out of logs and panic messages.
baton_engine::debug_fields! {
    AgentOptions as this {
        format, model, base_url, api_key: this.api_key.as_ref().map(|_| "***"), max_turns,
        max_tokens, max_retries, tool_set, tool_changes, ..
    }
}

impl AgentOptions {
    /// Defaults for `format`, with the key from the environment.
    pub fn new(format: WireFormat) -> Self {
        let (model, base_url, key_var) = match format {
            WireFormat::Anthropic => (
                "claude-sonnet-4-5",
                "https://api.anthropic.com",
                "ANTHROPIC_API_KEY",
            ),
            WireFormat::OpenAiChat => ("gpt-5", "https://api.openai.com/v1", "OPENAI_API_KEY"),
            _ => ("gpt-5", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        };
        AgentOptions {
            format,
            model: model.into(),
            base_url: base_url.into(),
            api_key: std::env::var(key_var).ok().filter(|k| !k.is_empty()),
            max_turns: 50,
            max_tokens: 8192,
            system: None,
            max_retries: 4,
            retry_base: Duration::from_millis(500),
            tool_set: Default::default(),
            tool_changes: false,
            stream_idle: Duration::from_secs(120),
            stream_total: Duration::from_secs(30 * 60),
        }
    }
}
