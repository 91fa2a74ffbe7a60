//! Settings files in one call.
//!
//! A host (or the CLI) should not repeat the steps that turn Claude Code
//! settings files into an engine: merge the files in Claude Code's order,
//! build the rule policy, load every hook (the files' and the enabled
//! plugins'), drop tools a deny rule removes whole, add the extra
//! directories, take the mode, and apply the `env` block. [`Engine::configured`]
//! does all of it; [`EngineBuilder::settings`] applies settings a host
//! loaded itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::confine::{Confinement, FloorState};
use baton_engine::permission::{Settings, SettingsError};
use baton_engine::PermissionPolicy;

use crate::{Engine, EngineBuilder};

/// Settings that could not be turned into an engine.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// A settings file is unreadable or not JSON (each problem named).
    Settings(SettingsError),
    /// The built-in tools could not be assembled.
    Tools(String),
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Settings(e) => e.fmt(f),
            ConfigError::Tools(e) => write!(f, "the built-in tools could not be assembled: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<SettingsError> for ConfigError {
    fn from(e: SettingsError) -> Self {
        ConfigError::Settings(e)
    }
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

impl Engine {
    /// Loads the settings files for a session in `cwd` (user, project,
    /// local, then `explicit`), and returns a builder for the built-in
    /// tools configured by them, with the settings (for their warnings and
    /// the model-hook slot). Set anything else on the builder, then build.
    pub fn configured(
        cwd: &Path,
        explicit: Option<&Path>,
    ) -> Result<(EngineBuilder, Settings), ConfigError> {
        let cwd: PathBuf = cwd.to_path_buf();
        let mut settings = Settings::load(&cwd, explicit)?;
        let warnings = confinement_warnings(&settings, &cwd);
        settings.warnings.extend(warnings);
        let pool = crate::builtins::builtin_pool(&*settings.policy).map_err(ConfigError::Tools)?;
        let builder = Engine::builder(pool).cwd(&cwd).settings(&settings);
        Ok((builder, settings))
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
