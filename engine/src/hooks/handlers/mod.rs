//! Hook handlers from settings files, and the options every type shares.
//!
//! A [`Handler`] turns one input into an outcome (run a command, POST to a
//! URL, ask the host's model). [`Configured`] wraps it with what Claude Code
//! lets every handler say in settings: which event and tools (`matcher`),
//! which calls (`if:`), `once`, `async`, `timeout` and `onFailure`; so each
//! handler type implements only its transport.

mod async_output;
pub mod command;
pub mod host;
pub mod http;
pub mod mcp_tool;
pub mod slot;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::matching::{IfFilter, ToolNameMatcher};
use super::protocol::{OnFailure, Run};
use super::{Hook, HookEvent, HookInput, HookOutcome};
use crate::permission::PermissionRequest;

/// The failure text of a handler whose answer did not come in time.
pub(crate) fn no_answer(timeout: Duration) -> String {
    format!("got no answer within {}s", timeout.as_secs_f64())
}

/// Claude Code's default timeout of command hooks (its hooks reference:
/// "600 for command, 30 for prompt, 60 for agent"); settings files get the
/// default of each type from `config::default_timeout`.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// One transport: runs the hook for `input` within `timeout`, and says
/// through `run` (which knows the event, the label and `onFailure`) what
/// came of it.
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    /// How messages name this hook (a command's first line, a URL).
    fn label(&self) -> String;
    /// Runs the hook for `input`, giving up after `timeout`; `run` turns
    /// what came of it (a reply, a failure) into the outcome.
    async fn call(&self, input: &HookInput, timeout: Duration, run: Run) -> HookOutcome;
}

/// The options of one configured hook.
#[derive(Clone, Debug)]
pub struct HookOptions {
    /// The event the hook runs for.
    pub event: HookEvent,
    /// Which tool names (or other match fields) it runs for.
    pub matcher: ToolNameMatcher,
    /// `if:` filters (and a matcher written as a rule); all must match.
    pub filters: Vec<IfFilter>,
    /// How long the hook may run before it counts as failed.
    pub timeout: Duration,
    /// What a failed or timed-out run means for the call.
    pub on_failure: OnFailure,
    /// Runs in the background; its output is ignored.
    pub background: bool,
    /// Runs at most once per registry (session).
    pub once: bool,
}

impl HookOptions {
    /// Options for `event` and `matcher` with the defaults: no filters,
    /// [`DEFAULT_HOOK_TIMEOUT`], failures do not block, foreground, every time.
    pub fn new(event: HookEvent, matcher: ToolNameMatcher) -> Self {
        HookOptions {
            event,
            matcher,
            filters: Vec::new(),
            timeout: DEFAULT_HOOK_TIMEOUT,
            on_failure: OnFailure::Continue,
            background: false,
            once: false,
        }
    }
}

/// A handler with its options: what settings files produce.
pub struct Configured<H> {
    options: HookOptions,
    ran: AtomicBool,
    handler: Arc<H>,
}

impl<H: Handler> Configured<H> {
    /// `handler`, run with `options`.
    pub fn with_options(options: HookOptions, handler: H) -> Self {
        Configured {
            options,
            ran: AtomicBool::new(false),
            handler: Arc::new(handler),
        }
    }

    /// When and how the hook runs.
    pub fn options(&self) -> &HookOptions {
        &self.options
    }

    /// The transport that runs it.
    pub fn handler(&self) -> &H {
        &self.handler
    }

    /// The same hook with another time limit.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = timeout;
        self
    }

    /// How long the hook may run.
    pub fn timeout(&self) -> Duration {
        self.options.timeout
    }
}

impl<H: Handler + std::fmt::Debug> std::fmt::Debug for Configured<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Configured")
            .field("options", &self.options)
            .field("handler", &self.handler)
            .finish()
    }
}

#[async_trait]
impl<H: Handler> Hook for Configured<H> {
    fn matches(&self, event: HookEvent, query: &str) -> bool {
        event == self.options.event
            && (event.match_field().is_none() || self.options.matcher.matches(query))
    }

    fn wants(&self, request: &PermissionRequest<'_>) -> bool {
        self.options.filters.iter().all(|f| f.matches(request))
    }

    async fn run(&self, input: &HookInput) -> HookOutcome {
        if self.options.once && self.ran.swap(true, Ordering::SeqCst) {
            return HookOutcome::default();
        }
        let timeout = self.options.timeout;
        if self.options.background {
            // Claude Code ignores an async hook's answer for the call it
            // fired on; so does Baton. Its process still ends with its
            // timeout (the handler enforces that).
            let handler = self.handler.clone();
            let input = input.clone();
            let run = Run::new(input.hook_event_name, handler.label(), OnFailure::Continue);
            tokio::spawn(async move {
                let _ = handler.call(&input, timeout, run).await;
            });
            return HookOutcome::default();
        }
        let run = Run::new(
            input.hook_event_name,
            self.handler.label(),
            self.options.on_failure,
        );
        self.handler.call(input, timeout, run).await
    }
}
