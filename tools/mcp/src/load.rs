//! Finding the server entries: `~/.claude.json` (user and per-project local
//! entries), the project's `.mcp.json`, and `--mcp-config` files.
//!
//! Later scopes win by name: user < project < local < flag. A project's
//! `.mcp.json` comes with the repository, so its servers (arbitrary commands)
//! start only when the user enabled them, in settings
//! (`enableAllProjectMcpServers`, `enabledMcpjsonServers`,
//! `disabledMcpjsonServers`) or in the project's entry of `~/.claude.json`.
//! Claude Code asks once on the terminal; Baton has no such prompt, so an
//! unapproved project server is skipped with a diagnostic saying how to
//! enable it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::{parse_servers, EnvLookup, Scope, ServerSpec};
use baton_engine::settings::settings_files;

/// Where to look.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The project (session) directory; `.mcp.json` is read from here.
    pub project_dir: PathBuf,
    /// The user's home (`~/.claude.json`, `~/.claude/settings.json`);
    /// `None` skips the user files.
    pub home: Option<PathBuf>,
    /// `--mcp-config` files, in order.
    pub config_files: Vec<PathBuf>,
    /// An extra settings file (`--settings`), read for the enable keys.
    pub settings_file: Option<PathBuf>,
    /// Skip `~/.claude.json` and `.mcp.json` (`--strict-mcp-config`).
    pub strict: bool,
}

/// The servers to start, and what could not be used.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// The servers to start, their `${VAR}`s expanded.
    pub servers: Vec<ServerSpec>,
    /// Entries that were skipped and why, for the user.
    pub diagnostics: Vec<String>,
}

#[derive(Default)]
struct Approval {
    all: bool,
    enabled: BTreeSet<String>,
    disabled: BTreeSet<String>,
}

impl Approval {
    fn read(&mut self, value: &Value) {
        if value
            .get("enableAllProjectMcpServers")
            .and_then(Value::as_bool)
            == Some(true)
        {
            self.all = true;
        }
        for (key, set) in [
            ("enabledMcpjsonServers", &mut self.enabled),
            ("disabledMcpjsonServers", &mut self.disabled),
        ] {
            if let Some(list) = value.get(key).and_then(Value::as_array) {
                set.extend(list.iter().filter_map(Value::as_str).map(String::from));
            }
        }
    }
}

/// Reads every configured server (see the module docs for the order).
pub fn load(opts: &LoadOptions, env: EnvLookup<'_>) -> Loaded {
    let mut out = Loaded::default();
    let mut by_name: BTreeMap<String, ServerSpec> = BTreeMap::new();
    let add = |specs: Vec<ServerSpec>, by_name: &mut BTreeMap<String, ServerSpec>| {
        for spec in specs {
            by_name.insert(spec.name.clone(), spec);
        }
    };
    if !opts.strict {
        let mut approval = Approval::default();
        // The session's settings files, in the one order the engine reads
        // them; the enable keys accumulate across them.
        let files = settings_files(
            &opts.project_dir,
            opts.home.as_deref(),
            opts.settings_file.as_deref(),
        );
        for file in &files {
            if let Some(v) = read_json(&file.path, &mut out.diagnostics) {
                approval.read(&v);
            }
        }
        let user = opts
            .home
            .as_ref()
            .and_then(|h| read_json(&h.join(".claude.json"), &mut out.diagnostics));
        let local = user
            .as_ref()
            .and_then(|u| project_entry(u, &opts.project_dir));
        if let Some(local) = local {
            approval.read(local);
        }
        if let (Some(home), Some(user)) = (&opts.home, &user) {
            let source = home.join(".claude.json").display().to_string();
            if let Some(servers) = user.get("mcpServers") {
                let (specs, problems) = parse_servers(servers, Scope::User, &source, env);
                add(specs, &mut by_name);
                out.diagnostics.extend(problems);
            }
        }
        let mcp_json = opts.project_dir.join(".mcp.json");
        if let Some(project) = read_json(&mcp_json, &mut out.diagnostics) {
            let source = mcp_json.display().to_string();
            let servers = servers_of(&project);
            let (specs, problems) = parse_servers(&servers, Scope::Project, &source, env);
            out.diagnostics.extend(problems);
            let mut allowed = Vec::new();
            for spec in specs {
                if approval.disabled.contains(&spec.name) {
                    continue;
                } else if approval.all || approval.enabled.contains(&spec.name) {
                    allowed.push(spec);
                } else {
                    out.diagnostics.push(format!(
                        "MCP server \"{}\" ({source}) is not enabled: add it to \"enabledMcpjsonServers\" (or set \"enableAllProjectMcpServers\": true) in .claude/settings.local.json",
                        spec.name
                    ));
                }
            }
            add(allowed, &mut by_name);
        }
        if let (Some(home), Some(local)) = (&opts.home, local) {
            if let Some(servers) = local.get("mcpServers") {
                let source = format!(
                    "{} (project {})",
                    home.join(".claude.json").display(),
                    opts.project_dir.display()
                );
                let (specs, problems) = parse_servers(servers, Scope::Local, &source, env);
                add(specs, &mut by_name);
                out.diagnostics.extend(problems);
            }
        }
    }
    for file in &opts.config_files {
        let source = file.display().to_string();
        match std::fs::read_to_string(file) {
            Err(e) => out.diagnostics.push(format!("--mcp-config {source}: {e}")),
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Err(e) => out
                    .diagnostics
                    .push(format!("--mcp-config {source}: not valid JSON: {e}")),
                Ok(v) => {
                    let servers = servers_of(&v);
                    let (specs, problems) = parse_servers(&servers, Scope::Flag, &source, env);
                    add(specs, &mut by_name);
                    out.diagnostics.extend(problems);
                }
            },
        }
    }
    out.servers = by_name.into_values().collect();
    out
}

/// The server entries of a configuration file: its `mcpServers`, or, in
/// the form plugins ship (`{"name": {"command": …}}`, no wrapper), the
/// top-level object when each of its values is a server entry. `Null` when
/// the file holds neither (the CLI refuses such a `--mcp-config` file).
pub fn servers_of(file: &Value) -> Value {
    if let Some(servers) = file.get("mcpServers") {
        return servers.clone();
    }
    let is_entry = |v: &Value| {
        v.as_object().is_some_and(|e| {
            ["command", "url", "type"]
                .iter()
                .any(|k| e.contains_key(*k))
        })
    };
    match file.as_object() {
        Some(map) if !map.is_empty() && map.values().all(is_entry) => file.clone(),
        _ => Value::Null,
    }
}

/// The process environment, for [`load`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn project_entry<'a>(user: &'a Value, project_dir: &Path) -> Option<&'a Value> {
    let projects = user.get("projects")?.as_object()?;
    let wanted = project_dir
        .canonicalize()
        .unwrap_or_else(|_| project_dir.to_path_buf());
    projects.iter().find_map(|(dir, entry)| {
        let dir = Path::new(dir);
        let same =
            dir == project_dir || dir == wanted || dir.canonicalize().is_ok_and(|d| d == wanted);
        same.then_some(entry)
    })
}

/// A JSON file, or `None` when it does not exist; unreadable or invalid
/// files are a diagnostic.
pub(crate) fn read_json(path: &Path, diagnostics: &mut Vec<String>) -> Option<Value> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            diagnostics.push(format!("{}: {e}", path.display()));
            None
        }
        Ok(text) => match serde_json::from_str(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                diagnostics.push(format!("{}: not valid JSON: {e}", path.display()));
                None
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_plugin_form_without_a_wrapper_is_read() {
        let wrapped = json!({"mcpServers": {"a": {"command": "x"}}});
        assert_eq!(servers_of(&wrapped), json!({"a": {"command": "x"}}));
        let plugin = json!({"a": {"command": "x"}, "b": {"type": "http", "url": "http://h"}});
        assert_eq!(servers_of(&plugin), plugin);
        // Anything else is not taken for servers.
        assert_eq!(
            servers_of(&json!({"a": {"command": "x"}, "other": 1})),
            Value::Null
        );
        assert_eq!(servers_of(&json!({})), Value::Null);
        assert_eq!(servers_of(&json!([1])), Value::Null);
    }
}
