//! `exec_command` and `write_stdin`, with codex's names, fields and reply
//! shape, so that models trained on codex drive REPLs here unchanged.

use std::path::PathBuf;
use std::time::Instant;

use baton_engine::shell;
use baton_engine::ToolKind;
use baton_engine::{
    async_trait, InterruptBehavior, PermissionTarget, Tool, ToolContext, ToolDef, ToolError,
    ToolLogic, ToolOutput, ToolPermission,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::input::Typed;
use super::judge;
use super::process::{self, Spec};
use super::reply::{render, with_details};
use super::session::ExecSession;
use super::state;
use super::store::{ExecSessions, MAX_SESSIONS, WARN_SESSIONS};
use super::terminal::{self, Terminal};
use super::ExecConfig;
use crate::bash::confine;

/// The longest command line (Linux's limit on one argument).
const MAX_COMMAND_BYTES: usize = 128 * 1024 - 1;
/// Most bytes one `write_stdin` sends.
const MAX_CHARS_BYTES: usize = 64 * 1024;

/// The input of `exec_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecCommandInput {
    /// Shell command to execute.
    pub cmd: String,
    /// Working directory for the command (default: the current one).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Shell binary to launch: `bash` (default) or `sh`.
    #[serde(default)]
    pub shell: Option<String>,
    /// Run the shell as a login shell (-l), reading the profile files.
    #[serde(default)]
    pub login: Option<bool>,
    /// Allocate a terminal (PTY) so the program can be driven with write_stdin.
    #[serde(default)]
    pub tty: Option<bool>,
    /// How long to wait for output before answering, in milliseconds (250 to 30000, default 10000).
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    /// Most tokens of output to return (default 10000).
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    /// `require_escalated` asks to run outside the sandbox, under the same
    /// conditions as Bash's dangerouslyDisableSandbox.
    #[serde(default)]
    pub sandbox_permissions: Option<String>,
    /// Why the command needs what it asks for (shown with an approval request).
    #[serde(default)]
    pub justification: Option<String>,
    /// Accepted for compatibility; it grants nothing (rules come from the settings).
    #[serde(default)]
    pub prefix_rule: Option<Vec<String>>,
}

/// The input of `write_stdin`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteStdinInput {
    /// Identifier of the running session (from exec_command).
    pub session_id: i32,
    /// Characters to write to its terminal; empty (or left out) only polls for output.
    #[serde(default)]
    pub chars: Option<String>,
    /// How long to wait for output before answering, in milliseconds (250 to 30000, default 250).
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    /// Most tokens of output to return (default 10000).
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
}

struct ExecCommand {
    config: ExecConfig,
}

struct WriteStdin {
    config: ExecConfig,
}

/// The `exec_command` tool.
pub fn exec_command(config: &ExecConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "exec_command",
        "Runs a command in a shell (a PTY with `tty: true`) and returns its output after \
         `yield_time_ms`: with the exit code if it finished, else with a session ID. Continue \
         a running session (read more output, type into a REPL) with write_stdin. Commands are \
         checked like Bash commands.",
    )
    .search_hint("interactive session pty terminal repl exec command tty")
    .should_defer(true)
    .cancels_siblings_on_error(true)
    // Hooks guarding Bash see its calls as Bash commands.
    .tool_kind(ToolKind::Shell { command: "cmd" });
    Tool::typed::<ExecCommandInput, _>(
        def,
        ExecCommand {
            config: config.clone(),
        },
    )
}

/// The `write_stdin` tool.
pub fn write_stdin(config: &ExecConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "write_stdin",
        "Writes characters to a running exec_command session's terminal (empty `chars` only \
         polls) and returns the output since the last call, with the exit code once it ended. \
         Into a shell, send one complete command line per call (ending in a newline, without \
         history expansion such as `!!`), or a lone Ctrl-C (\\u0003) or Ctrl-D (\\u0004); text \
         is typed only while bash waits at its prompt.",
    )
    .search_hint("interactive session stdin write repl input poll")
    .should_defer(true)
    // Only the wait is interrupted; the session itself keeps running.
    .interrupt(InterruptBehavior::Cancel);
    Tool::typed::<WriteStdinInput, _>(
        def,
        WriteStdin {
            config: config.clone(),
        },
    )
}

fn workdir(input: &ExecCommandInput, ctx: &ToolContext) -> Option<PathBuf> {
    input
        .workdir
        .as_deref()
        .filter(|w| !w.is_empty())
        .map(|w| ctx.cwd().join(w))
}

#[async_trait]
impl ToolLogic<ExecCommandInput> for ExecCommand {
    fn is_read_only(&self, input: &ExecCommandInput) -> bool {
        // A terminal lets input drive the program anywhere (`less` runs
        // `!cmd`): only a program without one can be read-only.
        !input.tty.unwrap_or(false) && shell::is_read_only(&input.cmd)
    }

    fn is_concurrency_safe(&self, input: &ExecCommandInput) -> bool {
        self.is_read_only(input)
    }

    fn permission_target(&self, input: &ExecCommandInput, ctx: &ToolContext) -> PermissionTarget {
        let dir = workdir(input, ctx);
        PermissionTarget::Command(judge::command_target(&input.cmd, dir.as_deref(), ctx.cwd()))
    }

    fn label(&self, input: &ExecCommandInput) -> Option<String> {
        Some(crate::bash::label(&input.cmd).replacen("Bash", "exec_command", 1))
    }

    async fn validate_input(
        &self,
        input: &ExecCommandInput,
        ctx: &ToolContext,
    ) -> Result<(), String> {
        if input.cmd.trim().is_empty() {
            return Err("`cmd` is empty; give the command to run.".into());
        }
        if input.cmd.contains('\0') {
            return Err("`cmd` contains a NUL byte, which a shell cannot receive.".into());
        }
        if input.cmd.len() > MAX_COMMAND_BYTES {
            return Err(format!(
                "`cmd` is longer than {MAX_COMMAND_BYTES} bytes; write a script file and run it."
            ));
        }
        shell_program(input.shell.as_deref())?;
        if let Some(dir) = workdir(input, ctx) {
            if !dir.is_dir() {
                return Err(format!("`workdir` {} is not a directory.", dir.display()));
            }
        }
        Ok(())
    }

    async fn call(
        &self,
        input: ExecCommandInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let begun = Instant::now();
        let cwd = workdir(&input, &ctx).unwrap_or_else(|| ctx.cwd().to_path_buf());
        let shell = match shell_program(input.shell.as_deref()) {
            Ok(shell) => shell,
            Err(why) => return Ok(ToolOutput::error(why)),
        };
        let asked_out = input.sandbox_permissions.as_deref() == Some("require_escalated");
        let confined = match confine::sandbox_for_command(&input.cmd, asked_out, &ctx) {
            Ok(c) => c,
            Err(refusal) => return Ok(ToolOutput::error(refusal)),
        };
        let store = ExecSessions::of(&ctx.session);
        let pruned = match store.make_room() {
            Ok(pruned) => pruned,
            Err(why) => return Ok(ToolOutput::error(why)),
        };
        let env = baton_engine::env::SettingsEnv::of(&ctx.session);
        let tty = input.tty.unwrap_or(false);
        let shell_input = tty && judge::reads_shell_commands(&input.cmd);
        let mut started = match process::start(&Spec {
            command: &input.cmd,
            cwd: &cwd,
            shell,
            login: input.login.unwrap_or(false),
            tty,
            shell_input,
            env: &env.0,
            confine: confined.as_ref(),
        }) {
            Ok(started) => started,
            Err(err) => {
                return Ok(ToolOutput::error(format!(
                    "The command could not be started: {err}."
                )))
            }
        };
        let terminal = match started.terminal.take() {
            Some((master, slave)) if shell_input => {
                let path = env
                    .0
                    .iter()
                    .rev()
                    .find(|(k, _)| k == "PATH")
                    .map(|(_, v)| std::ffi::OsString::from(v))
                    .or_else(|| std::env::var_os("PATH"));
                Some(std::sync::Arc::new(Terminal::new(
                    master,
                    slave,
                    terminal::bash_on(path.as_deref()),
                    started.guard.tree().cloned(),
                )))
            }
            _ => None,
        };
        let session = ExecSession::launch(
            store.next_id(),
            &input.cmd,
            shell_input,
            self.config.buffer_bytes,
            started,
            terminal,
            &ctx.session,
        );
        let live = store.insert(session.clone());
        crate::tasks::changed(&ctx.session);
        let mut notes = Vec::new();
        if let Some((id, cmd)) = pruned {
            notes.push(format!(
                "Session {id} ({}) was closed to make room: at most {MAX_SESSIONS} sessions may be open.",
                crate::bash::label(&cmd)
            ));
        } else if live >= WARN_SESSIONS {
            notes.push(format!(
                "Warning: {live} sessions are open; at {MAX_SESSIONS} the one idle longest is closed. \
                 End sessions you no longer need."
            ));
        }
        if let Some(note) = confined.as_ref().and_then(|c| c.note.clone()) {
            notes.push(note);
        }
        let yield_for = self
            .config
            .yield_for(input.yield_time_ms, self.config.exec_default_yield);
        let (taken, exit) = {
            let _in_use = session.use_now();
            session.collect(yield_for, None, &ctx.cancel).await
        };
        if exit.is_some() && store.remove(session.id).is_some() {
            crate::tasks::changed(&ctx.session);
        }
        let max = self.config.max_output_bytes(input.max_output_tokens);
        let text = render(begun.elapsed(), &taken, exit, session.id, max, &notes);
        Ok(with_details(ToolOutput::text(text), &taken, exit))
    }
}

#[async_trait]
impl ToolLogic<WriteStdinInput> for WriteStdin {
    fn permission_target(&self, input: &WriteStdinInput, ctx: &ToolContext) -> PermissionTarget {
        let chars = input.chars.as_deref().unwrap_or("");
        match ExecSessions::of(&ctx.session).get(input.session_id) {
            // Text typed into a shell is a command line: judged as one,
            // together with the unfinished line it continues, where the
            // shell is. A lone Ctrl-C or Ctrl-D runs nothing by itself.
            Some(s) if s.shell_input && Typed::of(chars) == Typed::Text && !chars.is_empty() => {
                let text = s.command_for(chars, ctx.cwd());
                s.note_judged(&ctx.call_id, &text);
                PermissionTarget::Command(text)
            }
            _ => PermissionTarget::None,
        }
    }

    async fn check_permissions(
        &self,
        input: &WriteStdinInput,
        ctx: &ToolContext,
    ) -> ToolPermission {
        let chars = input.chars.as_deref().unwrap_or("");
        match ExecSessions::of(&ctx.session).get(input.session_id) {
            Some(s) if s.shell_input && Typed::of(chars) == Typed::Text && !chars.is_empty() => {
                let line = s.pending.lock().with(chars);
                match state::leaves_code_behind(&line) {
                    Some(why) => ToolPermission::Ask(why),
                    None => ToolPermission::Defer,
                }
            }
            // Polling, one key, or input to a program the command's
            // approval covers (deny rules on write_stdin still apply).
            _ => ToolPermission::Allow,
        }
    }

    async fn validate_input(
        &self,
        input: &WriteStdinInput,
        ctx: &ToolContext,
    ) -> Result<(), String> {
        let chars = input.chars.as_deref().unwrap_or("");
        if chars.len() > MAX_CHARS_BYTES {
            return Err(format!(
                "`chars` is longer than {MAX_CHARS_BYTES} bytes; send it in parts."
            ));
        }
        let Some(session) = ExecSessions::of(&ctx.session).get(input.session_id) else {
            return Err(format!(
                "Unknown session id {}: it ended or was never started.",
                input.session_id
            ));
        };
        if !chars.is_empty() && !session.has_input() {
            return Err(format!(
                "write_stdin failed: stdin is closed for session {} (start it with `tty: true` to write to it; empty `chars` polls).",
                input.session_id
            ));
        }
        if session.shell_input && !chars.is_empty() {
            // Refused before anyone is asked; checked again just before
            // the text is typed.
            ready_to_type(&session, chars).await?;
        }
        Ok(())
    }

    async fn call(
        &self,
        input: WriteStdinInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let begun = Instant::now();
        let store = ExecSessions::of(&ctx.session);
        let Some(session) = store.get(input.session_id) else {
            return Ok(ToolOutput::error(format!(
                "Unknown session id {}.",
                input.session_id
            )));
        };
        let _in_use = session.use_now();
        let chars = input.chars.unwrap_or_default();
        if !chars.is_empty() {
            let written = if session.shell_input {
                type_into_shell(&session, &chars, &ctx).await
            } else {
                session
                    .write(chars.as_bytes())
                    .await
                    .map_err(|err| format!("write_stdin failed: {err}."))
            };
            if let Err(why) = written {
                return Ok(ToolOutput::error(why));
            }
        }
        let yield_for = self
            .config
            .yield_for(input.yield_time_ms, self.config.write_default_yield);
        // Input expects an answer: return once it came and paused. A poll
        // waits the whole time for more.
        let settle = (!chars.is_empty()).then_some(self.config.settle);
        let (taken, exit) = session.collect(yield_for, settle, &ctx.cancel).await;
        if exit.is_some() && store.remove(session.id).is_some() {
            crate::tasks::changed(&ctx.session);
        }
        let max = self.config.max_output_bytes(input.max_output_tokens);
        let text = render(begun.elapsed(), &taken, exit, session.id, max, &[]);
        Ok(with_details(ToolOutput::text(text), &taken, exit))
    }
}

/// Why `chars` may not be typed into `session`'s shell now, if it may
/// not: the write itself (`input`), then, for text, who reads the
/// terminal (`terminal`, waiting a moment for the shell's prompt).
async fn ready_to_type(session: &ExecSession, chars: &str) -> Result<(), String> {
    if let Some(why) = session.pending.lock().refuse(chars) {
        return Err(why);
    }
    if Typed::of(chars) != Typed::Text {
        return Ok(());
    }
    match &session.terminal {
        Some(terminal) => terminal.wait_ready(chars).await,
        None => Err(
            "This session has no terminal Baton can inspect, so text is not typed into its shell."
                .into(),
        ),
    }
}

/// Types `chars` into a shell session: only what the rules judged for this
/// call, only when the shell is at its prompt, one writer at a time.
async fn type_into_shell(
    session: &ExecSession,
    chars: &str,
    ctx: &ToolContext,
) -> Result<(), String> {
    let _typing = session.typing.lock().await;
    ready_to_type(session, chars).await?;
    let typed = Typed::of(chars);
    if typed == Typed::Text
        && !session.was_judged(&ctx.call_id, &session.command_for(chars, ctx.cwd()))
    {
        return Err(
            "The session's shell or its unfinished line changed after this input was checked, \
             so it was not typed; send it again."
                .into(),
        );
    }
    // Whether the terminal drops the line on this Ctrl-C, read before it
    // is typed (what the terminal does with it).
    let cleared = typed == Typed::Interrupt
        && session
            .terminal
            .as_ref()
            .is_some_and(|t| t.interrupt_clears_line());
    session
        .write(chars.as_bytes())
        .await
        .map_err(|err| format!("write_stdin failed: {err}."))?;
    let mut pending = session.pending.lock();
    match typed {
        Typed::Interrupt => pending.interrupted(cleared),
        Typed::EndOfInput => {}
        Typed::Text => pending.typed(chars),
    }
    Ok(())
}

/// The shell to run the command with. Only `bash` and `sh` (from `PATH`):
/// the command is judged with a bash grammar, and any other program named
/// here would run with the command's approval.
fn shell_program(requested: Option<&str>) -> Result<&'static str, String> {
    match requested.map(|s| s.rsplit('/').next().unwrap_or(s)) {
        None | Some("bash") => Ok("bash"),
        Some("sh") => Ok("sh"),
        Some(other) => Err(format!(
            "`shell` {other:?} is not supported; use bash (the default) or sh."
        )),
    }
}
