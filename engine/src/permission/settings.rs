//! Loading and merging Claude Code settings files.
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

use serde_json::{Map, Value};

use super::legacy::{self, Reading};
use super::paths::absolute;
use super::policy::RulePolicy;
use super::rules::{Rule, RuleKind};
use super::sandbox_settings::{self, SandboxConfig, SandboxSettings, SettingsSource};
use super::PermissionMode;
use crate::context::Context;
use crate::hooks::loader::HookLayers;
use crate::hooks::{HookRegistry, ModelHookSlot};
use crate::pipeline::Pipeline;

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
    /// The merged `sandbox` block (see [`sandbox_settings`]); the sandbox
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
        let mut candidates: Vec<(PathBuf, bool)> = Vec::new();
        if let Some(home) = home {
            candidates.push((home.join(".claude/settings.json"), false));
        }
        candidates.push((project_dir.join(".claude/settings.json"), false));
        candidates.push((project_dir.join(".claude/settings.local.json"), false));
        if let Some(explicit) = explicit {
            candidates.push((explicit.to_path_buf(), true));
        }
        let mut layers = Vec::new();
        let mut problems = Vec::new();
        let mut seen: Vec<PathBuf> = Vec::new();
        for (path, required) in candidates {
            // When the project is the home directory, user and project
            // settings are one file: read it once.
            let identity = path.canonicalize().unwrap_or_else(|_| path.clone());
            if seen.contains(&identity) {
                continue;
            }
            seen.push(identity);
            match std::fs::read_to_string(&path) {
                Ok(text) => layers.push((path, text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {}
                Err(e) => problems.push(SettingsProblem {
                    file: path,
                    message: format!("cannot read the file: {e}"),
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

    /// `pipeline` with this policy and these hooks (added to its own).
    pub fn configure(&self, pipeline: Pipeline) -> Pipeline {
        let mut hooks = pipeline.hooks().clone();
        for hook in self.hooks.iter() {
            hooks = hooks.with(hook.clone());
        }
        pipeline.with_policy(self.policy.clone()).with_hooks(hooks)
    }
}

#[derive(Default)]
struct Merged {
    policy: RulePolicy,
    mode: Option<PermissionMode>,
    directories: Vec<PathBuf>,
    hook_layers: HookLayers,
    /// Each file's `sandbox` block, merged at the end.
    sandbox: Vec<SandboxSettings>,
    problems: Vec<SettingsProblem>,
    warnings: Vec<String>,
    disable_skill_shell: bool,
}

impl Merged {
    fn problem(&mut self, file: &Path, message: String) {
        self.problems.push(SettingsProblem {
            file: file.to_path_buf(),
            message,
        });
    }

    fn add_file(&mut self, file: &Path, text: &str, project: &Path, home: Option<&Path>) {
        if text.trim().is_empty() {
            return;
        }
        let root: Map<String, Value> = match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return self.problem(file, "the file must hold a JSON object".into()),
            Err(e) => return self.problem(file, format!("not valid JSON: {e}")),
        };
        // Some files put the switch at the top level; honour it there too
        // (it can only make things stricter).
        if root.contains_key("disableBypassPermissionsMode") {
            self.bypass_switch(file, root.get("disableBypassPermissionsMode"));
        }
        match root.get("disableSkillShellExecution") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => self.disable_skill_shell |= *b,
            Some(_) => self.problem(
                file,
                "`disableSkillShellExecution` must be true or false".into(),
            ),
        }
        match root.get("permissions") {
            None | Some(Value::Null) => {}
            Some(Value::Object(perms)) => self.add_permissions(file, perms, project, home),
            Some(_) => self.problem(file, "`permissions` must be an object".into()),
        }
        if let Some(block) = root.get("sandbox") {
            let source = SettingsSource::of(file, project, home);
            let parsed = sandbox_settings::parse_block(file, source, block, project, home);
            for message in parsed.problems {
                self.problem(file, message);
            }
            for message in parsed.warnings {
                self.warn(file, message);
            }
            self.sandbox.push(parsed.layer);
        }
        // Hooks, `env` and plugins: a bad hook entry is skipped with a
        // warning there, never a reason to reject the file.
        self.hook_layers.add_file(file, &root);
    }

    fn add_permissions(
        &mut self,
        file: &Path,
        perms: &Map<String, Value>,
        project: &Path,
        home: Option<&Path>,
    ) {
        for kind in [RuleKind::Allow, RuleKind::Ask, RuleKind::Deny] {
            let key = kind.as_str();
            for text in self.strings(file, perms, key) {
                match Rule::parse(&text, kind, home, project) {
                    Ok(rule) => self.policy.push(rule.with_source(file)),
                    // Real files hold old spellings and mistakes: each entry
                    // is read alone, never more widely than written.
                    Err(e) => match legacy::read(&text, kind, home, project, &e.message) {
                        Reading::Rule(rule, note) => {
                            self.policy.push((*rule).with_source(file));
                            if let Some(note) = note {
                                self.warn(file, format!("permissions.{key}: {note}"));
                            }
                        }
                        Reading::Skipped(why) => {
                            self.warn(file, format!("permissions.{key}: {why}"))
                        }
                    },
                }
            }
        }
        match perms.get("defaultMode") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => match s.parse::<PermissionMode>() {
                Ok(mode) => self.mode = Some(mode),
                // Claude Code's newer modes (`auto`) and misspellings: the
                // default mode asks for anything not read-only, which is
                // never looser than what the user meant, except plan.
                Err(e) if s.eq_ignore_ascii_case("plan") => {
                    self.mode = Some(PermissionMode::Plan);
                    self.warn(
                        file,
                        format!("permissions.defaultMode: {e}; read as `plan`"),
                    );
                }
                Err(e) => self.warn(
                    file,
                    format!("permissions.defaultMode: {e}; the default mode is used"),
                ),
            },
            Some(_) => self.problem(file, "permissions.defaultMode must be a string".into()),
        }
        self.bypass_switch(file, perms.get("disableBypassPermissionsMode"));
        for dir in self.strings(file, perms, "additionalDirectories") {
            match expand_dir(&dir, project, home) {
                Ok(path) => {
                    // A root that one `mkdir` will create (its parent
                    // exists) is a normal first-run state, e.g. a scratch
                    // directory the first call makes; rules are judged when
                    // calls come, so it needs no warning. A root whose
                    // parent is missing too is more likely a typo.
                    let parent_exists = path.parent().is_some_and(Path::is_dir);
                    if !path.is_dir() && !parent_exists {
                        self.warnings.push(format!(
                            "{}: additional directory `{}` does not exist, nor does its parent",
                            file.display(),
                            path.display()
                        ));
                    }
                    if !self.directories.contains(&path) {
                        self.directories.push(path);
                    }
                }
                // Fewer roots only ever means more questions.
                Err(message) => self.warn(
                    file,
                    format!("permissions.additionalDirectories `{dir}` is ignored: {message}"),
                ),
            }
        }
    }

    fn warn(&mut self, file: &Path, message: String) {
        self.warnings.push(format!("{}: {message}", file.display()));
    }

    /// `disableBypassPermissionsMode: "disable"` makes bypassPermissions
    /// unavailable, whichever file says it (any layer may only tighten).
    fn bypass_switch(&mut self, file: &Path, value: Option<&Value>) {
        match value {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s == "disable" => self.policy.disable_bypass(format!(
                "`disableBypassPermissionsMode: \"disable\"` in {}",
                file.display()
            )),
            Some(other) => self.warn(
                file,
                format!(
                    "disableBypassPermissionsMode: `{other}` is ignored; the only value is \"disable\""
                ),
            ),
        }
    }

    /// `perms[key]` as a list of strings; anything else is a problem.
    fn strings(&mut self, file: &Path, perms: &Map<String, Value>, key: &str) -> Vec<String> {
        match perms.get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        other => self.warn(
                            file,
                            format!(
                                "permissions.{key}[{i}] is ignored: it must be a string, found {other}"
                            ),
                        ),
                    }
                }
                out
            }
            // A single rule written without the list around it.
            Some(Value::String(s)) => {
                self.warn(
                    file,
                    format!("permissions.{key} should be a list; read as the list [{s:?}]"),
                );
                vec![s.clone()]
            }
            Some(_) => {
                self.warn(
                    file,
                    format!("permissions.{key} is ignored: it must be an array of strings"),
                );
                Vec::new()
            }
        }
    }
}

fn expand_dir(dir: &str, project: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    let dir = dir.trim();
    if dir.is_empty() {
        return Err("empty path".into());
    }
    let path = if dir == "~" || dir.starts_with("~/") {
        let home = home.ok_or("uses `~` but no home directory is known")?;
        home.join(dir.trim_start_matches('~').trim_start_matches('/'))
    } else {
        project.join(dir)
    };
    Ok(crate::paths::normalize(&path))
}
