//! When tool search is on: the `ENABLE_TOOL_SEARCH` modes (SPEC §10) and the
//! host's facts that decide them.
//!
//! `auto:N` weighs the definitions that deferral would hold back against the
//! model's context window. Baton has no tokenizer, so it estimates: one token
//! per four bytes of the compact JSON definition (Anthropic format), rounded
//! up. JSON schemas are dense in punctuation and short words, for which the
//! Claude and GPT tokenizers give roughly 3.5–4.5 bytes per token; the
//! estimate only has to place the pool on the right side of a threshold
//! that is itself a rule of thumb.

use std::fmt;
use std::str::FromStr;

use baton_tool::pool::ToolPool;
use baton_tool::tool::Tool;
use baton_wire::WireFormat;

/// Default share of the context window that `auto` allows definitions.
pub const DEFAULT_AUTO_PERCENT: u8 = 10;
/// Context window assumed when the host does not give one.
pub const DEFAULT_CONTEXT_WINDOW_TOKENS: u64 = 200_000;
/// Bytes of JSON per estimated token.
pub const BYTES_PER_TOKEN: usize = 4;

/// `ENABLE_TOOL_SEARCH`: whether deferred tools are held back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolSearchMode {
    /// Unset or `true`: deferred tools are always offered by name only.
    #[default]
    Always,
    /// `auto` / `auto:N`: only when their definitions would take more than
    /// N % of the context window.
    Auto {
        /// The share of the context window, from 0 to 100.
        percent: u8,
    },
    /// `false`: every tool is sent in full; ToolSearch is not offered.
    Off,
}

/// A tool search mode that cannot be read (from `--tool-search` or
/// `ENABLE_TOOL_SEARCH`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}unknown tool search mode `{value}` (expected true, false, auto or auto:N with N from 0 to 100)", .variable.map(|v| format!("{v}: ")).unwrap_or_default())]
pub struct ToolSearchModeError {
    /// The text as given.
    value: String,
    /// The environment variable it came from, if any.
    variable: Option<&'static str>,
}

impl FromStr for ToolSearchMode {
    type Err = ToolSearchModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s.to_ascii_lowercase().as_str() {
            "" | "true" | "1" | "always" | "on" => return Ok(ToolSearchMode::Always),
            "false" | "0" | "off" => return Ok(ToolSearchMode::Off),
            "auto" => {
                return Ok(ToolSearchMode::Auto {
                    percent: DEFAULT_AUTO_PERCENT,
                })
            }
            _ => {}
        }
        let bad = || ToolSearchModeError {
            value: s.to_string(),
            variable: None,
        };
        let n = s
            .get(..5)
            .filter(|p| p.eq_ignore_ascii_case("auto:"))
            .and_then(|_| s.get(5..))
            .ok_or_else(bad)?;
        match n.trim().parse::<u8>() {
            Ok(percent) if percent <= 100 => Ok(ToolSearchMode::Auto { percent }),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for ToolSearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSearchMode::Always => f.write_str("true"),
            ToolSearchMode::Auto { percent } => write!(f, "auto:{percent}"),
            ToolSearchMode::Off => f.write_str("false"),
        }
    }
}

/// What the host tells Baton about tool search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSearchSettings {
    /// When deferred tools are held back.
    pub mode: ToolSearchMode,
    /// The model's context window, in tokens (for `auto`).
    pub context_window_tokens: u64,
    /// The wire format the host sends requests in; ToolSearch renders
    /// definitions in it.
    pub format: WireFormat,
    /// Whether the host's API accepts `defer_loading` and `tool_reference`
    /// (Anthropic's first-party API does; proxies and other providers may
    /// not). Only meaningful for [`WireFormat::Anthropic`].
    pub tool_references: bool,
}

impl Default for ToolSearchSettings {
    fn default() -> Self {
        ToolSearchSettings {
            mode: ToolSearchMode::Always,
            context_window_tokens: DEFAULT_CONTEXT_WINDOW_TOKENS,
            format: WireFormat::Anthropic,
            tool_references: true,
        }
    }
}

impl ToolSearchSettings {
    /// Defaults, with the mode from `ENABLE_TOOL_SEARCH` when set.
    pub fn from_env() -> Result<Self, ToolSearchModeError> {
        let mut settings = ToolSearchSettings::default();
        if let Ok(value) = std::env::var("ENABLE_TOOL_SEARCH") {
            settings.mode =
                value
                    .parse()
                    .map_err(|e: ToolSearchModeError| ToolSearchModeError {
                        variable: Some("ENABLE_TOOL_SEARCH"),
                        ..e
                    })?;
        }
        Ok(settings)
    }

    /// Sets [`Self::mode`].
    pub fn mode(mut self, mode: ToolSearchMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets [`Self::context_window_tokens`].
    pub fn context_window_tokens(mut self, tokens: u64) -> Self {
        self.context_window_tokens = tokens;
        self
    }

    /// Sets [`Self::format`].
    pub fn format(mut self, format: WireFormat) -> Self {
        self.format = format;
        self
    }

    /// Sets [`Self::tool_references`].
    pub fn tool_references(mut self, yes: bool) -> Self {
        self.tool_references = yes;
        self
    }

    /// Whether this session uses `defer_loading` + `tool_reference`.
    pub fn uses_references(&self) -> bool {
        self.format == WireFormat::Anthropic && self.tool_references
    }
}

/// The settings resolved against the session's pool: whether deferral is on.
/// Stored in the session's slots; every part of Baton reads it from there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deferral {
    /// What the host asked for.
    pub settings: ToolSearchSettings,
    /// Deferred tools are held back in this session.
    pub active: bool,
    /// Estimated tokens of the definitions deferral would hold back.
    pub deferrable_tokens: u64,
}

impl Default for Deferral {
    /// SPEC §10's default: always on.
    fn default() -> Self {
        Deferral {
            settings: ToolSearchSettings::default(),
            active: true,
            deferrable_tokens: 0,
        }
    }
}

impl Deferral {
    /// Decides whether `pool`'s deferrable tools are held back.
    pub fn resolve(settings: ToolSearchSettings, pool: &ToolPool) -> Deferral {
        let deferrable_tokens: u64 = pool
            .tools()
            .filter(|t| t.def().is_deferred())
            .map(|t| estimate_tokens(t))
            .sum();
        let active = match settings.mode {
            ToolSearchMode::Always => true,
            ToolSearchMode::Off => false,
            ToolSearchMode::Auto { percent } => {
                // Compare in hundredths to stay exact: tokens * 100 > window * N.
                u128::from(deferrable_tokens) * 100
                    > u128::from(settings.context_window_tokens) * u128::from(percent)
            }
        };
        Deferral {
            settings,
            active,
            deferrable_tokens,
        }
    }
}

/// Estimated tokens of a tool's full definition (see the module docs).
pub fn estimate_tokens(tool: &Tool) -> u64 {
    let bytes = baton_wire::definition(tool, WireFormat::Anthropic)
        .to_string()
        .len();
    bytes.div_ceil(BYTES_PER_TOKEN) as u64
}
