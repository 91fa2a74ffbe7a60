//! One monitor from start to end: the command's tree, its stdout turned
//! into events, everything it prints in the output file, and the reasons
//! it can end (exit, deadline, flood, stop, session end).

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

use baton_engine::process::TreeGuard;
use baton_engine::{Notification, Session};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::Instant;

use super::batch::{Batcher, Event};
use crate::bash::background::{Finish, Task};
use crate::bash::confine::Confined;
use crate::bash::process::model_shell;

/// SIGTERM to SIGKILL when a monitor is stopped.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// A started monitor command.
pub(crate) struct Running {
    child: baton_engine::process::Child,
    guard: TreeGuard,
    stdout: pipe::Receiver,
    log: std::fs::File,
    _egress: Option<baton_engine::sandbox::proxy::Proxy>,
    /// The sandbox's check (see `Confined::guard`), run as the monitor's
    /// command is let go.
    _protect: Option<Arc<baton_engine::confine::protect::Guard>>,
}

/// Starts `command` with stdout to Baton and stderr to `log` (appended).
pub(crate) fn start(
    command: &str,
    cwd: &Path,
    log: &Path,
    env: &[(String, String)],
    confine: Option<&Confined>,
) -> std::io::Result<Running> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let (writer, reader) = pipe::pipe()?;
    let mut launch = model_shell("bash", env);
    launch
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdout(writer.into_blocking_fd()?)
        .stderr(OwnedFd::from(file.try_clone()?))
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("NO_COLOR", "1");
    if let Some(confined) = confine {
        confined.apply(&mut launch);
    }
    let (child, tree) = launch.spawn()?;
    let guard = TreeGuard::new(tree);
    let egress = confine.map(Confined::start_egress).transpose()?.flatten();
    Ok(Running {
        child,
        guard,
        stdout: reader,
        log: file,
        _egress: egress,
        _protect: confine.and_then(|c| c.guard.clone()),
    })
}

/// Drives the monitor to its end and reports it.
pub(crate) async fn drive(
    mut run: Running,
    task: Arc<Task>,
    session: Weak<Session>,
    limit: Duration,
) {
    let deadline = Instant::now() + limit;
    let mut batcher = Batcher::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut eof = false;
    let mut why: Option<String> = None;
    let (status, code) = loop {
        let due = batcher.due().map(Instant::from_std);
        tokio::select! {
            read = run.stdout.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    // The file has everything; a full disk only loses the file.
                    let _ = run.log.write_all(&buf[..n]);
                    batcher.push(&buf[..n], std::time::Instant::now());
                }
            },
            _ = sleep_until(due) => {
                if emit(&mut batcher, &task, &session) {
                    why = Some(format!(
                        "it kept printing more than {} lines per {} ms for {} s, so it was stopped; \
                         filter the command's output (grep, awk) to the lines that matter",
                        super::batch::MAX_LINES,
                        super::batch::WINDOW.as_millis(),
                        super::batch::FLOOD_LIMIT.as_secs()
                    ));
                    stop(&mut run).await;
                    break ("stopped", None);
                }
            }
            status = run.child.wait() => {
                let code = status.ok().map(|s| {
                    use std::os::unix::process::ExitStatusExt;
                    s.code().or_else(|| s.signal().map(|n| 128 + n)).unwrap_or(-1)
                });
                break (if code == Some(0) { "completed" } else { "failed" }, code);
            }
            _ = tokio::time::sleep_until(deadline) => {
                why = Some(format!("it reached its time limit of {} ms and was stopped", limit.as_millis()));
                stop(&mut run).await;
                break ("timed_out", None);
            }
            _ = task.stop_scope().cancelled() => {
                why = Some("it was stopped".into());
                stop(&mut run).await;
                break ("stopped", None);
            }
        }
    };
    // The last lines, then what the command left running goes with it.
    let until = Instant::now() + Duration::from_millis(300);
    while !eof {
        match tokio::time::timeout_at(until, run.stdout.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                let _ = run.log.write_all(&buf[..n]);
                batcher.push(&buf[..n], std::time::Instant::now());
            }
            _ => eof = true,
        }
    }
    batcher.finish(std::time::Instant::now());
    emit(&mut batcher, &task, &session);
    if let Some(tree) = run.guard.tree() {
        if tree.is_alive_async().await {
            tree.stop(STOP_GRACE).await;
        }
    }
    let Some(session) = session.upgrade() else {
        return;
    };
    let code_text = code.map_or_else(String::new, |c| format!(" with exit code {c}"));
    let message = match &why {
        Some(why) => format!("Monitor {} ({}) ended: {why}.", task.id, task.command),
        None => format!(
            "Monitor {} ({}) {status}{code_text}.",
            task.id, task.command
        ),
    };
    task.complete(
        &session,
        Finish {
            line: Some(message.clone()),
            exit_code: code,
            is_error: status == "failed",
            status,
        },
    );
    session.notify(Notification {
        kind: "monitor_finished".into(),
        message: message.clone(),
        data: Some(json!({
            "task_id": task.id,
            "status": status,
            "exit_code": code,
            "output_file": task.log_path,
            "lines": batcher.total_lines,
        })),
    });
}

/// Sends the current window's event; true when the flood lasted too long.
fn emit(batcher: &mut Batcher, task: &Task, session: &Weak<Session>) -> bool {
    let (event, flooding) = batcher.flush(std::time::Instant::now());
    if let (Some(event), Some(session)) = (event, session.upgrade()) {
        notify_event(&session, task, &event);
    }
    flooding
}

fn notify_event(session: &Session, task: &Task, event: &Event) {
    session.notify(Notification {
        kind: "monitor_event".into(),
        message: format!(
            "Monitor {}: {} new lines",
            task.id,
            event.lines.len() as u64 + event.suppressed
        ),
        data: Some(json!({
            "task_id": task.id,
            "status": "running",
            "events": event.text(),
            "suppressed": event.suppressed,
        })),
    });
}

async fn stop(run: &mut Running) {
    if let Some(tree) = run.guard.tree() {
        tree.stop(STOP_GRACE).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), run.child.wait()).await;
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
