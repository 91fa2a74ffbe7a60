//! Which kernel confinement a call's commands run under.
//!
//! The classifier decides that a command is read-only by reading its text;
//! a model that wants out looks for the construct it misjudges. So a
//! command that runs *only because* it was judged read-only runs under the
//! read-only floor ([`Confinement::floor_policy`]): the kernel refuses it
//! every write, the network, and reads outside the workspace, the system
//! directories and a few per-user configuration files. A misjudged command
//! then fails instead of doing harm.
//!
//! A command someone vouched for (an allow rule, a hook, the user or host,
//! bypassPermissions) is not under the floor: it may well need to write.
//!
//! With Claude Code's `sandbox` settings enabled, every Bash command runs
//! sandboxed as those settings say ([`sandbox_mode`]), except the excluded
//! ones and, where the settings allow it, a call that asks for
//! `dangerouslyDisableSandbox` (which then goes through the permission
//! rules like any unsandboxed command: never silently).
//!
//! Where the kernel cannot confine (no Landlock or seccomp), the floor is
//! [`FloorState::Unavailable`]: read-only commands then *ask* instead of
//! running unasked, and a warning says so once. A user who accepts the
//! classifier alone sets `BATON_UNCONFINED_READ_ONLY=1` (or the builder's
//! [`Confinement::waive_floor`]).

mod expand;
pub mod protect;
pub mod sandbox_mode;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};

use baton_sandbox::{Policy, Prepared};
use serde_json::Value;

use crate::settings::sandbox::PathSet;
use crate::settings::SandboxConfig;
use baton_tool::context::Context;
use baton_tool::extensions::Extensions;
use baton_tool::tool::ToolKind;
pub use sandbox_mode::{Egress, SandboxPlan};

pub use baton_tool::confine::Approval;

/// Whether the read-only floor can be enforced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FloorState {
    /// Commands judged read-only run under the kernel's read-only floor.
    Enforced,
    /// The kernel cannot confine; read-only commands ask. The reason, for
    /// the warning and the ask.
    Unavailable(String),
    /// The user accepted classifier-only approval.
    Waived,
}

/// The environment variable that accepts classifier-only approval where
/// the kernel cannot confine.
pub const WAIVE_VAR: &str = "BATON_UNCONFINED_READ_ONLY";

/// The session's confinement settings: a service (see
/// [`Confinement::of`]).
#[derive(Clone, Debug)]
pub struct Confinement {
    floor: FloorState,
    /// `Read(…)` deny rules (and `denyRead`), carved out of what the floor
    /// may read.
    read_denies: PathSet,
    /// The `sandbox` settings, when enabled.
    sandbox: Option<Arc<SandboxConfig>>,
    /// Why the enabled sandbox cannot run here (`None`: it can).
    sandbox_unavailable: Option<String>,
    /// The last floor prepared, for the workspace it was built for.
    floor_cache: Arc<parking_lot::Mutex<Option<FloorEntry>>>,
    /// The checks of sandboxed commands whose holders still hold them
    /// (commands still running): see [`Confinement::check_sandboxed`].
    guards: Arc<parking_lot::Mutex<Vec<Weak<protect::Guard>>>>,
    /// What the walks of the workspace listed, for the next walk.
    memory: Arc<protect::Memory>,
}

/// `((roots, readable), floor)`; kept only when every root existed (a
/// root that did not gets no rule, and may appear later).
type FloorEntry = ((Arc<Vec<PathBuf>>, Arc<Vec<PathBuf>>), Arc<Prepared>);

/// Whether and how one Bash call is sandboxed by the settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SandboxChoice {
    /// No sandbox settings, or the command is excluded, or it asked for
    /// `dangerouslyDisableSandbox` and the settings allow that.
    Unsandboxed,
    /// Sandboxed; `note` says why a request to leave it was refused.
    Sandboxed {
        /// Why a request to leave the sandbox was refused, if one was made.
        note: Option<String>,
    },
    /// The settings want it sandboxed, but the kernel cannot.
    Unavailable {
        /// Why the kernel cannot.
        why: String,
        /// `failIfUnavailable`: the call fails rather than runs unsandboxed.
        fail: bool,
    },
}

impl Default for Confinement {
    fn default() -> Self {
        Confinement::detect()
    }
}

impl Confinement {
    /// The floor as this kernel and the environment allow.
    pub fn detect() -> Confinement {
        let waived = std::env::var_os(WAIVE_VAR).is_some_and(|v| v == "1" || v == "true");
        let floor = match baton_sandbox::support().missing() {
            None => FloorState::Enforced,
            Some(_) if waived => FloorState::Waived,
            Some(why) => FloorState::Unavailable(why),
        };
        Confinement {
            floor,
            read_denies: PathSet::default(),
            sandbox: None,
            sandbox_unavailable: None,
            floor_cache: Default::default(),
            guards: Default::default(),
            memory: Default::default(),
        }
    }

    /// Enforce Claude Code's `sandbox` settings (ignored unless
    /// `config.enabled`).
    pub fn with_sandbox(mut self, config: SandboxConfig) -> Confinement {
        if config.enabled {
            self.sandbox_unavailable = sandbox_mode::unavailable(&config);
            self.sandbox = Some(Arc::new(config));
        }
        self
    }

    /// The variables the enabled `sandbox` settings hide
    /// (`credentials.envVars`): left out of every command Baton confines,
    /// under the floor as under the settings sandbox.
    pub fn hidden_env(&self) -> &[String] {
        self.sandbox
            .as_ref()
            .map_or(&[], |c| c.hidden_env.as_slice())
    }

    /// Why the enabled sandbox cannot run here, and whether the settings
    /// say to refuse then (`failIfUnavailable`).
    pub fn sandbox_problem(&self) -> Option<(String, bool)> {
        let config = self.sandbox.as_ref()?;
        let why = self.sandbox_unavailable.clone()?;
        Some((why, config.fail_if_unavailable))
    }

    /// How the settings sandbox a Bash call running `command`, which asked
    /// to leave the sandbox when `asked_out` (`dangerouslyDisableSandbox`).
    pub fn choose(&self, command: &str, asked_out: bool) -> SandboxChoice {
        let Some(config) = &self.sandbox else {
            return SandboxChoice::Unsandboxed;
        };
        if config.is_excluded(command) {
            return SandboxChoice::Unsandboxed;
        }
        let note = match (asked_out, config.allow_unsandboxed_commands) {
            (true, true) => return SandboxChoice::Unsandboxed,
            (true, false) => Some(
                "dangerouslyDisableSandbox was ignored: the settings do not allow unsandboxed commands (sandbox.allowUnsandboxedCommands is false), so the command ran in the sandbox.".to_string(),
            ),
            _ => None,
        };
        match &self.sandbox_unavailable {
            Some(why) => SandboxChoice::Unavailable {
                why: why.clone(),
                fail: config.fail_if_unavailable,
            },
            None => SandboxChoice::Sandboxed { note },
        }
    }

    /// Whether a call with this input runs a shell command sandboxed and
    /// the settings let sandboxed commands run unasked
    /// (`autoAllowBashIfSandboxed`). Bash and the tools of other sets that
    /// do its job (`exec_command`: every tool of [`ToolKind::Shell`]) are
    /// judged alike, each with its own way of asking out of the sandbox.
    pub fn auto_allows(&self, kind: ToolKind, input: &Value) -> bool {
        if !self
            .sandbox
            .as_ref()
            .is_some_and(|c| c.auto_allow_bash_if_sandboxed)
        {
            return false;
        }
        // Only a shell tool has a command text.
        let Some(command) = kind.command_text(input) else {
            return false;
        };
        let command = command.as_str();
        // codex's tools ask out with `sandbox_permissions`.
        let asked_out = input
            .get("dangerouslyDisableSandbox")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            || input.get("sandbox_permissions").and_then(Value::as_str)
                == Some("require_escalated");
        matches!(
            self.choose(command, asked_out),
            SandboxChoice::Sandboxed { .. }
        )
    }

    /// The sandbox for one command under the settings, ready to enter.
    /// `tmp` is the session's temporary directory for sandboxed commands.
    pub fn prepare_sandbox(
        &self,
        context: &Context,
        tmp: &Path,
    ) -> Result<(Arc<Prepared>, SandboxPlan), String> {
        let Some(config) = &self.sandbox else {
            return Err("no sandbox settings are enabled".into());
        };
        let plan = sandbox_mode::plan(config, context, tmp, &self.memory)?;
        let prepared = match Prepared::new(&plan.policy, baton_sandbox::support()) {
            Ok(prepared) => prepared,
            Err(e) => {
                // Nothing will run: nothing to check after it.
                if let Some(guard) = &plan.guard {
                    guard.dismiss();
                }
                return Err(e.to_string());
            }
        };
        if let Some(guard) = &plan.guard {
            let mut guards = self.guards.lock();
            guards.retain(|g| g.strong_count() > 0);
            guards.push(Arc::downgrade(guard));
        }
        Ok((Arc::new(prepared), plan))
    }

    /// Runs the check of every sandboxed command still running (see
    /// [`protect::Guard::check`]): what they created that the sandbox does
    /// not allow is moved aside. For a host about to run something
    /// unsandboxed in the same workspace (an excluded command, one that
    /// left the sandbox), which could read a file planted there. The
    /// sentences to report (they are logged too).
    pub fn check_sandboxed(&self) -> Vec<String> {
        let live: Vec<Arc<protect::Guard>> = self
            .guards
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let mut notes: Vec<String> = Vec::new();
        for guard in live {
            for note in guard.check() {
                if !notes.contains(&note) {
                    tracing::warn!("sandbox: {note}");
                    notes.push(note);
                }
            }
        }
        notes
    }

    /// Accept classifier-only approval when the kernel cannot confine.
    pub fn waive_floor(mut self) -> Confinement {
        if matches!(self.floor, FloorState::Unavailable(_)) {
            self.floor = FloorState::Waived;
        }
        self
    }

    /// Carve these paths out of what the floor may read: the `deny_read`
    /// of [`crate::settings::Settings::sandbox_config`], which holds the
    /// `Read(…)` deny rules (and `sandbox.filesystem.denyRead`) as paths
    /// and patterns.
    pub fn with_read_denies(mut self, denies: PathSet) -> Confinement {
        self.read_denies = denies;
        self
    }

    /// Whether the read-only floor is enforced here.
    pub fn floor(&self) -> &FloorState {
        &self.floor
    }

    /// The session's confinement: the service when the host installed one,
    /// else what this kernel allows with no rules.
    pub fn of(services: &Extensions) -> Arc<Confinement> {
        static DETECTED: OnceLock<Arc<Confinement>> = OnceLock::new();
        services.get::<Confinement>().unwrap_or_else(|| {
            DETECTED
                .get_or_init(|| Arc::new(Confinement::detect()))
                .clone()
        })
    }

    /// What a command judged read-only may touch in `context`.
    pub fn floor_policy(&self, context: &Context) -> Policy {
        let mut read: Vec<PathBuf> = Policy::system_dirs();
        let workspace: Vec<PathBuf> = context
            .roots
            .iter()
            .chain(context.readable.iter())
            .map(|p| baton_tool::paths::resolve(p))
            .collect();
        read.extend(workspace.iter().cloned());
        read.extend(user_files());
        read.extend(program_dirs());
        let mut policy = Policy::read_only(read);
        let mut denied = self.read_denies.paths.clone();
        denied.extend(expand::expand(&self.read_denies.globs));
        policy.deny_read = denied;
        policy
    }

    /// The floor, ready for [`baton_process::Launch::confine`]. Kept for
    /// the next command in the same workspace (a prepared floor is only
    /// read by the children that enter it), unless `Read(…)` denies carve
    /// entries out: those name the entries that existed when it was built,
    /// and a denied file created since must not be readable, so such a
    /// floor is built for every command.
    pub fn prepare_floor(
        &self,
        context: &Context,
    ) -> Result<Arc<Prepared>, baton_sandbox::PrepareError> {
        let key = (context.roots.clone(), context.readable.clone());
        if let Some((k, prepared)) = self.floor_cache.lock().as_ref() {
            if *k == key && self.read_denies.is_empty() {
                return Ok(prepared.clone());
            }
        }
        let policy = self.floor_policy(context);
        let prepared = Prepared::new(&policy, baton_sandbox::support()).map(Arc::new)?;
        let complete = key.0.iter().chain(key.1.iter()).all(|p| p.exists());
        *self.floor_cache.lock() = complete.then(|| (key, prepared.clone()));
        Ok(prepared)
    }
}

/// The few per-user files read-only programs read (git's configuration),
/// never the rest of the home directory.
fn user_files() -> Vec<PathBuf> {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return Vec::new();
    };
    let mut files = vec![
        home.join(".gitconfig"),
        home.join(".config/git/config"),
        home.join(".config/git/ignore"),
        home.join(".config/git/attributes"),
    ];
    if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        files.push(xdg.join("git/config"));
        files.push(xdg.join("git/ignore"));
    }
    files.retain(|f| f.is_file());
    files
}

/// Directories on `PATH` outside the system ones (`~/.cargo/bin`), so that
/// programs installed there still start; never the home directory itself
/// or anything above it.
fn program_dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let Some(path) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
        .filter(|dir| dir.components().count() > 2)
        .filter(|dir| home.as_deref().is_none_or(|h| !h.starts_with(dir)))
        .filter(|dir| !is_shared_tmp(dir))
        .collect()
}

fn is_shared_tmp(dir: &Path) -> bool {
    dir.starts_with("/tmp") || dir.starts_with("/var/tmp") || dir.starts_with("/dev/shm")
}
