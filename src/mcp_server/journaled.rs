//! Journaled calls: a `tools/call` that names itself is run at most once.
//!
//! A host that may retry (a Baton host running tools remotely, an
//! orchestrator) names each call in `_meta["dev.baton/call"]`:
//! `{"session": S, "id": ID, "after": N}`. The server's journal
//! ([`baton_journal`]) then decides:
//!
//! - a new call runs *detached* from the request (a dropped connection does
//!   not stop it), and the request follows it: its output as progress
//!   notifications numbered by the journal (`progress` = the output's number),
//!   then its result;
//! - a call that runs now is joined: the output after number `after` (with
//!   a note where the output limits dropped some), then the result;
//! - a call that ended is answered from the journal: its result, or an error
//!   saying it was lost (with the output it showed) or that its result was
//!   pruned. It is never run a second time.
//!
//! Stopping a journaled call takes an explicit request (`baton/cancelCall`,
//! [`cancel`]): a request that ends, whether cancelled or cut off, only stops
//! following the call, since a retry will want to join it.

use std::sync::Arc;

use baton_engine::{Outcome, ToolUse};
use baton_journal::{Begin, CallKey, Ended, Join, JournalError, Runner, Update};
use rmcp::model::{CallToolResponse, CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::{json, Value};

use super::call::{execute, Asking, Report};
use super::{results, Shared};

/// The experimental capability a server that journals named calls
/// declares (`{"version": 1}`). A host retries a call whose connection
/// broke only on a server that declares it: elsewhere a retry could run it
/// twice.
pub const JOURNAL_CAPABILITY: &str = "baton/journal";

/// `_meta` key naming a journaled call.
pub const CALL_META_KEY: &str = "dev.baton/call";

/// `_meta` key of an answer that came from the journal rather than from a
/// run: `{"state": "finished" | "lost" | "pruned", "started": bool}`.
pub const JOURNAL_META_KEY: &str = "dev.baton/journal";

/// The method a host stops a journaled call with: params `{session, id}`,
/// answer `{"cancelled": bool}` (false: it does not run).
pub const CANCEL_METHOD: &str = "baton/cancelCall";

/// The method a host asks where a named call stands with: params
/// `{session, id}`, answer `{"state": "unknown" | "running" | "ended"}`.
/// A host whose request for a call is still open while the worker says the
/// call ended (or never heard of it) knows the answer was lost on the way,
/// and asks again.
pub const STATUS_METHOD: &str = "baton/callStatus";

/// A call that named itself.
pub(super) struct Named {
    key: CallKey,
    after: u64,
}

/// The call's name from the request's `_meta`, if it gave one. A name that
/// is there but malformed is an error, not an unjournaled call: the host
/// meant it to run at most once.
pub(super) fn named(context: &RequestContext<RoleServer>) -> Result<Option<Named>, String> {
    let Some(meta) = context.meta.get(CALL_META_KEY) else {
        return Ok(None);
    };
    let text = |field: &str| {
        meta.get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && s.len() <= 512)
            .map(str::to_string)
            .ok_or_else(|| {
                format!(
                    "_meta[\"{CALL_META_KEY}\"].{field} must be a non-empty string of at most \
                     512 bytes"
                )
            })
    };
    let after = match meta.get("after") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("_meta[\"{CALL_META_KEY}\"].after must be a whole number"))?,
    };
    Ok(Some(Named {
        key: CallKey::new(text("session")?, text("id")?),
        after,
    }))
}

/// Runs, joins or answers the named call.
pub(super) async fn run(
    shared: &Arc<Shared>,
    named: Named,
    name: String,
    input: Value,
    asking: Asking,
    context: RequestContext<RoleServer>,
) -> CallToolResponse {
    let begun = shared
        .journal
        .begin(&named.key, &name, &input, named.after)
        .await;
    match begun {
        Err(e @ JournalError::Conflict { .. }) => {
            results::server_error(e.to_string(), Outcome::InvalidInput).into()
        }
        Err(e) => {
            results::server_error(format!("Baton did not run {name}: {e}"), Outcome::Internal)
                .into()
        }
        Ok(Begin::Ended(ended)) => answer(&named.key, ended).into(),
        Ok(Begin::Join(join)) => follow(join, &named.key, &context).await,
        Ok(Begin::Run(runner)) => {
            let join = runner.join(named.after);
            let call = ToolUse::new(named.key.id.clone(), name, input);
            spawn(shared, runner, call, asking);
            follow(join, &named.key, &context).await
        }
    }
}

/// Runs `call` detached from any request: its output and result go to the
/// journal through `runner`, readers follow it with [`Join`]s. (MCP tasks
/// start their calls this way too.)
pub(super) fn spawn(shared: &Arc<Shared>, runner: Runner, call: ToolUse, asking: Asking) {
    let shared = shared.clone();
    tokio::spawn(async move {
        let cancel = runner.cancel_token();
        let response = execute(&shared, call, &asking, &Report::Journal(&runner), &cancel).await;
        // Journaled calls are never asked in rounds (see `run`), so the
        // answer is a result.
        let result = match response {
            CallToolResponse::Complete(r) => r,
            _ => results::server_error(
                "Baton could not ask the question this call needs.".into(),
                Outcome::Denied,
            ),
        };
        match serde_json::to_value(result) {
            // A journal that cannot write still shows the result to the
            // requests that follow the call.
            Ok(v) => {
                let _ = runner.finish(v).await;
            }
            Err(e) => {
                let _ = runner
                    .lose(format!("its result could not be encoded: {e}"))
                    .await;
            }
        }
    });
}

/// Follows a running call: its output as numbered progress, then its end.
async fn follow(
    mut join: Join,
    key: &CallKey,
    context: &RequestContext<RoleServer>,
) -> CallToolResponse {
    let token = context.meta.get_progress_token();
    loop {
        let update = tokio::select! {
            update = join.next() => update,
            _ = context.ct.cancelled() => {
                // Cancelled or cut off: the call goes on (see the module docs).
                return results::server_error(
                    format!(
                        "Stopped following the call {}; it goes on. Send the call again with \
                         the same id to join it, or {CANCEL_METHOD} to stop it.",
                        key.id
                    ),
                    Outcome::Cancelled { started: true },
                )
                .into();
            }
        };
        let (seq, message) = match update {
            Update::Ended(ended) => return answer(key, ended).into(),
            Update::Output { seq, text } => (seq, text),
            Update::Dropped { first, last } => (
                last,
                format!("(output {first} to {last} was dropped by the output limits before it was read)"),
            ),
        };
        if let Some(token) = &token {
            // Advisory: a client that went away must not stop the call.
            let _ = context
                .peer
                .notify_progress(
                    ProgressNotificationParam::new(token.clone(), seq as f64).with_message(message),
                )
                .await;
        }
    }
}

/// The answer for a call that ended.
pub(super) fn answer(key: &CallKey, ended: Ended) -> CallToolResult {
    match ended {
        Ended::Finished(value) => {
            match <CallToolResult as serde::Deserialize>::deserialize(&*value) {
                Ok(result) => result,
                Err(e) => results::server_error(
                    format!("The journaled result of {} could not be read: {e}", key.id),
                    Outcome::Internal,
                ),
            }
        }
        Ended::Lost(lost) => {
            let text = crate::journal_text::lost(&key.id, &lost);
            with_journal_meta(
                results::server_error(text, Outcome::Internal),
                json!({"state": "lost", "started": lost.started}),
            )
        }
        Ended::Pruned => with_journal_meta(
            results::server_error(crate::journal_text::pruned(&key.id), Outcome::Internal),
            json!({"state": "pruned", "started": true}),
        ),
    }
}

fn with_journal_meta(mut result: CallToolResult, value: Value) -> CallToolResult {
    let mut meta = result.meta.take().unwrap_or_default();
    meta.0.insert(JOURNAL_META_KEY.to_string(), value);
    result.meta = Some(meta);
    result
}

/// The call a `baton/cancelCall` or `baton/callStatus` names.
fn key_of(params: &Value, method: &str) -> Result<CallKey, String> {
    let field = |f: &str| {
        params
            .get(f)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("{method} needs a string `{f}`"))
    };
    Ok(CallKey::new(field("session")?, field("id")?))
}

/// `baton/cancelCall`: stops the named call if it runs.
pub(super) fn cancel(shared: &Shared, params: &Value) -> Result<Value, String> {
    let key = key_of(params, CANCEL_METHOD)?;
    Ok(json!({"cancelled": shared.journal.cancel(&key)}))
}

/// `baton/callStatus`: where the named call stands.
pub(super) fn status(shared: &Shared, params: &Value) -> Result<Value, String> {
    let key = key_of(params, STATUS_METHOD)?;
    let state = match shared.journal.status(&key) {
        None => "unknown",
        Some(s) if s.ended.is_some() => "ended",
        Some(_) => "running",
    };
    Ok(json!({"state": state}))
}
