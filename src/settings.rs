//! Settings files in one call.
//!
//! A host (or the CLI) should not repeat the steps that turn Claude Code
//! settings files into an engine: merge the files in Claude Code's order,
//! build the rule policy, load every hook (the files' and the enabled
//! plugins'), drop tools a deny rule removes whole, add the extra
//! directories, take the mode, and apply the `env` block. [`Engine::configured`]
//! does all of it (one path with the CLI's, see [`crate::assembly`]);
//! [`EngineBuilder::settings`] applies settings a host loaded itself.

use std::path::Path;
use std::sync::Arc;

use baton_engine::confine::{Confinement, FloorState};
use baton_engine::settings::{Settings, SettingsError};
use baton_engine::PermissionPolicy;

use crate::EngineBuilder;

/// Settings that could not be turned into an engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A settings file is unreadable or not JSON (each problem named).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A built-in tool could not be built (its derived schema does not
    /// compile: a bug in Baton).
    #[error("the built-in tools could not be assembled: {0}")]
    Tools(#[source] baton_engine::schema::InvalidSchema),
    /// The tools named for remote workers could not be routed there.
    #[error("remote tools: {0}")]
    Remote(#[source] crate::remote::RemoteError),
}

impl EngineBuilder {
    /// Applies loaded settings: the rule policy, every hook (added after
    /// any set before), the mode, the additional directories and the `env`
    /// block (for Bash commands and hooks).
    pub fn settings(mut self, settings: &Settings) -> Self {
        let hooks = match self.hooks.take() {
            Some(mine) => mine.extended(&settings.hooks),
            None => settings.hooks.clone(),
        };
        self.env = settings.env.clone();
        let cwd = self
            .cwd
            .clone()
            .unwrap_or_else(|| settings.project_dir.clone());
        let sandbox = settings.sandbox_config(&cwd);
        let confinement = Confinement::detect()
            .with_read_denies(sandbox.deny_read.clone())
            .with_sandbox(sandbox);
        self.hooks(hooks)
            .policy(settings.policy.clone() as Arc<dyn PermissionPolicy>)
            .permission_mode(settings.mode)
            .additional_roots(settings.additional_directories.clone())
            .confinement(confinement)
    }
}

/// What the session's confinement warns about at start: the enabled
/// sandbox settings that cannot run here, and a floor the kernel cannot
/// enforce. The library ([`Engine::configured`]) and the CLI add these to
/// the settings' warnings the same way.
pub fn confinement_warnings(settings: &Settings, cwd: &Path) -> Vec<String> {
    let confinement = Confinement::detect().with_sandbox(settings.sandbox_config(cwd));
    let mut warnings = Vec::new();
    if let Some((why, fail)) = confinement.sandbox_problem() {
        warnings.push(if fail {
            format!("the sandbox settings are enabled but the sandbox is unavailable here ({why}); with sandbox.failIfUnavailable, every Bash command will be refused")
        } else {
            format!("the sandbox settings are enabled but the sandbox is unavailable here ({why}); Bash commands run unsandboxed and ask as usual")
        });
    }
    if let FloorState::Unavailable(why) = confinement.floor() {
        warnings.push(format!(
            "the OS sandbox is unavailable ({why}): commands judged read-only will ask before running; set {}=1 to run them on the classifier's judgement alone",
            baton_engine::confine::WAIVE_VAR
        ));
    }
    warnings
}
