//! The `Bash` tool: input, classification and one foreground call.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::shell;
use baton_engine::shell_details::ShellDetails;
use baton_engine::ToolKind;
use baton_engine::{
    async_trait, ContextModifier, PermissionTarget, Tool, ToolContext, ToolDef, ToolError,
    ToolLogic, ToolOutput,
};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

use super::background;
use super::confine;
use super::cwd::{self, CwdChange};
use super::detach;
use super::output::{Capture, CaptureSpec};
use super::process;
use super::process::Shell;
use super::progress::Reporter;
use super::report;
use super::run::{self, Ending, Limits};
use super::BashConfig;

/// A single argument may not exceed this on Linux (MAX_ARG_STRLEN); the
/// command travels as one.
const MAX_COMMAND_BYTES: usize = 128 * 1024 - 1;

/// The input of `Bash`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command line to run, in bash syntax.
    pub command: String,
    /// Time limit in milliseconds (default 120000; larger than 600000 is cut to 600000).
    /// A command still running then goes on in the background. With
    /// run_in_background: how long it may run there before it is stopped
    /// (default 1800000, at most 7200000).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// What the command does, in a few words (shown to the user).
    #[serde(default)]
    pub description: Option<String>,
    /// Run in the background: return at once with a task id; read the output
    /// with TaskOutput, stop it with TaskStop.
    #[serde(default)]
    pub run_in_background: bool,
    /// Run this command outside the sandbox. Honoured only where the
    /// settings allow unsandboxed commands, and never without the
    /// permission check that applies to any unsandboxed command.
    #[serde(default, rename = "dangerouslyDisableSandbox")]
    pub dangerously_disable_sandbox: Option<bool>,
}

struct Bash {
    config: BashConfig,
}

pub(crate) fn tool(config: &BashConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "Bash",
        "Runs a command line in a fresh bash shell in the working directory and \
         returns its combined stdout and stderr. A `cd` carries over to later calls \
         (inside the workspace only); variables and other shell state do not. Long \
         output keeps its beginning and end, with the complete text in a file named \
         in the result. Default time limit 2 minutes (`timeout`, at most 10 minutes), \
         after which a command still running goes on as a background task; \
         for servers and long jobs set `run_in_background` and use TaskOutput / \
         TaskStop. Prefer the Read, Grep and Glob tools over cat, grep and find.",
    )
    .search_hint("run shell command terminal bash execute")
    .cancels_siblings_on_error(true)
    .tool_kind(ToolKind::Shell { command: "command" });
    Tool::typed::<BashInput, _>(
        def,
        Bash {
            config: config.clone(),
        },
    )
}

#[async_trait]
impl ToolLogic<BashInput> for Bash {
    fn is_concurrency_safe(&self, input: &BashInput) -> bool {
        // A `cd` must run alone so its new directory can carry over (only
        // calls that are not safe may change the context).
        shell::is_read_only(&input.command) && !shell::changes_directory(&input.command)
    }

    fn is_read_only(&self, input: &BashInput) -> bool {
        shell::is_read_only(&input.command)
    }

    fn permission_target(&self, input: &BashInput, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Command(input.command.clone())
    }

    fn label(&self, input: &BashInput) -> Option<String> {
        Some(super::label(&input.command))
    }

    async fn validate_input(&self, input: &BashInput, _ctx: &ToolContext) -> Result<(), String> {
        if input.command.trim().is_empty() {
            return Err("`command` is empty; give the command line to run.".into());
        }
        if input.command.contains('\0') {
            return Err("`command` contains a NUL byte, which a shell cannot receive.".into());
        }
        if input.command.len() > MAX_COMMAND_BYTES {
            return Err(format!(
                "`command` is {} bytes long; the limit is {MAX_COMMAND_BYTES}. Write the script \
                 to a file with the Write tool and run that file instead.",
                input.command.len()
            ));
        }
        if input.timeout == Some(0) {
            return Err("`timeout` must be at least 1 millisecond.".into());
        }
        Ok(())
    }

    async fn call(&self, input: BashInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if !ctx.cwd().is_dir() {
            return Ok(with_response(ToolOutput::error(format!(
                "The working directory {} no longer exists, so the command was not run. \
                 Run it with an absolute `cd` into an existing directory first.",
                ctx.cwd().display()
            ))));
        }
        let output = if input.run_in_background {
            self.start_background(&input, &ctx)
        } else {
            self.run_foreground(&input, &ctx).await?
        };
        Ok(with_response(output))
    }
}

/// Claude Code's `tool_response` for a result that did not set its own
/// (sdk-tools.d.ts `BashOutput`): the command never ran, or it went to the
/// background, so what there is to say is the text itself.
fn with_response(output: ToolOutput) -> ToolOutput {
    if output.response.is_some() {
        return output;
    }
    let text = baton_engine::content::joined_text(&output.content);
    output.with_response(serde_json::json!({
        "stdout": text,
        "stderr": "",
        "interrupted": false,
        "isImage": false,
    }))
}

impl Bash {
    fn timeout(&self, input: &BashInput) -> Duration {
        input
            .timeout
            .map_or(self.config.default_timeout, Duration::from_millis)
            .min(self.config.max_timeout)
    }

    fn start_background(&self, input: &BashInput, ctx: &ToolContext) -> ToolOutput {
        let owner = background::TaskOwner::of(&ctx.context);
        let sandbox = match confine::sandbox_for(input, ctx) {
            Ok(sandbox) => sandbox,
            Err(refusal) => return ToolOutput::error(refusal),
        };
        match background::start(
            &ctx.session,
            &input.command,
            ctx.cwd(),
            owner,
            &self.config,
            sandbox.as_ref(),
            background::limit(&self.config, input.timeout),
        ) {
            Ok(task) => ToolOutput::text(format!(
                "Started in the background as task {id}. Its output goes to {log}. \
                 Use TaskOutput with task_id \"{id}\" to read it (optionally waiting for the end), \
                 and TaskStop to stop it. You will be notified when it finishes.",
                id = task.id,
                log = task.log_path.display()
            ))
            .with_response(serde_json::json!({
                "stdout": "",
                "stderr": "",
                "interrupted": false,
                "isImage": false,
                "backgroundTaskId": task.id,
            })),
            Err(err) => {
                ToolOutput::error(format!("The background shell could not be started: {err}."))
            }
        }
    }

    async fn run_foreground(
        &self,
        input: &BashInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let state_dir = ctx.session.state_dir();
        // The output file goes there; private to the user. If it cannot be
        // made, the capture says so when it tries to write.
        let _ = make_private_dir(&state_dir.join("shell"));
        // Without a pipe for the report, `cd` simply does not carry over.
        let (report_read, report_write) = match process::report_pipe() {
            Ok((read, write)) => (Some(read), Some(write)),
            Err(_) => (None, None),
        };
        let env = baton_engine::env::SettingsEnv::of(&ctx.session);
        let sandbox = match confine::sandbox_for(input, ctx) {
            Ok(sandbox) => sandbox,
            Err(refusal) => return Ok(ToolOutput::error(refusal)),
        };
        // The host may send the call to the background from the moment its
        // shell exists: registered before the spawn, a request that comes
        // before the run loop starts is kept (the scope stays cancelled)
        // instead of finding no running call. Registered after it, a host
        // that saw the command start could lose its request in between.
        let registered = detach::register(&ctx.session, &ctx.call_id);
        let mut shell = match Shell::spawn(
            &input.command,
            ctx.cwd(),
            report_write,
            &env.0,
            sandbox.as_ref(),
            self.config.separate_stderr,
        ) {
            Ok(shell) => shell,
            Err(err) => {
                return Ok(ToolOutput::error(format!(
                    "The shell could not be started: {err}."
                )))
            }
        };
        let capture = Arc::new(Mutex::new(Capture::new(CaptureSpec {
            inline_chars: self.config.inline_chars(),
            log_path: state_dir
                .join("shell")
                .join(format!("{}.log", cwd::file_safe(&ctx.call_id))),
            log_max_bytes: self.config.log_max_bytes,
            eager_log: false,
        })));
        let limits = Limits {
            timeout: Some(self.timeout(input)),
            stop_grace: self.config.stop_grace,
            drain: self.config.drain,
            timeout_detaches: self.config.timeout_moves_to_background,
            detach: Some(registered.signal()),
        };
        let reporter = Reporter::new(
            ctx.progress.clone(),
            self.config.progress_delay,
            self.config.progress_every,
        );
        let (ending, elapsed) =
            run::run(&mut shell, &capture, &ctx.cancel, &limits, Some(&reporter)).await;
        drop(registered);
        if let Ending::Detached(why) = ending {
            // The shell (with its sandbox's proxy) goes on as a task; its
            // final directory no longer matters.
            let task = background::take_over(
                &ctx.session,
                shell,
                capture,
                &input.command,
                background::TaskOwner::of(&ctx.context),
                &self.config,
                self.config.background_timeout,
            );
            return Ok(detach::moved_result(&task, why, input.timeout));
        }

        let mut notes: Vec<String> = sandbox
            .as_ref()
            .and_then(|c| c.note.clone())
            .into_iter()
            .collect();
        let mut kept_running = false;
        if matches!(ending, Ending::Exited(_)) {
            let lingering = match shell.tree() {
                Some(tree) => still_running(tree).await,
                None => false,
            };
            if !lingering {
                // Known to be gone: no need to look for it again on drop.
                shell.take_guard().disarm();
            }
            if let Some(root) = shell.tree().filter(|_| lingering).map(|t| t.root()) {
                if self.config.keep_background_jobs {
                    notes.push(format!(
                        "Processes the command started in the background are still running \
                         (session {root}); they are stopped when the session ends."
                    ));
                    kept_running = true;
                    background::registry(&ctx.session).adopt(
                        background::TaskOwner::of(&ctx.context),
                        shell.take_guard(),
                        shell.protection(),
                    );
                } else {
                    let (_, stop) = shell.stop(self.config.stop_grace).await;
                    notes.push(if stop.survivors == 0 {
                        "Processes the command started in the background were stopped when \
                         it ended; use run_in_background for anything that must keep running."
                            .to_string()
                    } else {
                        format!(
                            "Processes the command started in the background were stopped when \
                             it ended, but {} could not be stopped and may still be running.",
                            stop.survivors
                        )
                    });
                }
            }
        }
        // What the command created that the sandbox does not allow goes now
        // (and, for what it left running, again when that ends).
        if let Some(guard) = shell.protection() {
            notes.extend(confine::check_protected(guard, !kept_running).await);
        }
        drop(shell);

        let mut modifier = None;
        if let Some(read) = &report_read {
            match cwd::judge(&process::read_report(read), &ctx.context) {
                CwdChange::Unchanged => {}
                CwdChange::Moved(dir) => {
                    notes.push(format!("Working directory is now {}.", dir.display()));
                    modifier = Some(ContextModifier::new(move |mut c| {
                        c.cwd = dir;
                        c
                    }));
                }
                CwdChange::Refused(dir) => notes.push(format!(
                    "The shell ended in {}, which is outside the workspace, so later commands \
                     still start in {}.",
                    dir.display(),
                    ctx.cwd().display()
                )),
            }
        }

        let capture = capture.lock();
        let rendered = capture.render();
        let mut lines = Vec::new();
        lines.extend(report::ending_line(&input.command, &ending, elapsed));
        lines.extend(report::log_line(
            &capture,
            rendered.omitted_bytes > 0,
            false,
        ));
        lines.extend(notes);
        let text = report::compose(&rendered.text, &lines);
        let mut output = if report::is_error(&input.command, &ending) {
            ToolOutput::error(text)
        } else {
            ToolOutput::text(text)
        };
        output.modifier = modifier;
        // What Claude Code gives PostToolUse hooks as `tool_response`
        // (sdk-tools.d.ts `BashOutput`); stderr is merged into stdout here.
        output.response = Some(serde_json::json!({
            "stdout": rendered.text.trim_end_matches('\n'),
            "stderr": "",
            "interrupted": matches!(ending, Ending::Cancelled(_) | Ending::TimedOut { .. }),
            "isImage": false,
            // Beyond Claude Code's shape: what OpenAI's `shell_call_output`
            // reports as the outcome.
            "exitCode": match &ending {
                Ending::Exited(status) => status.code(),
                _ => None,
            },
            "timedOut": matches!(ending, Ending::TimedOut { .. }),
        }));
        let (stdout, stderr) = capture.streams();
        output.facts_mut().shell = Some(ShellDetails {
            exit_code: match &ending {
                Ending::Exited(status) => status.code(),
                _ => None,
            },
            // With one pipe, stdout holds both streams (see `separate_stderr`).
            stdout: Some(stdout),
            stderr: self.config.separate_stderr.then_some(stderr),
            timed_out: matches!(ending, Ending::TimedOut { .. }),
            interrupted: matches!(ending, Ending::Cancelled(_)),
        });
        Ok(output)
    }
}

/// Whether the tree still has running processes a moment after its shell
/// exited (background jobs may be just finishing).
async fn still_running(tree: &baton_engine::process::ProcessTree) -> bool {
    if !tree.is_alive_async().await {
        return false;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    tree.is_alive_async().await
}

fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
