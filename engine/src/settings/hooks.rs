//! The sections of merged settings that hooks need: every file's `hooks`
//! section, the `env` block and `enabledPlugins`, combined the way Claude
//! Code combines them. The merge ([`super::merge`]) hands each file's JSON here and asks
//! for the result once every file is read, because every hook (a plugin's
//! too) runs with the environment of all files merged.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::plugins::{config_dir, enabled_plugin_hooks, enabled_plugin_roots};
use crate::hooks::config::{parse_hooks, HookSource};
use crate::hooks::{Hook, HookEnv, McpToolSlot, ModelHookSlot};

/// Hook-related settings gathered file by file.
#[derive(Default, Debug)]
pub struct HookLayers {
    sections: Vec<(PathBuf, Value)>,
    /// `env`, later files overriding earlier ones, in first-set order.
    env: Vec<(String, String)>,
    /// `enabledPlugins`: the last file's word on each plugin wins.
    plugins: Vec<(String, bool)>,
    warnings: Vec<String>,
}

/// What the hook layers yield.
pub struct LoadedHooks {
    /// Every hook of every file and enabled plugin, in precedence order.
    pub hooks: Vec<Arc<dyn Hook>>,
    /// The merged `env` block the command hooks run with.
    pub env: Vec<(String, String)>,
    /// Where the host installs the model `prompt`/`agent` hooks ask.
    pub models: ModelHookSlot,
    /// Where the host installs the MCP client `mcp_tool` hooks call.
    pub mcp: McpToolSlot,
    /// Entries left out, and why, for the user.
    pub warnings: Vec<String>,
    /// Enabled, installed plugins: `(name, root)`.
    pub plugin_roots: Vec<(String, PathBuf)>,
}

// Not derived: hooks are trait objects; their number stands for them.
baton_tool::debug_fields! {
    LoadedHooks as this {
        hooks: this.hooks.len(), env, warnings, plugin_roots, ..
    }
}

impl HookLayers {
    /// Takes what hooks need from one file (lowest precedence first).
    pub fn add_file(&mut self, file: &Path, root: &Map<String, Value>) {
        match root.get("hooks") {
            None | Some(Value::Null) => {}
            Some(value) => self.sections.push((file.to_path_buf(), value.clone())),
        }
        match root.get("env") {
            None | Some(Value::Null) => {}
            Some(Value::Object(vars)) => {
                for (key, value) in vars {
                    let value = match value {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        other => {
                            self.warnings.push(format!(
                                "{}: env.{key} must be a string, not {other}; it was ignored",
                                file.display()
                            ));
                            continue;
                        }
                    };
                    if key.is_empty()
                        || key.contains('=')
                        || key.contains('\0')
                        || value.contains('\0')
                    {
                        self.warnings.push(format!(
                            "{}: env.{key:?} is not a usable variable; it was ignored",
                            file.display()
                        ));
                        continue;
                    }
                    set(&mut self.env, key, value);
                }
            }
            Some(_) => self.warnings.push(format!(
                "{}: `env` must be an object of strings; it was ignored",
                file.display()
            )),
        }
        match root.get("enabledPlugins") {
            None | Some(Value::Null) => {}
            Some(Value::Object(plugins)) => {
                for (id, on) in plugins {
                    // Claude Code also accepts a version list; present and
                    // not `false` means enabled.
                    let on = !matches!(on, Value::Bool(false) | Value::Null);
                    set(&mut self.plugins, id, on);
                }
            }
            Some(_) => self.warnings.push(format!(
                "{}: `enabledPlugins` must be an object; it was ignored",
                file.display()
            )),
        }
    }

    /// Parses every file's hooks, then the enabled plugins' hooks, all with
    /// the merged environment.
    pub fn finish(self, project: &Path, home: Option<&Path>) -> LoadedHooks {
        let env = Arc::new(self.env.clone());
        let models = ModelHookSlot::default();
        let mcp = McpToolSlot::default();
        let mut warnings = self.warnings;
        let mut hooks = Vec::new();
        let base = HookSource {
            env: HookEnv {
                project_dir: project.to_path_buf(),
                vars: env.clone(),
                plugin_root: None,
            },
            home: home.map(Path::to_path_buf),
            models: models.clone(),
            mcp: mcp.clone(),
        };
        for (file, section) in &self.sections {
            let parsed = parse_hooks(section, &base);
            warnings.extend(
                parsed
                    .warnings
                    .into_iter()
                    .map(|w| format!("{}: {w}", file.display())),
            );
            hooks.extend(parsed.hooks);
        }
        let enabled: Vec<String> = self
            .plugins
            .iter()
            .filter(|(_, on)| *on)
            .map(|(id, _)| id.clone())
            .collect();
        let plugin_roots = enabled_plugin_roots(&enabled, config_dir(home).as_deref(), project);
        let (plugins, plugin_warnings) =
            enabled_plugin_hooks(&enabled, config_dir(home).as_deref(), project);
        warnings.extend(plugin_warnings);
        for plugin in plugins {
            let mut source = base.clone();
            source.env.plugin_root = Some(plugin.root.clone());
            let parsed = parse_hooks(&plugin.hooks, &source);
            warnings.extend(
                parsed
                    .warnings
                    .into_iter()
                    .map(|w| format!("{} (plugin {}): {w}", plugin.file.display(), plugin.id)),
            );
            hooks.extend(parsed.hooks);
        }
        LoadedHooks {
            hooks,
            env: self.env,
            models,
            mcp,
            warnings,
            plugin_roots,
        }
    }
}

/// Sets `key` in `pairs`, kept in first-seen order: a later file's value
/// replaces an earlier one's in place.
fn set<V>(pairs: &mut Vec<(String, V)>, key: &str, value: V) {
    match pairs.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => pairs.push((key.to_string(), value)),
    }
}
