//! Commands that run on after their call returned.
//!
//! `run_in_background` hands back a task id at once; the shell keeps
//! running in a tokio task, its output going to a capture (for `TaskOutput`)
//! and a log file (for anyone). Tasks live in the session, in a
//! [`BackgroundTasks`] slot, so any later call of the session can read or
//! stop them, and the host is notified when one ends.
//!
//! Nothing a session started may outlive it: the slot is one of the
//! session's cleanups, so ending the session ([`stop_all`]) stops every
//! task and every process group a foreground command left running
//! (`server &`), and dropping the slot (the session going away) does the
//! same, in case the host never ended it. A subagent shares its parent's session, so its
//! calls carry a [`TaskOwner`] in their context, and [`stop_owned`] stops
//! only what that subagent started when it ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use baton_engine::cleanup::{SessionCleanup, Stopping};
use baton_engine::{CancelReason, CancelScope, Notification, Session};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::watch;

use super::cwd::file_safe;
use super::output::{Capture, CaptureSpec};
use super::process::Shell;
use super::report;
use super::run::{self, Ending, Limits};
use super::BashConfig;
use baton_engine::confine::protect::Guard;
use baton_engine::process::TreeGuard;

/// Put in `Context::extensions` of a subagent's calls (for example through
/// `NestedOptions::context`): the background tasks and leftover process
/// groups they start belong to this owner, and [`stop_owned`] ends them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskOwner(pub String);

impl TaskOwner {
    /// The owner named in a call's context, if any.
    pub fn of(context: &baton_engine::Context) -> Option<String> {
        context.extensions.get::<TaskOwner>().map(|o| o.0.clone())
    }
}

/// The background tasks of one session (a session slot).
#[derive(Default)]
pub struct BackgroundTasks {
    inner: Mutex<Inner>,
}

// By hand: the tasks hold process groups; their ids are what a reader needs.
// `try_lock`: printing must not wait for (or deadlock with) a holder.
impl std::fmt::Debug for BackgroundTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("BackgroundTasks");
        match self.inner.try_lock() {
            Some(inner) => out.field("tasks", &inner.tasks.keys().collect::<Vec<_>>()),
            None => out.field("tasks", &"<locked>"),
        };
        out.finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    tasks: BTreeMap<String, Arc<Task>>,
    /// Groups of finished commands that still had processes running, with
    /// their owner and their sandbox's check (which runs when the group is
    /// let go, after it).
    lingering: Vec<(Option<String>, TreeGuard, Option<Arc<Guard>>)>,
}

/// How a finished task ended.
#[derive(Clone, Debug)]
pub(crate) struct Finish {
    pub line: Option<String>,
    pub exit_code: Option<i32>,
    pub is_error: bool,
    pub status: &'static str,
}

pub(crate) struct Task {
    pub id: String,
    /// `shell` or `monitor` (see `crate::tasks`).
    pub kind: &'static str,
    pub owner: Option<String>,
    pub command: String,
    pub capture: Arc<Mutex<Capture>>,
    pub log_path: PathBuf,
    pub started: Instant,
    stop: CancelScope,
    done: watch::Sender<Option<Finish>>,
}

impl Task {
    /// Records how a task registered with [`BackgroundTasks::register`]
    /// ended.
    pub(crate) fn complete(&self, session: &Session, finish: Finish) {
        self.done.send_replace(Some(finish));
        crate::tasks::changed(session);
    }

    /// The scope that fires when the task is asked to stop.
    pub(crate) fn stop_scope(&self) -> &CancelScope {
        &self.stop
    }

    pub(crate) fn finish(&self) -> Option<Finish> {
        self.done.borrow().clone()
    }

    /// Asks the task to stop (SIGTERM, grace, SIGKILL to its group).
    pub(crate) fn request_stop(&self, reason: CancelReason) {
        self.stop.cancel(reason);
    }

    /// Waits until the task has ended.
    pub(crate) async fn finished(&self) -> Finish {
        let mut rx = self.done.subscribe();
        loop {
            if let Some(finish) = rx.borrow_and_update().clone() {
                return finish;
            }
            if rx.changed().await.is_err() {
                // The sender lives in this task; unreachable, but never hang.
                std::future::pending::<()>().await;
            }
        }
    }
}

impl BackgroundTasks {
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Task>> {
        self.inner.lock().tasks.get(id).cloned()
    }

    /// Every task, finished ones included, by id.
    pub(crate) fn all(&self) -> Vec<Arc<Task>> {
        self.inner.lock().tasks.values().cloned().collect()
    }

    pub(crate) fn ids(&self) -> Vec<String> {
        self.inner.lock().tasks.keys().cloned().collect()
    }

    /// Keeps a finished command's process group until the session (or
    /// its owner) ends.
    pub(crate) fn adopt(&self, owner: Option<String>, guard: TreeGuard, check: Option<Arc<Guard>>) {
        let emptied: Vec<_> = {
            let mut inner = self.inner.lock();
            // Forget groups that have emptied on their own.
            let (alive, emptied) = std::mem::take(&mut inner.lingering)
                .into_iter()
                .partition(|(_, g, _)| g.tree().is_some_and(|t| t.is_alive()));
            inner.lingering = alive;
            inner.lingering.push((owner, guard, check));
            emptied
        };
        // Their sandbox's checks run as they go, outside the lock.
        drop(emptied);
    }

    /// Numbers new tasks after `n`: a resumed session's old tasks keep
    /// their ids, and a new `shell-1` must not be taken for the lost one.
    pub fn number_after(&self, n: u64) {
        let mut inner = self.inner.lock();
        inner.next_id = inner.next_id.max(n);
    }

    fn next_id(&self) -> String {
        self.next_id_of("shell")
    }

    /// A fresh id `<prefix>-<n>`, counted across every kind.
    pub(crate) fn next_id_of(&self, prefix: &str) -> String {
        let mut inner = self.inner.lock();
        inner.next_id += 1;
        format!("{prefix}-{}", inner.next_id)
    }

    fn insert(&self, task: Arc<Task>) {
        self.inner.lock().tasks.insert(task.id.clone(), task);
    }

    /// Registers a task (a shell, or a monitor), driven by its caller,
    /// which ends it with [`Task::complete`].
    pub(crate) fn register(
        session: &Session,
        id: String,
        kind: &'static str,
        command: &str,
        capture: Arc<Mutex<Capture>>,
        owner: Option<String>,
    ) -> Arc<Task> {
        let log_path = capture.lock().log_target().to_path_buf();
        let (done, _) = watch::channel(None);
        let task = Arc::new(Task {
            id,
            kind,
            owner,
            command: command.to_string(),
            capture,
            log_path,
            started: Instant::now(),
            stop: CancelScope::new(),
            done,
        });
        registry(session).insert(task.clone());
        crate::tasks::changed(session);
        task
    }
}

impl Drop for BackgroundTasks {
    fn drop(&mut self) {
        let inner = self.inner.get_mut();
        for task in inner.tasks.values() {
            task.request_stop(CancelReason::Shutdown);
        }
        // Dropping the guards kills the lingering groups.
        inner.lingering.clear();
    }
}

/// The session's registry, created on first use and registered in the
/// session's cleanups: ending the session stops every task.
pub(crate) fn registry(session: &Session) -> Arc<BackgroundTasks> {
    session.lifetime_slot::<BackgroundTasks>()
}

impl SessionCleanup for BackgroundTasks {
    fn stop(&self) -> Option<Stopping> {
        Some(Box::pin(self.begin_stop(|_| true)))
    }
}

/// Starts `command` in the background; the task is registered before this
/// returns. It is stopped after `limit`.
pub(crate) fn start(
    session: &Arc<Session>,
    command: &str,
    cwd: &Path,
    owner: Option<String>,
    config: &BashConfig,
    sandbox: Option<&super::confine::Confined>,
    limit: Duration,
) -> std::io::Result<Arc<Task>> {
    let tasks = registry(session);
    let id = tasks.next_id();
    let log_path = session
        .state_dir()
        .join("shell")
        .join(format!("{}.log", file_safe(&id)));
    let capture = Arc::new(Mutex::new(Capture::new(CaptureSpec {
        inline_chars: config.inline_chars(),
        log_path,
        log_max_bytes: config.log_max_bytes,
        eager_log: true,
    })));
    let env = baton_engine::env::SettingsEnv::of(session);
    let shell = Shell::spawn(command, cwd, None, &env.0, sandbox, false)?;
    Ok(run_on(
        session, id, shell, capture, command, owner, config, limit,
    ))
}

/// Takes over a foreground call's running shell (its time limit ran out,
/// or the host sent it away): from now on it is a task like any other, its
/// output so far and from now on in its output file, stopped after `limit`.
pub(crate) fn take_over(
    session: &Arc<Session>,
    shell: Shell,
    capture: Arc<Mutex<Capture>>,
    command: &str,
    owner: Option<String>,
    config: &BashConfig,
    limit: Duration,
) -> Arc<Task> {
    // A foreground call's file is opened only for long output; the task's
    // file must exist now, since the model is told to read it.
    capture.lock().open_log();
    let id = registry(session).next_id();
    run_on(session, id, shell, capture, command, owner, config, limit)
}

/// Registers a task for `shell` and drives it to its end in a tokio task.
#[allow(clippy::too_many_arguments)]
fn run_on(
    session: &Arc<Session>,
    id: String,
    mut shell: Shell,
    capture: Arc<Mutex<Capture>>,
    command: &str,
    owner: Option<String>,
    config: &BashConfig,
    limit: Duration,
) -> Arc<Task> {
    let task = BackgroundTasks::register(session, id, "shell", command, capture, owner);
    let limits = Limits {
        timeout: Some(limit),
        stop_grace: config.stop_grace,
        drain: config.drain,
        timeout_detaches: false,
        detach: None,
    };
    let session = Arc::downgrade(session);
    let running = task.clone();
    tokio::spawn(async move {
        let (ending, elapsed) =
            run::run(&mut shell, &running.capture, &running.stop, &limits, None).await;
        let mut kept_running = false;
        if let Some(tree) = shell.tree() {
            if tree.is_alive_async().await {
                if let Some(session) = session.upgrade() {
                    kept_running = true;
                    registry(&session).adopt(
                        running.owner.clone(),
                        shell.take_guard(),
                        shell.protection(),
                    );
                }
            }
        }
        let notes = match shell.protection() {
            Some(guard) => super::confine::check_protected(guard, !kept_running).await,
            None => Vec::new(),
        };
        // The sandbox's network proxy, if any, lives in the shell: it goes
        // only now, with the command.
        drop(shell);
        let finish = finish(&running.command, &ending, elapsed);
        running.done.send_replace(Some(finish.clone()));
        notify(
            &session,
            &running,
            &finish,
            running.started.elapsed(),
            &notes,
        );
        if let Some(session) = session.upgrade() {
            crate::tasks::changed(&session);
        }
    });
    task
}

/// The time limit of a background task: `requested` (the call's `timeout`
/// with `run_in_background`) or the default, at most the maximum.
pub(crate) fn limit(config: &BashConfig, requested: Option<u64>) -> Duration {
    requested
        .map_or(config.background_timeout, Duration::from_millis)
        .min(config.max_background_timeout)
}

fn finish(command: &str, ending: &Ending, elapsed: Duration) -> Finish {
    let is_error = report::is_error(command, ending);
    let (exit_code, status) = match ending {
        Ending::Exited(status) => (
            Some(report::status_code(status)),
            if is_error { "failed" } else { "completed" },
        ),
        Ending::Cancelled(_) => (None, "stopped"),
        Ending::TimedOut { .. } => (None, "timed_out"),
        // A background run never detaches (see `run_on`); counted as lost.
        Ending::Lost(_) | Ending::Detached(_) => (None, "failed"),
    };
    Finish {
        line: report::ending_line(command, ending, elapsed),
        exit_code,
        is_error,
        status,
    }
}

fn notify(
    session: &Weak<Session>,
    task: &Task,
    finish: &Finish,
    elapsed: Duration,
    notes: &[String],
) {
    let Some(session) = session.upgrade() else {
        return;
    };
    let code = finish
        .exit_code
        .map_or_else(String::new, |c| format!(" with exit code {c}"));
    // Say why a task that did not end by itself was stopped.
    let why = match finish.status {
        "timed_out" => {
            " (it reached its background time limit and was stopped with all its processes)"
        }
        _ => "",
    };
    session.notify(Notification {
        kind: "background_task_finished".to_string(),
        message: format!(
            "Background task {} ({}) {}{}{} after {:.1} s. Its output is in {}; read it with TaskOutput.{}",
            task.id,
            super::label(&task.command),
            finish.status.replace('_', " "),
            code,
            why,
            elapsed.as_secs_f64(),
            task.log_path.display(),
            notes.iter().map(|n| format!(" {n}")).collect::<String>()
        ),
        data: Some(json!({
            "task_id": task.id,
            "command": task.command,
            "status": finish.status,
            "exit_code": finish.exit_code,
            "output_file": task.log_path,
            "reason": finish.line,
        })),
    });
}

/// Stops every background task of `session` and every process group its
/// foreground commands left running, and waits (bounded) until they are
/// gone. Ending the session does this (see [`SessionCleanup`]).
pub async fn stop_all(session: &Session) {
    if let Some(tasks) = session.slots().get::<BackgroundTasks>() {
        tasks.begin_stop(|_| true).await;
    }
}

/// Stops what the calls carrying [`TaskOwner`]`(owner)` started: call it
/// when that subagent ends.
pub async fn stop_owned(session: &Session, owner: &str) {
    if let Some(tasks) = session.slots().get::<BackgroundTasks>() {
        tasks.begin_stop(|o| o == Some(owner)).await;
    }
}

/// The synchronous form of [`stop_all`], for shutdown paths that cannot
/// await: asks every task to stop (each still gets its SIGTERM grace period
/// while the tokio runtime runs, and is killed if the runtime goes away)
/// and kills leftover groups of foreground commands at once.
pub fn stop_all_now(session: &Session) {
    if let Some(tasks) = session.slots().get::<BackgroundTasks>() {
        // Not waited for: dropping it kills the leftover groups.
        drop(tasks.begin_stop(|_| true));
    }
}

impl BackgroundTasks {
    /// Asks the matching tasks to stop and takes their leftover process
    /// groups, before returning; the future waits (bounded) for the tasks
    /// to end and gives the groups their grace, then kills what is left.
    /// Dropped unpolled, it kills the groups at once.
    fn begin_stop(
        &self,
        matches: impl Fn(Option<&str>) -> bool,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let grace = Duration::from_secs(2);
        let (running, lingering, checks) = {
            let mut inner = self.inner.lock();
            let running: Vec<Arc<Task>> = inner
                .tasks
                .values()
                .filter(|t| matches(t.owner.as_deref()))
                .cloned()
                .collect();
            let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut inner.lingering)
                .into_iter()
                .partition(|(owner, _, _)| matches(owner.as_deref()));
            inner.lingering = others;
            let (mine, checks): (Vec<TreeGuard>, Vec<Option<Arc<Guard>>>) =
                mine.into_iter().map(|(_, g, c)| (g, c)).unzip();
            (running, mine, checks)
        };
        for task in &running {
            task.request_stop(CancelReason::Shutdown);
        }
        async move {
            let all_done = futures::future::join_all(running.iter().map(|t| t.finished()));
            let lingering_stopped = futures::future::join_all(
                lingering
                    .iter()
                    .filter_map(|g| g.tree())
                    .map(|t| t.stop(grace)),
            );
            let _ = tokio::time::timeout(
                grace + Duration::from_secs(3),
                futures::future::join(all_done, lingering_stopped),
            )
            .await;
            // Dropping the guards sends SIGKILL to whatever is left.
            drop(lingering);
            // Their sandbox's checks, now that they are gone.
            drop(checks);
        }
    }
}
