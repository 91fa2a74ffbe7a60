//! Command hooks, compatible with Claude Code's (SPEC §12).
//!
//! A hook is `bash -c <command>` (or, in exec form, `command` spawned with
//! `args` and no shell), run in the project directory with
//! `CLAUDE_PROJECT_DIR`, the settings' `env` block and, for a plugin's
//! hooks, `CLAUDE_PLUGIN_ROOT` set, fed the event as one JSON object on
//! stdin. Its exit status and output are read by [`super::super::protocol`].
//!
//! Why the project directory and not the session's current one: the model
//! moves the session's directory with `cd`, and may write files where it
//! moved. A hook written as `./guard.sh` would then run the model's own
//! `guard.sh`, or fail to start, and a guard that cannot start guards
//! nothing. The input's `cwd` still tells the hook where the session is.
//!
//! The hook runs in its own process group. A hook that outlives its timeout
//! is killed with the whole group: a script that started `sleep` or a server
//! must not leave it running. The same happens if the call is dropped while
//! its hook runs.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::{Configured, Handler, HookOptions};
use crate::hooks::matching::ToolNameMatcher;
use crate::hooks::protocol::{Reply, Run};
use crate::hooks::{HookEvent, HookInput, HookOutcome};
use crate::vars;

pub use super::DEFAULT_HOOK_TIMEOUT;

/// How much of a hook's stdout or stderr is kept; the rest is drained.
const OUTPUT_CAP: usize = 1 << 20;

/// How the command is started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandForm {
    /// Through a shell: `bash -c <command>`.
    Shell {
        /// The command line, as written in settings.
        command: String,
        /// The shell that runs it.
        shell: ShellKind,
    },
    /// Exec form: the program and its arguments, no shell. Placeholders
    /// (`${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PROJECT_DIR}`, in the grammar of
    /// [`crate::vars`]) are replaced in each element; nothing else is.
    Exec {
        /// The program to start.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// Claude Code's `shell` option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShellKind {
    /// `bash -c` (the default).
    #[default]
    Bash,
    /// PowerShell (`pwsh`).
    PowerShell,
}

/// Environment a command hook runs with, shared by every hook of a file.
#[derive(Clone, Debug, Default)]
pub struct HookEnv {
    /// The project root: `CLAUDE_PROJECT_DIR` and the command's working
    /// directory.
    pub project_dir: PathBuf,
    /// The settings' `env` block, merged across files.
    pub vars: Arc<Vec<(String, String)>>,
    /// For hooks a plugin ships: its install directory.
    pub plugin_root: Option<PathBuf>,
}

/// A command run for one event.
#[derive(Clone, Debug)]
pub struct CommandHandler {
    form: CommandForm,
    env: HookEnv,
}

/// A command hook with its options (what a settings file produces).
pub type CommandHook = Configured<CommandHandler>;

impl Configured<CommandHandler> {
    /// `bash -c command` for `event`, selected by `matcher`.
    pub fn new(
        event: HookEvent,
        matcher: ToolNameMatcher,
        command: impl Into<String>,
        project_dir: impl Into<PathBuf>,
    ) -> Self {
        Configured::with_options(
            HookOptions::new(event, matcher),
            CommandHandler::new(
                CommandForm::Shell {
                    command: command.into(),
                    shell: ShellKind::Bash,
                },
                HookEnv {
                    project_dir: project_dir.into(),
                    ..Default::default()
                },
            ),
        )
    }

    /// The command line (or the program, in exec form), for messages.
    pub fn command(&self) -> &str {
        match &self.handler().form {
            CommandForm::Shell { command, .. } => command,
            CommandForm::Exec { program, .. } => program,
        }
    }
}

impl CommandHandler {
    /// A handler starting `form` with `env`.
    pub fn new(form: CommandForm, env: HookEnv) -> Self {
        CommandHandler { form, env }
    }

    /// How the command is started.
    pub fn form(&self) -> &CommandForm {
        &self.form
    }

    /// `text` with `${CLAUDE_PROJECT_DIR}` and (for a plugin's hook)
    /// `${CLAUDE_PLUGIN_ROOT}` put in; any other reference is left as
    /// written for the program to see, as Claude Code does.
    fn placeholders(&self, text: &str) -> String {
        let lookup = |name: &str| match name {
            "CLAUDE_PROJECT_DIR" => Some(self.env.project_dir.to_string_lossy().into_owned()),
            "CLAUDE_PLUGIN_ROOT" => self
                .env
                .plugin_root
                .as_ref()
                .map(|root| root.to_string_lossy().into_owned()),
            _ => None,
        };
        vars::expand_or(text, vars::Options::default(), vars::Unset::Keep, &lookup)
    }

    fn command(&self) -> Result<Command, String> {
        let mut command = match &self.form {
            CommandForm::Shell {
                command,
                shell: ShellKind::Bash,
            } => {
                let mut c = Command::new("bash");
                c.arg("-c").arg(command);
                c
            }
            CommandForm::Shell {
                command,
                shell: ShellKind::PowerShell,
            } => {
                let mut c = Command::new("pwsh");
                c.arg("-NoProfile").arg("-Command").arg(command);
                c
            }
            CommandForm::Exec { program, args } => {
                let mut c = Command::new(self.placeholders(program));
                c.args(args.iter().map(|a| self.placeholders(a)));
                c
            }
        };
        for (key, value) in self.env.vars.iter() {
            command.env(key, value);
        }
        command.env("CLAUDE_PROJECT_DIR", &self.env.project_dir);
        if let Some(root) = &self.env.plugin_root {
            command.env("CLAUDE_PLUGIN_ROOT", root);
        }
        Ok(command)
    }

    /// The project directory, never the session's current one (see the
    /// module docs). A handler built without a project (an embedder's
    /// `HookEnv::default()`) keeps Baton's own directory, which the model
    /// cannot move either.
    fn working_dir(&self) -> Result<Option<&Path>, String> {
        let dir = self.env.project_dir.as_path();
        if dir.as_os_str().is_empty() {
            return Ok(None);
        }
        if !dir.is_dir() {
            return Err(format!(
                "could not be started: its working directory, the project directory `{}`, is not a directory",
                dir.display()
            ));
        }
        Ok(Some(dir))
    }

    async fn execute(&self, input: &HookInput, timeout: Duration) -> Result<Reply, String> {
        let payload = serde_json::to_vec(input)
            .map_err(|e| format!("could not encode its input as JSON: {e}"))?;
        let mut cmd = self.command()?;
        if let Some(dir) = self.working_dir()? {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group, tracked as a tree: a hook that times out or
        // whose call is interrupted is killed with everything it started.
        let tag = baton_process::configure(&mut cmd, baton_process::Isolation::Group);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("could not be started: {e}"))?;
        let mut group = GroupGuard(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(|pid| baton_process::ProcessTree::new(pid, &tag))
                .map(baton_process::TreeGuard::new),
        );
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (went_async, async_rx) = tokio::sync::oneshot::channel();
        let io = async move {
            let write = async move {
                // A hook may exit without reading its input; that is its
                // business, not an error.
                if let Some(mut stdin) = stdin {
                    let _ = stdin.write_all(&payload).await;
                    let _ = stdin.shutdown().await;
                }
            };
            let out = super::async_output::read_watching(stdout, OUTPUT_CAP, went_async);
            let ((), out, err) = tokio::join!(write, out, read_capped(stderr));
            (out, err)
        };
        // Exit alone is not enough: output still open means the hook (or
        // something it started) is still talking.
        let run = async move {
            let (status, output) = tokio::join!(child.wait(), io);
            (status, output, child)
        };
        let mut run = Box::pin(run);
        let deadline = tokio::time::Instant::now() + timeout;
        let went = tokio::select! {
            finished = tokio::time::timeout_at(deadline, &mut run) => Err(finished),
            Ok(limit) = async_rx => Ok(limit),
        };
        let finished = match went {
            Err(finished) => finished,
            Ok(limit) => {
                // `{"async": true}`: the call goes on; the hook runs on in
                // the background until it ends or its time is up, then its
                // group is killed like any timed-out hook's.
                let limit = limit.unwrap_or(timeout);
                tokio::spawn(async move {
                    let mut group = group;
                    match tokio::time::timeout(limit, run).await {
                        Ok((Ok(_), _, _)) => group.disarm(),
                        _ => group.kill(),
                    }
                });
                return Ok(Reply {
                    code: Some(0),
                    how: "went async".into(),
                    stdout: String::new(),
                    stderr: String::new(),
                });
            }
        };
        let finished = finished.map(|(status, output, _child)| (status, output));
        match finished {
            Ok((Ok(status), (stdout, stderr))) => {
                group.disarm();
                let how = match status.code() {
                    Some(code) => format!("exited with status {code}"),
                    None => {
                        use std::os::unix::process::ExitStatusExt;
                        format!(
                            "was killed by signal {}",
                            status.signal().unwrap_or_default()
                        )
                    }
                };
                Ok(Reply {
                    code: status.code(),
                    how,
                    stdout,
                    stderr,
                })
            }
            Ok((Err(e), _)) => Err(format!("could not be waited for: {e}")),
            Err(_) => {
                // The timed-out future dropped the child (kill_on_drop);
                // the group guard takes whatever it started.
                group.kill();
                Err(format!(
                    "timed out after {}s and was killed with every process it started",
                    timeout.as_secs_f64()
                ))
            }
        }
    }
}

#[async_trait]
impl Handler for CommandHandler {
    fn label(&self) -> String {
        let text = match &self.form {
            CommandForm::Shell { command, .. } => command.clone(),
            CommandForm::Exec { program, args } => std::iter::once(program.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        };
        crate::permission::summary::first_line(&text, 60)
    }

    async fn call(&self, input: &HookInput, timeout: Duration, run: Run) -> HookOutcome {
        run.ended(self.execute(input, timeout).await)
    }
}

/// Kills the hook's process tree unless disarmed: on timeout, and when the
/// hook's future is dropped mid-run (its call was interrupted).
struct GroupGuard(Option<baton_process::TreeGuard>);

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
