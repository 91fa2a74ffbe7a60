//! One file at a time into the merged settings: the `permissions` block
//! (rules, mode, directories, the bypass switch) read here, the `sandbox`
//! block handed to [`super::sandbox`], the hook, `env` and plugin sections
//! to [`super::hooks`].

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::hooks::HookLayers;
use super::sandbox::{self, SandboxSettings, SettingsSource};
use super::SettingsProblem;
use crate::permission::legacy::{self, Reading};
use crate::permission::rules::{Rule, RuleKind};
use crate::permission::RulePolicy;
use baton_tool::permission::PermissionMode;

#[derive(Default)]
pub(super) struct Merged {
    pub(super) policy: RulePolicy,
    pub(super) mode: Option<PermissionMode>,
    pub(super) directories: Vec<PathBuf>,
    pub(super) hook_layers: HookLayers,
    /// Each file's `sandbox` block, merged at the end.
    pub(super) sandbox: Vec<SandboxSettings>,
    pub(super) problems: Vec<SettingsProblem>,
    pub(super) warnings: Vec<String>,
    pub(super) disable_skill_shell: bool,
}

impl Merged {
    fn problem(&mut self, file: &Path, message: String) {
        self.problems.push(SettingsProblem {
            file: file.to_path_buf(),
            message,
        });
    }

    pub(super) fn add_file(
        &mut self,
        file: &Path,
        text: &str,
        project: &Path,
        home: Option<&Path>,
    ) {
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
            let parsed = sandbox::parse_block(file, source, block, project, home);
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
    Ok(baton_tool::paths::normalize(&path))
}
