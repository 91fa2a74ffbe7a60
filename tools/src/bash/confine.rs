//! The kernel confinement of one shell (see `baton_engine::confine`).

use std::sync::Arc;

use baton_engine::confine::protect::Guard;
use baton_engine::confine::{Approval, Confinement, Egress, FloorState, SandboxChoice};
use baton_engine::process::Launch;
use baton_engine::sandbox::proxy::Proxy;
use baton_engine::sandbox::Prepared;
use baton_engine::ToolContext;

use super::tool::BashInput;

/// How one shell is confined.
pub(crate) struct Confined {
    pub(crate) prepared: Arc<Prepared>,
    pub(crate) egress: Egress,
    /// Variables to set and to leave out.
    pub(crate) env: Vec<(String, String)>,
    pub(crate) hidden_env: Vec<String>,
    /// Said to the model with the result.
    pub(crate) note: Option<String>,
    /// The check for what the command created that the sandbox does not
    /// allow (settings sandbox only); whoever holds the running command
    /// holds it too, and its last holder checks when letting go.
    pub(crate) guard: Option<Arc<Guard>>,
    /// Held until the command's child runs (see `protect::Starting`).
    starting: parking_lot::Mutex<Option<Arc<baton_engine::confine::protect::Starting>>>,
}

impl Confined {
    /// The floor, hiding what the settings hide: a command judged
    /// read-only (`env`, `printenv`) must not show a variable that a
    /// sandboxed command may not see.
    fn floor(prepared: Arc<Prepared>, hidden_env: &[String]) -> Confined {
        Confined {
            prepared,
            egress: Egress::None,
            // git takes optional locks (`git status` refreshing the index)
            // that the floor would refuse anyway: it is told not to try.
            env: vec![("GIT_OPTIONAL_LOCKS".into(), "0".into())],
            hidden_env: hidden_env.to_vec(),
            note: None,
            guard: None,
            starting: Default::default(),
        }
    }

    /// Puts the confinement on a shell about to start: its variables, the
    /// ones it must not see, and the kernel policy entered in the child.
    /// One place, so Bash, `exec_command` and `Monitor` confine alike.
    pub(crate) fn apply(&self, launch: &mut Launch) {
        for (key, value) in &self.env {
            launch.env(key, value);
        }
        for key in &self.hidden_env {
            launch.env_remove(key);
        }
        launch.confine(self.prepared.clone());
    }

    /// Starts what the command's network needs once it runs: Baton's
    /// proxy serving the listeners the command's namespace holds. Dropping
    /// the returned proxy ends its connections.
    pub(crate) fn start_egress(&self) -> std::io::Result<Option<Proxy>> {
        // Called once the child runs: its start is over.
        self.starting.lock().take();
        let Egress::Proxy(rules) = &self.egress else {
            return Ok(None);
        };
        let listeners = self.prepared.take_listeners()?;
        let proxy = Proxy::builder(rules.clone()).start()?;
        for (i, listener) in listeners.into_iter().enumerate() {
            // In the order of `sandbox_mode`: HTTP, then SOCKS.
            if i == 0 {
                proxy.serve_http_listener(listener)?;
            } else {
                proxy.serve_socks_listener(listener)?;
            }
        }
        Ok(Some(proxy))
    }
}

/// The confinement of this call's shell, if any. An error is the text of a
/// refusal: the command is not run unconfined instead.
pub(crate) fn sandbox_for(
    input: &BashInput,
    ctx: &ToolContext,
) -> Result<Option<Confined>, String> {
    let asked_out = input.dangerously_disable_sandbox.unwrap_or(false);
    sandbox_for_command(&input.command, asked_out, ctx)
}

/// [`sandbox_for`] for any tool that runs a shell command (`exec_command`,
/// `Monitor`): the same choice, so no shell tool is a way out of the
/// sandbox.
pub(crate) fn sandbox_for_command(
    command: &str,
    asked_out: bool,
    ctx: &ToolContext,
) -> Result<Option<Confined>, String> {
    let confinement = Confinement::of(&ctx.services);
    if ctx.approval == Approval::ReadOnlyJudgement {
        let hidden = confinement.hidden_env();
        return floor(&confinement, ctx).map(|p| p.map(|p| Confined::floor(p, hidden)));
    }
    match confinement.choose(command, asked_out) {
        SandboxChoice::Unsandboxed => {
            // What sandboxed commands still running created goes before an
            // unsandboxed one can read it (a plant for `git`, say); the
            // engine logs what it moved.
            confinement.check_sandboxed();
            Ok(None)
        }
        SandboxChoice::Unavailable { why, fail: true } => Err(format!(
            "The sandbox settings require every command to run sandboxed (sandbox.failIfUnavailable), but the sandbox is unavailable here ({why}), so the command was not run."
        )),
        // The settings accept running unsandboxed; the permission stage
        // did not let it run unasked on the sandbox's account.
        SandboxChoice::Unavailable { fail: false, .. } => Ok(None),
        SandboxChoice::Sandboxed { note } => {
            let tmp = ctx.session.state_dir().join("sandbox-tmp");
            let (prepared, plan) = confinement.prepare_sandbox(&ctx.context, &tmp).map_err(|e| {
                format!("The sandbox for this command could not be prepared ({e}), so it was not run.")
            })?;
            Ok(Some(Confined {
                prepared,
                egress: plan.egress,
                env: plan.env,
                hidden_env: plan.hidden_env,
                note,
                guard: plan.guard,
                starting: parking_lot::Mutex::new(plan.starting),
            }))
        }
    }
}

fn floor(confinement: &Confinement, ctx: &ToolContext) -> Result<Option<Arc<Prepared>>, String> {
    match confinement.floor() {
        FloorState::Waived => Ok(None),
        FloorState::Unavailable(why) => Err(format!(
            "The command was judged read-only, but the OS sandbox that must confine such commands is unavailable ({why}), so it was not run."
        )),
        FloorState::Enforced => confinement
                .prepare_floor(&ctx.context)
                .map(Some)
                .map_err(|e| {
                    format!("The command was judged read-only, but the OS sandbox that must confine it could not be prepared ({e}), so it was not run.")
                }),
    }
}

/// Runs `guard`'s check off the runtime's workers (it walks the
/// workspace): the final one when `over` (nothing of the command runs any
/// more), else one more that leaves the final to the guard's last holder.
/// The sentences for the result.
pub(crate) async fn check_protected(guard: Arc<Guard>, over: bool) -> Vec<String> {
    let checked =
        tokio::task::spawn_blocking(move || if over { guard.finish() } else { guard.check() })
            .await;
    checked.unwrap_or_else(|e| {
        vec![format!(
            "WARNING: the sandbox's check for protected files the command created failed ({e}); check the workspace before running git or starting a session here."
        )]
    })
}
