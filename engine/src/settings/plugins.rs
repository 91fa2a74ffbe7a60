//! Hooks shipped by Claude Code plugins.
//!
//! Most published hook setups come as plugins: settings list them under
//! `enabledPlugins` (`"name@marketplace": true`), Claude Code installs them
//! under `~/.claude/plugins/` (or `$CLAUDE_CONFIG_DIR/plugins/`) and records
//! where in `installed_plugins.json`; a plugin's hooks are in its
//! `hooks/hooks.json` (or named by `.claude-plugin/plugin.json`) and run with
//! `CLAUDE_PLUGIN_ROOT` set to the plugin's directory. Without this, a guard
//! written as `node "${CLAUDE_PLUGIN_ROOT}/guard.js"` runs `node /guard.js`,
//! fails, and stops guarding.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One enabled plugin's hooks, found on disk.
#[derive(Clone, Debug)]
pub struct PluginHooks {
    /// `name@marketplace`.
    pub id: String,
    /// Its install directory (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// The file the hooks came from (for messages).
    pub file: PathBuf,
    /// The events object (`{"PreToolUse": [...]}`).
    pub hooks: Value,
}

/// Claude Code's configuration directory: `$CLAUDE_CONFIG_DIR`, else
/// `~/.claude`.
pub fn config_dir(home: Option<&Path>) -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => home.map(|h| h.join(".claude")),
    }
}

/// The hooks of every enabled plugin, plus a warning for each enabled
/// plugin that is not installed or whose hooks cannot be read.
pub fn enabled_plugin_hooks(
    enabled: &[String],
    config_dir: Option<&Path>,
    project: &Path,
) -> (Vec<PluginHooks>, Vec<String>) {
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    if enabled.is_empty() {
        return (found, warnings);
    }
    let Some(config_dir) = config_dir else {
        warnings.push(format!(
            "enabledPlugins names {} plugin(s), but no home directory is known to find them in; their hooks are not loaded",
            enabled.len()
        ));
        return (found, warnings);
    };
    let plugins_dir = config_dir.join("plugins");
    let installed = read_installed(&plugins_dir.join("installed_plugins.json"));
    for id in enabled {
        let Some(root) = locate(id, &installed, &plugins_dir, project) else {
            warnings.push(format!(
                "enabled plugin `{id}` is not installed under {}; its hooks are not loaded",
                plugins_dir.display()
            ));
            continue;
        };
        match hooks_of(&root) {
            Ok(Some((file, hooks))) => found.push(PluginHooks {
                id: id.clone(),
                root,
                file,
                hooks,
            }),
            Ok(None) => {}
            Err(problem) => warnings.push(format!("plugin `{id}`: {problem}")),
        }
    }
    (found, warnings)
}

/// Where each enabled plugin is installed, as `(plugin name, root)` (the
/// name is the id before `@`): what skills and other per-plugin content
/// are read from. Plugins that are not installed are left out (the hook
/// loading already warns about them).
pub fn enabled_plugin_roots(
    enabled: &[String],
    config_dir: Option<&Path>,
    project: &Path,
) -> Vec<(String, PathBuf)> {
    let Some(config_dir) = config_dir.filter(|_| !enabled.is_empty()) else {
        return Vec::new();
    };
    let plugins_dir = config_dir.join("plugins");
    let installed = read_installed(&plugins_dir.join("installed_plugins.json"));
    enabled
        .iter()
        .filter_map(|id| {
            let root = locate(id, &installed, &plugins_dir, project)?;
            let name = id.split_once('@').map_or(id.as_str(), |(n, _)| n);
            Some((name.to_string(), root))
        })
        .collect()
}

/// `installed_plugins.json`: `{id: [{installPath, projectPath?…}]}` (v2) or
/// `{id: {installPath}}` (v1), under `plugins`.
fn read_installed(file: &Path) -> Vec<(String, PathBuf, Option<PathBuf>)> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let Ok(root) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let Some(plugins) = root.get("plugins").and_then(Value::as_object) else {
        return out;
    };
    for (id, entries) in plugins {
        let entries: Vec<&Value> = match entries {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for entry in entries {
            if let Some(path) = entry.get("installPath").and_then(Value::as_str) {
                let project = entry
                    .get("projectPath")
                    .and_then(Value::as_str)
                    .map(PathBuf::from);
                out.push((id.clone(), PathBuf::from(path), project));
            }
        }
    }
    out
}

fn locate(
    id: &str,
    installed: &[(String, PathBuf, Option<PathBuf>)],
    plugins_dir: &Path,
    project: &Path,
) -> Option<PathBuf> {
    // A project-scoped install applies to its project only.
    let recorded = installed
        .iter()
        .filter(|(i, path, _)| i == id && path.is_dir())
        .find(|(_, _, p)| p.as_deref().is_none_or(|p| p == project))
        .map(|(_, path, _)| path.clone());
    if recorded.is_some() {
        return recorded;
    }
    let (name, marketplace) = id.split_once('@').unwrap_or((id, ""));
    if name.is_empty() || name.contains('/') || marketplace.contains('/') || name == ".." {
        return None;
    }
    let mut candidates = Vec::new();
    if !marketplace.is_empty() {
        // The newest cached version, then the marketplace checkout.
        let cache = plugins_dir.join("cache").join(marketplace).join(name);
        if let Ok(entries) = std::fs::read_dir(&cache) {
            let mut versions: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            versions.sort();
            candidates.extend(versions.into_iter().rev());
        }
        let market = plugins_dir.join("marketplaces").join(marketplace);
        candidates.push(market.join("plugins").join(name));
        candidates.push(market.join(name));
    }
    candidates.push(plugins_dir.join(name));
    candidates.into_iter().find(|p| p.is_dir())
}

/// The plugin's hooks: `.claude-plugin/plugin.json`'s `hooks` (a path or
/// an inline object), else `hooks/hooks.json`.
fn hooks_of(root: &Path) -> Result<Option<(PathBuf, Value)>, String> {
    let manifest = root.join(".claude-plugin").join("plugin.json");
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not valid JSON: {e}", manifest.display()))?;
        match value.get("hooks") {
            Some(Value::String(path)) => {
                let file = root.join(path.trim_start_matches("./"));
                if !file.starts_with(root) || path.contains("..") {
                    return Err(format!(
                        "{}: hooks path {path:?} leaves the plugin",
                        manifest.display()
                    ));
                }
                return read_hooks_file(&file).map(Some);
            }
            Some(Value::Object(map)) => {
                return Ok(Some((manifest, unwrap_hooks(Value::Object(map.clone())))))
            }
            _ => {}
        }
    }
    let file = root.join("hooks").join("hooks.json");
    if !file.is_file() {
        return Ok(None);
    }
    read_hooks_file(&file).map(Some)
}

fn read_hooks_file(file: &Path) -> Result<(PathBuf, Value), String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid JSON: {e}", file.display()))?;
    Ok((file.to_path_buf(), unwrap_hooks(value)))
}

/// `{"description": …, "hooks": {events}}` or the events object itself.
fn unwrap_hooks(value: Value) -> Value {
    match value {
        Value::Object(mut map) if map.get("hooks").is_some_and(Value::is_object) => {
            map.remove("hooks").unwrap_or(Value::Null)
        }
        other => other,
    }
}
