//! Command hooks, compatible with Claude Code's (SPEC §12).
//!
//! A hook is `bash -c <command>`, run in the session's working directory
//! with `CLAUDE_PROJECT_DIR` set, fed the event as one JSON object on stdin.
//! Its exit status and output are read the way Claude Code reads them, so
//! existing hook scripts work unchanged: exit 0 with optional JSON on stdout,
//! exit 2 to block with stderr as the reason, anything else a non-blocking
//! error.
//!
//! The hook runs in its own process group. A hook that outlives its timeout
//! is killed with the whole group: a script that started `sleep` or a server
//! must not leave it running. The same happens if the call is dropped while
//! its hook runs.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use async_trait::async_trait;
use regex::Regex;
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::{Hook, HookDecision, HookEvent, HookInput, HookOutcome};

/// Claude Code's default hook timeout.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// How much of a hook's stdout or stderr is kept; the rest is drained.
const OUTPUT_CAP: usize = 1 << 20;

/// Which tools a hook wants: a regex matched against the whole tool name,
/// or every tool for `*` and the empty matcher.
#[derive(Clone, Debug)]
pub enum ToolNameMatcher {
    All,
    Pattern(Regex),
}

impl ToolNameMatcher {
    pub fn parse(text: &str) -> Result<ToolNameMatcher, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(ToolNameMatcher::All);
        }
        // Anchored so that `Edit` does not also select `NotebookEdit`.
        Regex::new(&format!("^(?:{text})$"))
            .map(ToolNameMatcher::Pattern)
            .map_err(|e| format!("matcher `{text}` is not a valid regular expression: {e}"))
    }

    pub fn matches(&self, tool_name: &str) -> bool {
        match self {
            ToolNameMatcher::All => true,
            ToolNameMatcher::Pattern(re) => re.is_match(tool_name),
        }
    }
}

/// A shell command run for one event.
#[derive(Clone, Debug)]
pub struct CommandHook {
    event: HookEvent,
    matcher: ToolNameMatcher,
    command: String,
    timeout: Duration,
    project_dir: PathBuf,
}

impl CommandHook {
    pub fn new(
        event: HookEvent,
        matcher: ToolNameMatcher,
        command: impl Into<String>,
        project_dir: impl Into<PathBuf>,
    ) -> Self {
        CommandHook {
            event,
            matcher,
            command: command.into(),
            timeout: DEFAULT_HOOK_TIMEOUT,
            project_dir: project_dir.into(),
        }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn command(&self) -> &str {
        &self.command
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How messages name this hook.
    fn label(&self) -> String {
        let line = self.command.lines().next().unwrap_or("").trim();
        if line.chars().count() > 60 || self.command.trim().contains('\n') {
            format!("{}…", line.chars().take(60).collect::<String>())
        } else {
            line.to_string()
        }
    }

    async fn execute(&self, input: &HookInput) -> Result<Finished, String> {
        let payload = serde_json::to_vec(input)
            .map_err(|e| format!("could not encode its input as JSON: {e}"))?;
        let cwd = Path::new(&input.cwd);
        let cwd = if cwd.is_dir() { cwd } else { &self.project_dir };
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(&self.command)
            .current_dir(cwd)
            .env("CLAUDE_PROJECT_DIR", &self.project_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group, tracked as a tree: a hook that times out or
        // whose call is interrupted is killed with everything it started.
        let tag = crate::process::configure(&mut cmd, crate::process::Isolation::Group);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("could not be started: {e}"))?;
        let mut group = GroupGuard(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(|pid| crate::process::ProcessTree::new(pid, &tag))
                .map(crate::process::TreeGuard::new),
        );
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let io = async move {
            let write = async move {
                // A hook may exit without reading its input; that is its
                // business, not an error.
                if let Some(mut stdin) = stdin {
                    let _ = stdin.write_all(&payload).await;
                    let _ = stdin.shutdown().await;
                }
            };
            let ((), out, err) = tokio::join!(write, read_capped(stdout), read_capped(stderr));
            (out, err)
        };
        // Exit alone is not enough: output still open means the hook (or
        // something it started) is still talking.
        let finished =
            tokio::time::timeout(self.timeout, async { tokio::join!(child.wait(), io) }).await;
        match finished {
            Ok((Ok(status), (stdout, stderr))) => {
                group.disarm();
                Ok(Finished {
                    status,
                    stdout,
                    stderr,
                })
            }
            Ok((Err(e), _)) => Err(format!("could not be waited for: {e}")),
            Err(_) => {
                group.kill();
                let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
                Err(format!(
                    "timed out after {}s and was killed with every process it started",
                    self.timeout.as_secs_f64()
                ))
            }
        }
    }
}

#[async_trait]
impl Hook for CommandHook {
    fn matches(&self, event: HookEvent, tool_name: &str) -> bool {
        event == self.event && self.matcher.matches(tool_name)
    }

    async fn run(&self, input: &HookInput) -> HookOutcome {
        let label = self.label();
        match self.execute(input).await {
            Ok(finished) => interpret(self.event, &label, finished),
            Err(problem) => HookOutcome {
                errors: vec![format!(
                    "{} hook `{label}` {problem}; the call went on without it",
                    self.event.as_str()
                )],
                ..Default::default()
            },
        }
    }
}

/// Kills the hook's process tree unless disarmed: on timeout, and when the
/// hook's future is dropped mid-run (its call was interrupted).
struct GroupGuard(Option<crate::process::TreeGuard>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(mut tree) = self.0.take() {
            tree.kill_now();
        }
    }

    /// The leader was reaped; what it left running is its own business.
    fn disarm(&mut self) {
        if let Some(mut tree) = self.0.take() {
            tree.disarm();
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>) -> String {
    let Some(mut reader) = reader else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Reads a finished hook the way Claude Code does.
fn interpret(event: HookEvent, label: &str, run: Finished) -> HookOutcome {
    let mut out = HookOutcome::default();
    let stderr = run.stderr.trim();
    match run.status.code() {
        Some(0) => read_json(event, label, &run.stdout, &mut out),
        Some(2) => {
            let reason = if stderr.is_empty() {
                format!("hook `{label}` exited with status 2 and gave no reason")
            } else {
                stderr.to_string()
            };
            if event == HookEvent::PreToolUse {
                out.decision = Some(HookDecision::Deny);
                out.reason = Some(reason);
            } else {
                out.feedback = Some(reason);
            }
        }
        code => {
            let how = match code {
                Some(code) => format!("exited with status {code}"),
                None => {
                    use std::os::unix::process::ExitStatusExt;
                    format!(
                        "was killed by signal {}",
                        run.status.signal().unwrap_or_default()
                    )
                }
            };
            let said = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", first_lines(stderr))
            };
            out.errors.push(format!(
                "{} hook `{label}` {how}{said}; this is not a blocking error, so the call went on",
                event.as_str()
            ));
        }
    }
    out
}

fn first_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().take(5).collect();
    if text.lines().count() > 5 {
        lines.push("…");
    }
    lines.join("\n")
}

/// Exit 0: stdout may be a JSON object with decisions; plain text is only
/// for the transcript and is ignored here.
fn read_json(event: HookEvent, label: &str, stdout: &str, out: &mut HookOutcome) {
    let text = stdout.trim();
    if !(text.starts_with('{') || text.starts_with('[')) {
        return;
    }
    let problem = |what: String| {
        format!(
            "{} hook `{label}` {what}; that part of its output was ignored and the call went on",
            event.as_str()
        )
    };
    let obj: Map<String, Value> = match serde_json::from_str(text) {
        Ok(Value::Object(obj)) => obj,
        Ok(_) => {
            return out
                .errors
                .push(problem("printed JSON that is not an object".into()))
        }
        Err(e) => {
            return out
                .errors
                .push(problem(format!("printed invalid JSON on stdout ({e})")))
        }
    };
    let mut problems = Vec::new();
    let pre = event == HookEvent::PreToolUse;
    let decide = |out: &mut HookOutcome, d: HookDecision, reason: Option<&str>| {
        if Some(d) > out.decision {
            out.decision = Some(d);
            out.reason = reason.map(str::to_string);
        }
    };

    if obj.get("continue") == Some(&Value::Bool(false)) {
        out.stop = Some(
            obj.get("stopReason")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("a {} hook ended the turn", event.as_str())),
        );
    }
    let reason = obj.get("reason").and_then(Value::as_str);
    match obj.get("decision") {
        None | Some(Value::Null) => {}
        Some(Value::String(d)) if d == "block" => {
            if pre {
                decide(out, HookDecision::Deny, reason);
            } else {
                out.feedback = Some(
                    reason
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("hook `{label}` blocked and gave no reason")),
                );
            }
        }
        Some(Value::String(d)) if d == "approve" && pre => decide(out, HookDecision::Allow, reason),
        Some(other) => problems.push(format!("returned an unknown decision {other}")),
    }
    match obj.get("hookSpecificOutput") {
        None | Some(Value::Null) => {}
        Some(Value::Object(specific)) => {
            let reason = specific
                .get("permissionDecisionReason")
                .and_then(Value::as_str);
            match specific.get("permissionDecision") {
                None | Some(Value::Null) => {}
                Some(_) if !pre => problems
                    .push("returned permissionDecision, which only PreToolUse hooks may".into()),
                Some(Value::String(d)) => match d.as_str() {
                    "allow" => decide(out, HookDecision::Allow, reason),
                    "ask" => decide(out, HookDecision::Ask, reason),
                    "deny" => decide(out, HookDecision::Deny, reason),
                    _ => problems.push(format!(
                        "returned permissionDecision `{d}` (expected allow, ask or deny)"
                    )),
                },
                Some(other) => problems.push(format!("returned permissionDecision {other}")),
            }
            match specific.get("updatedInput") {
                None | Some(Value::Null) => {}
                Some(Value::Object(_)) if !pre => {
                    problems.push("returned updatedInput, which only PreToolUse hooks may".into())
                }
                Some(input @ Value::Object(_)) => out.updated_input = Some(input.clone()),
                Some(_) => problems.push("returned an updatedInput that is not an object".into()),
            }
            match specific.get("additionalContext") {
                None | Some(Value::Null) => {}
                Some(Value::String(text)) if !text.trim().is_empty() => {
                    out.additional_context.push(text.clone())
                }
                Some(Value::String(_)) => {}
                Some(_) => problems.push("returned an additionalContext that is not text".into()),
            }
        }
        Some(_) => problems.push("returned a hookSpecificOutput that is not an object".into()),
    }
    out.errors.extend(problems.into_iter().map(problem));
}
