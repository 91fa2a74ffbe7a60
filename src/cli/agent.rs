//! `baton agent`: the reference host loop against a real (or mock) model.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use baton::engine::nesting::NestedEvent;
use baton::engine::wire::WireFormat;
use baton::host::{run_agent, AgentEnd, AgentEvent, AgentOptions, LoopRunner, SubagentReporter};
use baton::jsonl::{write_event, write_value};
use baton::jsonl_direct::write_result_line;
use baton::Event;
use clap::Args;
use serde_json::json;

use super::{CliError, Setup};

#[derive(Args, Debug, Clone)]
pub(super) struct AgentArgs {
    /// anthropic, openai-chat or openai-responses.
    #[arg(long, default_value = "anthropic", value_parser = super::parse_format)]
    provider: WireFormat,
    /// The model name (default: a current model of the provider).
    #[arg(long)]
    model: Option<String>,
    /// The API root (default: the provider's; for OpenAI it ends in /v1).
    #[arg(long)]
    base_url: Option<String>,
    /// Most requests to make before stopping.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    max_turns: u64,
    /// The output token limit per request.
    #[arg(long, default_value_t = 8192)]
    max_tokens: u32,
    /// A system prompt, replacing the default one (kept for scripts; see
    /// --system-prompt).
    #[arg(long, conflicts_with = "system_prompt")]
    system: Option<String>,
    /// A file whose text replaces the default system prompt (working
    /// directory, platform, date, how to use the tools).
    #[arg(long)]
    system_prompt: Option<std::path::PathBuf>,
    /// Text added after the system prompt (the default or --system-prompt's).
    #[arg(long)]
    append_system_prompt: Option<String>,
    /// Retries of one request (429, 529, 5xx, broken streams).
    #[arg(long, default_value_t = 4)]
    max_retries: u32,
    /// Seconds without any data from a model stream before the attempt
    /// counts as stalled (and is retried).
    #[arg(long, default_value_t = 120.0, value_parser = parse_secs)]
    stream_idle_timeout: f64,
    /// Seconds one model stream may take in all.
    #[arg(long, default_value_t = 1800.0, value_parser = parse_secs)]
    stream_timeout: f64,
    /// Anthropic: send tools that ToolSearch loads (and MCP tool list
    /// changes) as mid-conversation `tool_addition`/`tool_removal` blocks
    /// (beta mid-conversation-tool-changes-2026-07-01) instead of a
    /// rewritten `tools`; falls back when the provider refuses the beta.
    #[arg(long)]
    tool_changes: bool,
    /// Print JSON lines (turn, text, call, progress, result, assistant,
    /// retry, end) instead of the conversation.
    #[arg(long)]
    events: bool,
    /// What to ask the model.
    prompt: String,
}

impl AgentArgs {
    /// The format ToolSearch renders definitions in: the provider's.
    pub(super) fn tool_format(&self) -> WireFormat {
        self.provider
    }

    fn options(&self) -> AgentOptions {
        let mut o = AgentOptions::new(self.provider);
        if let Some(m) = &self.model {
            o.model = m.clone();
        }
        if let Some(b) = &self.base_url {
            o.base_url = b.clone();
        }
        o.max_turns = usize::try_from(self.max_turns).unwrap_or(usize::MAX);
        o.max_tokens = self.max_tokens;
        o.system = self.system.clone();
        o.tool_changes = self.tool_changes;
        o.max_retries = self.max_retries;
        o.stream_idle = Duration::from_secs_f64(self.stream_idle_timeout);
        o.stream_total = Duration::from_secs_f64(self.stream_timeout);
        // For tests and impatient users: the first retry's wait.
        if let Some(ms) = std::env::var("BATON_RETRY_BASE_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            o.retry_base = Duration::from_millis(ms);
        }
        o
    }
}

pub(super) async fn agent(mut setup: Setup, args: AgentArgs) -> Result<(), CliError> {
    let mut options = args.options();
    options.tool_set = setup.tool_set;
    let base = match (&args.system_prompt, &args.system) {
        (Some(file), _) => std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("--system-prompt {}: {e}", file.display())))?,
        (None, Some(text)) => text.clone(),
        (None, None) => baton::host::system_prompt::default_prompt(&setup.cwd, setup.tool_set),
    };
    options.system = Some(baton::host::system_prompt::compose(
        base,
        args.append_system_prompt.as_deref(),
    ));
    if options.api_key.is_none() && args.base_url.is_none() {
        let var = match options.format {
            WireFormat::Anthropic => "ANTHROPIC_API_KEY",
            _ => "OPENAI_API_KEY",
        };
        return Err(CliError::Usage(format!(
            "no API key: set {var} (or point --base-url at a server that needs none)"
        )));
    }
    let events = args.events;
    // Subagents (the Agent tool) run the same loop, nested under their call.
    let runner = LoopRunner::new(options.clone(), subagent_reporter(events));
    setup.builder = setup.builder.take().map(|b| b.subagents(Arc::new(runner)));
    if !setup.transcript_given {
        // Hooks read the transcript (the last answer, the tools used).
        let path = setup.state_dir.join("transcript.jsonl");
        setup.builder = setup.builder.take().map(|b| b.transcript_path(path));
    }
    let engine = setup.engine()?;
    if options.tool_changes && options.format == WireFormat::Anthropic {
        baton::tool_changes::use_tool_changes(engine.runtime().session());
    }
    let stop = super::signals::stop_requested();
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let end = run_agent(
        &engine,
        &setup.pool,
        &options,
        &args.prompt,
        stop,
        |event| {
            if events {
                write_event_line(&mut out, &event, None);
            } else {
                print_event(&event, &mut out, &mut err);
            }
        },
    )
    .await;
    engine.shutdown();
    let reason = match &end {
        AgentEnd::Done { stop_reason } => json!({"reason": "done", "stop_reason": stop_reason}),
        AgentEnd::Refused => json!({"reason": "refused"}),
        AgentEnd::MaxTokens => json!({"reason": "max_tokens"}),
        AgentEnd::MaxTurns => json!({"reason": "max_turns"}),
        AgentEnd::Interrupted => json!({"reason": "interrupted"}),
        AgentEnd::Blocked(e) => json!({"reason": "blocked", "error": e}),
        AgentEnd::Failed(e) => json!({"reason": "failed", "error": e}),
        AgentEnd::Stalled(e) => json!({"reason": "stalled", "error": e}),
    };
    if events {
        let mut line = json!({"type": "end"});
        if let (Some(l), Some(r)) = (line.as_object_mut(), reason.as_object()) {
            l.extend(r.clone());
        }
        let _ = writeln!(out, "{line}");
    } else {
        let _ = writeln!(out);
        let _ = writeln!(
            err,
            "baton agent: {}",
            reason["reason"].as_str().unwrap_or("")
        );
    }
    match end {
        AgentEnd::Failed(e) => Err(CliError::Failed(e)),
        AgentEnd::Blocked(e) => Err(CliError::Failed(format!("the prompt was blocked: {e}"))),
        AgentEnd::Stalled(e) => Err(CliError::Stalled(e)),
        AgentEnd::Interrupted => Err(CliError::Failed("interrupted".into())),
        _ => Ok(()),
    }
}

/// Subagents' events: JSON lines carrying `agent_id`, or the calls and
/// results (not the text) prefixed with the agent's id.
fn subagent_reporter(events: bool) -> SubagentReporter {
    Arc::new(move |agent_id: &str, event: AgentEvent<'_>| {
        let mut out = std::io::stdout().lock();
        if events {
            write_event_line(&mut out, &event, Some(agent_id));
            return;
        }
        match event {
            AgentEvent::Text(_) => {}
            AgentEvent::Call(c) => {
                let _ = writeln!(out, "[{agent_id}] → {} {}", c.name, c.input);
            }
            AgentEvent::Nested(NestedEvent::Result(result)) => {
                let short: String = result.text().chars().take(200).collect();
                let mark = if result.is_error { "✗" } else { "←" };
                let _ = writeln!(out, "[{agent_id}] {mark} {short}");
            }
            other => print_event(&other, &mut out, &mut std::io::stderr()),
        }
    })
}

/// Writes the `--events` line of `event`, with `agent_id` for a
/// subagent's, whole and flushed; nothing for a permission request (the
/// agent answers those itself).
fn write_event_line(out: &mut impl Write, event: &AgentEvent<'_>, agent_id: Option<&str>) {
    let id = agent_id.map(|id| json!(id));
    let tags: &[(&str, &serde_json::Value)] = match &id {
        Some(id) => &[("agent_id", id)],
        None => &[],
    };
    let mut line = Vec::with_capacity(256);
    // A call's lines are written straight from the event; the loop's own
    // events are trees.
    enum Line {
        Written(std::io::Result<()>),
        Tree(serde_json::Value),
    }
    let made = match event {
        AgentEvent::Batch(Event::PermissionRequest(_)) => return,
        AgentEvent::Batch(e) => Line::Written(write_event(&mut line, e, None, tags)),
        // A nested result has no index in the agent's own batch.
        AgentEvent::Nested(NestedEvent::Result(result)) => {
            Line::Written(write_result_line(&mut line, None, result, tags))
        }
        AgentEvent::Turn(n) => Line::Tree(json!({"type": "turn", "turn": n})),
        AgentEvent::Text(t) => Line::Tree(json!({"type": "text", "text": t})),
        AgentEvent::Call(c) => Line::Tree(json!({
            "type": "call", "id": c.id, "name": c.name, "input": c.input
        })),
        AgentEvent::Nested(NestedEvent::Progress { call_id, progress }) => Line::Tree(json!({
            "type": "progress",
            "tool_use_id": call_id,
            "message": progress.message,
            "data": progress.data,
        })),
        // A nested event kind added later: no line of its own.
        AgentEvent::Nested(_) => return,
        AgentEvent::Retry {
            attempt,
            reason,
            wait,
        } => Line::Tree(json!({
            "type": "retry", "attempt": attempt, "reason": reason, "wait_ms": wait.as_millis()
        })),
        AgentEvent::Assistant(m) => Line::Tree(json!({"type": "assistant", "message": m})),
        AgentEvent::Diagnostic(d) => Line::Tree(json!({"type": "diagnostic", "message": d})),
    };
    let written = match made {
        Line::Tree(value) => write_value(&mut line, value, tags),
        Line::Written(written) => written,
    };
    if written.is_ok() {
        line.push(b'\n');
        let _ = out.write_all(&line);
        let _ = out.flush();
    }
}

fn print_event(event: &AgentEvent<'_>, out: &mut impl Write, err: &mut impl Write) {
    match event {
        AgentEvent::Text(t) => {
            let _ = write!(out, "{t}");
            let _ = out.flush();
        }
        AgentEvent::Call(c) => {
            let _ = writeln!(out, "\n→ {} {}", c.name, c.input);
        }
        AgentEvent::Batch(Event::Result { result, .. }) => {
            let text = result.text();
            let short: String = text.chars().take(400).collect();
            let mark = if result.is_error { "✗" } else { "←" };
            let _ = writeln!(out, "{mark} {short}");
        }
        AgentEvent::Retry {
            attempt,
            reason,
            wait,
        } => {
            let _ = writeln!(err, "baton agent: retry {attempt} in {wait:?}: {reason}");
        }
        AgentEvent::Diagnostic(d) => {
            let _ = writeln!(err, "baton agent: {d}");
        }
        _ => {}
    }
}

/// A positive number of seconds, at most a day.
fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a number of seconds between 0 and 86400"
        )),
    }
}
