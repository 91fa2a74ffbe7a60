//! What a case of tests/fault_injection_sources.rs is (its calls, the fault
//! each carries, the fault from outside and how the batch ends) and which
//! results are right for it: the normal result for a call no fault
//! touched, an error for a faulted MCP call, and what an interrupt or a
//! failing sibling may turn a result into.

use baton::engine::HookEvent;
use baton::{CallResult, Outcome};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpKind {
    Echo,
    Slow,
    /// An error result: the tool's, not a fault.
    Fail,
    Hang,
    /// One answer over the 16 MiB limit.
    Big,
    /// Half a message (a malformed frame).
    Cut,
    /// The server exits in the middle of the call.
    Crash,
}

impl McpKind {
    pub fn tool(self) -> &'static str {
        match self {
            McpKind::Echo => "echo",
            McpKind::Slow => "slow",
            McpKind::Fail => "fail",
            McpKind::Hang => "hang",
            McpKind::Big => "big",
            McpKind::Cut => "cut",
            McpKind::Crash => "crash",
        }
    }

    /// Whether the call itself is a fault of the server.
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            McpKind::Hang | McpKind::Big | McpKind::Cut | McpKind::Crash
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `echo` in local Bash.
    Bash,
    /// `exit 3` in local Bash (a tool error; cancels its siblings).
    BashFail,
    /// Bash on the worker: 0.4 s, or (`long`) 3 s (300 s when the host
    /// interrupts), for cases that end it.
    Worker {
        long: bool,
    },
    Mcp(McpKind),
    /// Glob, which the settings ask about; the host allows it.
    Ask,
    /// `touch` in Bash, which a deny rule covers.
    Denied,
}

impl Kind {
    /// The events whose hooks this call runs (PostToolBatch: its batch's).
    pub fn hook_events(self) -> &'static [HookEvent] {
        use HookEvent::*;
        // The event only this kind runs comes twice: it is picked more.
        match self {
            Kind::Bash | Kind::Worker { .. } | Kind::Mcp(McpKind::Echo | McpKind::Slow) => {
                &[PreToolUse, PostToolUse, PostToolBatch]
            }
            Kind::BashFail | Kind::Mcp(_) => &[
                PostToolUseFailure,
                PostToolUseFailure,
                PreToolUse,
                PostToolBatch,
            ],
            Kind::Ask => &[
                PermissionRequest,
                PermissionRequest,
                PreToolUse,
                PostToolUse,
            ],
            Kind::Denied => &[
                PermissionDenied,
                PermissionDenied,
                PreToolUse,
                PostToolBatch,
            ],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookFault {
    /// Sleeps (with a background child) past the hook timeout.
    Hang,
    /// Exit 2.
    Block,
    /// Killed by SIGKILL.
    Crash,
    /// Non-JSON bytes on stdout, exit 0.
    Garbage,
    /// 0.3 s, then a normal exit.
    Slow,
}

impl HookFault {
    /// The word the hook script looks for.
    pub fn word(self) -> &'static str {
        match self {
            HookFault::Hang => "hang",
            HookFault::Block => "block",
            HookFault::Crash => "crash",
            HookFault::Garbage => "garbage",
            HookFault::Slow => "slow",
        }
    }
}

/// A fault from outside the calls, `ms` after the batch starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    None,
    /// SIGKILL to the MCP server.
    McpKill(u64),
    /// SIGKILL to the worker the session starts on.
    WorkerKill(u64),
    /// SIGSTOP to it (SIGCONT once the batch is over).
    WorkerPause(u64),
    /// SIGSTOP to it, SIGCONT a second later: a hiccup shorter than the
    /// health check's patience, which must not fail any call.
    WorkerStall(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Natural,
    Interrupt(u64),
    Shutdown(u64),
}

#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub kind: Kind,
    /// A hook of this event misbehaves this way for this call.
    pub hook: Option<(HookEvent, HookFault)>,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub calls: Vec<Call>,
    pub source: Source,
    pub end: End,
}

impl Case {
    /// A case; a long worker call needs something to end it, so without a
    /// worker fault or an ending from the host it becomes a short one.
    pub fn new(mut calls: Vec<Call>, source: Source, end: End) -> Case {
        let ended = matches!(source, Source::WorkerKill(_) | Source::WorkerPause(_))
            || !matches!(end, End::Natural);
        // (A stall ends nothing.)
        if !ended {
            for c in &mut calls {
                if let Kind::Worker { long } = &mut c.kind {
                    *long = false;
                }
            }
        }
        Case { calls, source, end }
    }

    pub fn interrupted(&self) -> bool {
        !matches!(self.end, End::Natural)
    }

    /// The MCP server itself goes (killed, or a call crashes it): no MCP
    /// call of the case has a result it can count on.
    fn mcp_server_lost(&self) -> bool {
        matches!(self.source, Source::McpKill(_))
            || self
                .calls
                .iter()
                .any(|c| c.kind == Kind::Mcp(McpKind::Crash))
    }

    pub fn worker_lost(&self) -> bool {
        matches!(self.source, Source::WorkerKill(_) | Source::WorkerPause(_))
    }

    /// A local Bash call fails (or may, its hook blocking it), which
    /// cancels the siblings still running.
    fn siblings_may_cancel(&self) -> bool {
        self.calls.iter().any(|c| {
            c.kind == Kind::BashFail
                || (matches!(c.kind, Kind::Bash | Kind::Denied) && c.hook.is_some())
        })
    }
}

/// Whether `result` is right for call `i` of `case`; `Err` says why not.
fn judge(case: &Case, i: usize, result: &CallResult) -> Result<(), String> {
    let call = case.calls[i];
    let text = result.text();
    let outcome = &result.outcome;
    let cancelled = matches!(outcome, Outcome::Cancelled { .. });
    if cancelled && (case.interrupted() || case.siblings_may_cancel()) {
        return Ok(());
    }
    let bad = |why: &str| Err(format!("{why}: {outcome:?}: {text}"));
    if let Some((event, HookFault::Block)) = call.hook {
        return blocked(case, call, event, result).or_else(|why| bad(&why));
    }
    match call.kind {
        Kind::Mcp(_) if case.mcp_server_lost() => Ok(()),
        // A killed worker fails its health check at once: it is reported
        // gone, not silent.
        Kind::Worker { .. }
            if matches!(case.source, Source::WorkerKill(_))
                && text.contains("stopped answering") =>
        {
            bad("a killed worker was reported as not answering")
        }
        Kind::Worker { .. } if case.worker_lost() => Ok(()),
        Kind::Mcp(k) if k.is_fault() => {
            if result.is_error {
                Ok(())
            } else {
                bad("a faulted MCP call succeeded")
            }
        }
        Kind::Bash | Kind::Worker { .. } | Kind::Mcp(McpKind::Echo | McpKind::Slow) => {
            let word = match call.kind {
                Kind::Bash => format!("b{i}"),
                Kind::Worker { .. } => format!("w{i}"),
                _ => format!("m{i}"),
            };
            if *outcome == Outcome::Success && text.contains(&word) {
                Ok(())
            } else if case.interrupted() && *outcome == Outcome::ToolError {
                // A stop landing inside the shell or the server.
                Ok(())
            } else {
                bad(&format!("expected success saying {word}"))
            }
        }
        Kind::BashFail | Kind::Mcp(_) => match outcome {
            Outcome::ToolError => Ok(()),
            _ => bad("expected a tool error"),
        },
        Kind::Ask => match outcome {
            Outcome::Success => Ok(()),
            Outcome::Denied if case.interrupted() => Ok(()),
            _ => bad("expected the allowed Glob to succeed"),
        },
        Kind::Denied => match outcome {
            Outcome::Denied => Ok(()),
            _ => bad("expected the deny rule to deny"),
        },
    }
}

/// An exit 2 from the hook of `event`: it blocks the call (PreToolUse,
/// PermissionRequest; the result names that hook), or becomes feedback in
/// the result (PostToolUse, PostToolUseFailure, unless a lost server or
/// worker or an interrupt changed which of the two ran); PermissionDenied
/// and PostToolBatch blocks change no result.
fn blocked(case: &Case, call: Call, event: HookEvent, result: &CallResult) -> Result<(), String> {
    let text = result.text();
    let name = super::sources::event_name(event);
    let said = text.contains(&format!("blocked by the test's {name} hook"));
    let source_hit = match call.kind {
        Kind::Mcp(k) => case.mcp_server_lost() || k.is_fault(),
        Kind::Worker { .. } => case.worker_lost(),
        _ => false,
    };
    match event {
        HookEvent::PreToolUse | HookEvent::PermissionRequest => {
            let named = text.contains(&format!("A {name} hook"));
            if result.outcome == Outcome::Denied && said && named {
                Ok(())
            } else {
                Err(format!("expected a denial by the {name} hook"))
            }
        }
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure
            if !source_hit && !case.interrupted() =>
        {
            if said {
                Ok(())
            } else {
                Err(format!("expected the {name} hook's feedback"))
            }
        }
        _ => Ok(()),
    }
}

/// Exactly one result per call, in call order, each right for its call.
pub fn check(case: &Case, results: &[(usize, CallResult)]) -> Result<(), String> {
    if results.len() != case.calls.len() {
        return Err(format!(
            "{} results for {} calls",
            results.len(),
            case.calls.len()
        ));
    }
    for (i, (index, result)) in results.iter().enumerate() {
        if *index != i {
            return Err(format!("result {i} has index {index}"));
        }
        judge(case, i, result).map_err(|e| format!("call {i} ({:?}): {e}", case.calls[i]))?;
    }
    Ok(())
}

/// After the faulted batch (when the engine was not shut down), the session
/// goes on: local Bash and MCP calls work (a lost server was restarted);
/// a remote call works, or, when the session's worker was lost before the
/// session noticed, fails naming that worker. `second` is the result of
/// one more remote call, which must work (the session moved).
pub fn check_after(
    case: &Case,
    lost_url: &str,
    first: &[(usize, CallResult)],
    second: Option<&CallResult>,
) -> Result<(), String> {
    let said = |r: &CallResult| format!("{:?}: {}", r.outcome, r.text());
    let [(0, bash), (1, remote), (2, mcp)] = first else {
        return Err(format!("the next batch gave {} results", first.len()));
    };
    for (r, word) in [(bash, "after-b"), (mcp, "after-m")] {
        if r.outcome != Outcome::Success || !r.text().contains(word) {
            return Err(format!("after the faults, {word}: {}", said(r)));
        }
    }
    let remote_ok = remote.outcome == Outcome::Success && remote.text().contains("after-w");
    let named = remote.is_error && remote.text().contains(lost_url);
    if !(remote_ok || (case.worker_lost() && named)) {
        return Err(format!(
            "after the faults, the remote call: {}",
            said(remote)
        ));
    }
    if let Some(r) = second {
        if r.outcome != Outcome::Success || !r.text().contains("after-w") {
            return Err(format!("the session did not move: {}", said(r)));
        }
    }
    Ok(())
}
