//! The session's settings: loading Claude Code settings files, merging them,
//! and the typed sections every stage takes from them (permission rules,
//! hooks, `env`, the `sandbox` block, enabled plugins).
//!
//! Every consumer asks here: the pipeline (rules, hooks), confinement (the
//! sandbox block), the MCP loader (which files hold its enable keys, see
//! [`settings_files`]), skills and agents (the plugin roots).
//!
//! Files are read in Claude Code's order, lowest precedence first:
//! `~/.claude/settings.json` (user), `<project>/.claude/settings.json`
//! (project), `<project>/.claude/settings.local.json` (local), then an
//! explicit `--settings` file. Rule lists, additional directories and hooks
//! accumulate across files (so a deny in any file holds); a scalar such as
//! `permissions.defaultMode` is taken from the last file that sets it.
//!
//! Every problem in every file is collected and reported together, each with
//! its file, so a user fixes their settings in one pass. Keys Baton does not
//! use (`env`, `model`, other hook events…) are ignored, so a user's existing
//! file loads unchanged; ignoring something that changes behaviour is noted
//! in [`Settings::warnings`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod files;
pub mod hooks;
mod merge;
pub mod plugins;
pub mod sandbox;

pub use files::{settings_files, SettingsFile};
pub use sandbox::{SandboxConfig, SandboxSettings};

use crate::hooks::{HookRegistry, ModelHookSlot};
use crate::permission::paths::absolute;
use crate::permission::RulePolicy;
use baton_tool::context::Context;
use baton_tool::permission::PermissionMode;
use merge::Merged;

/// One problem in one settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsProblem {
    /// The file with the problem.
    pub file: PathBuf,
    /// What is wrong, and where in the file.
    pub message: String,
}

/// Settings that could not be loaded; lists every problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError {
    /// Every problem, file by file.
    pub problems: Vec<SettingsProblem>,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid settings:")?;
        for p in &self.problems {
            write!(f, "\n  {}: {}", p.file.display(), p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for SettingsError {}

/// The merged settings: everything the permission and hook stages need.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The permission rules of every file, in precedence order.
    pub policy: Arc<RulePolicy>,
    /// `permissions.defaultMode` of the last file that set it.
    pub mode: PermissionMode,
    /// `permissions.additionalDirectories`, made absolute.
    pub additional_directories: Vec<PathBuf>,
    /// The hooks of every file and enabled plugin.
    pub hooks: HookRegistry,
    /// The merged `env` block: for hooks, shell commands and MCP servers.
    pub env: Vec<(String, String)>,
    /// Where the host installs a model for `prompt`/`agent` hooks.
    pub model_hooks: ModelHookSlot,
    /// Where the host installs its MCP client for `mcp_tool` hooks.
    pub mcp_hooks: crate::hooks::McpToolSlot,
    /// The project root (`/` anchors of path rules, `CLAUDE_PROJECT_DIR`).
    pub project_dir: PathBuf,
    /// The merged `sandbox` block (see [`sandbox`]); the sandbox
    /// itself takes [`Settings::sandbox_config`].
    pub sandbox: SandboxSettings,
    /// The home directory the files were read with (`~` in paths).
    pub home: Option<PathBuf>,
    /// The files that were read, in merge order.
    pub files: Vec<PathBuf>,
    /// Things ignored on purpose that the user may want to know about.
    pub warnings: Vec<String>,
    /// Enabled, installed plugins as `(name, root)`: where their skills are.
    pub plugin_roots: Vec<(String, PathBuf)>,
    /// `disableSkillShellExecution`: skills' `` !`command` `` blocks are not
    /// run. Set by any file (it only makes things stricter).
    pub disable_skill_shell: bool,
}

impl Settings {
    /// Loads the standard files for `project_dir` plus `explicit`, with the
    /// home directory from `$HOME`.
    pub fn load(project_dir: &Path, explicit: Option<&Path>) -> Result<Settings, SettingsError> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        Settings::load_with_home(project_dir, home.as_deref(), explicit)
    }

    /// Like [`Settings::load`] with an explicit home directory (`None`: no
    /// user settings, and `~` in rules is an error).
    pub fn load_with_home(
        project_dir: &Path,
        home: Option<&Path>,
        explicit: Option<&Path>,
    ) -> Result<Settings, SettingsError> {
        let mut problems = Vec::new();
        let mut layers = Vec::new();
        for (path, read) in files::read_all(project_dir, home, explicit) {
            match read {
                Ok(text) => layers.push((path, text)),
                Err(message) => problems.push(SettingsProblem {
                    file: path,
                    message,
                }),
            }
        }
        let mut settings = Settings::from_layers(&layers, project_dir, home);
        if let Err(e) = &mut settings {
            problems.append(&mut e.problems);
        }
        if problems.is_empty() {
            settings
        } else {
            Err(SettingsError { problems })
        }
    }

    /// Merges settings given as `(file name, JSON text)`, lowest precedence
    /// first. The names only label messages.
    pub fn from_layers(
        layers: &[(PathBuf, String)],
        project_dir: &Path,
        home: Option<&Path>,
    ) -> Result<Settings, SettingsError> {
        let project_dir = &absolute(project_dir);
        let home = home.map(absolute);
        let home = home.as_deref();
        let mut merged = Merged::default();
        for (file, text) in layers {
            merged.add_file(file, text, project_dir, home);
        }
        if !merged.problems.is_empty() {
            return Err(SettingsError {
                problems: merged.problems,
            });
        }
        let loaded = merged.hook_layers.finish(project_dir, home);
        merged.warnings.extend(loaded.warnings);
        let (sandbox, sandbox_warnings) = SandboxSettings::merge(merged.sandbox);
        merged.warnings.extend(sandbox_warnings);
        Ok(Settings {
            policy: Arc::new(merged.policy),
            mode: merged.mode.unwrap_or_default(),
            additional_directories: merged.directories,
            hooks: HookRegistry::new(loaded.hooks),
            env: loaded.env,
            model_hooks: loaded.models,
            mcp_hooks: loaded.mcp,
            project_dir: project_dir.to_path_buf(),
            sandbox,
            home: home.map(Path::to_path_buf),
            files: layers.iter().map(|(f, _)| f.clone()).collect(),
            warnings: merged.warnings,
            plugin_roots: loaded.plugin_roots,
            disable_skill_shell: merged.disable_skill_shell,
        })
    }

    /// Workspace roots for a session started in `cwd`: `cwd` first, then
    /// the additional directories.
    pub fn roots(&self, cwd: &Path) -> Vec<PathBuf> {
        let mut roots = vec![cwd.to_path_buf()];
        for dir in &self.additional_directories {
            if !roots.contains(dir) {
                roots.push(dir.clone());
            }
        }
        roots
    }

    /// A context for a session started in `cwd`, with these roots and mode.
    pub fn context(&self, cwd: &Path) -> Context {
        Context::new(cwd)
            .with_roots(self.roots(cwd))
            .with_mode(self.mode)
    }

    /// What the sandbox enforces for a session started in `cwd`: the
    /// `sandbox` block merged with the permission rules, every workspace
    /// root writable, and the settings files themselves write-protected.
    pub fn sandbox_config(&self, cwd: &Path) -> SandboxConfig {
        let mut config = self.sandbox.effective_in(
            &self.policy,
            &self.project_dir,
            &self.roots(cwd),
            self.home.as_deref(),
        );
        for file in &self.files {
            let file = absolute(file);
            if !config.deny_write.paths.contains(&file) {
                config.deny_write.paths.push(file);
            }
        }
        config
    }
}
