//! MCP servers shipped by enabled Claude Code plugins.
//!
//! A plugin declares its servers in `<root>/.mcp.json` (wrapped in
//! `mcpServers` or not) or under `mcpServers` in
//! `<root>/.claude-plugin/plugin.json`: there an object of entries, a path
//! (relative to the plugin) of a JSON file holding them, or a list of
//! either. `${CLAUDE_PLUGIN_ROOT}` in an entry is the plugin's directory,
//! and a stdio server gets `CLAUDE_PLUGIN_ROOT` in its environment, as
//! Claude Code does. The plugins themselves (which are enabled, where they
//! are installed) are found by the same discovery as their hooks and skills
//! (`baton_engine::settings::plugins`); this module only reads their servers.
//!
//! Servers are named `plugin:<plugin>:<server>` (tools:
//! `mcp__plugin_<plugin>_<server>__<tool>`), so they never replace a server
//! the user configured. The user enabled the plugin, so its servers start
//! without the approval a project's `.mcp.json` needs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::{parse_servers, EnvLookup, Scope, ServerSpec, TransportSpec};
use crate::load::{read_json, servers_of, Loaded};

/// Adds the servers of `plugins` (`(plugin name, root)`) to `loaded`; a
/// server already there under the same name is kept.
pub fn add_plugin_servers(loaded: &mut Loaded, plugins: &[(String, PathBuf)], env: EnvLookup<'_>) {
    for (plugin, root) in plugins {
        let (specs, problems) = plugin_servers(plugin, root, env);
        loaded.diagnostics.extend(problems);
        for spec in specs {
            if !loaded.servers.iter().any(|s| s.name == spec.name) {
                loaded.servers.push(spec);
            }
        }
    }
}

/// The servers one plugin declares, and what could not be used.
pub fn plugin_servers(
    plugin: &str,
    root: &Path,
    env: EnvLookup<'_>,
) -> (Vec<ServerSpec>, Vec<String>) {
    let root_text = root.display().to_string();
    let lookup = |name: &str| {
        if name == "CLAUDE_PLUGIN_ROOT" {
            Some(root_text.clone())
        } else {
            env(name)
        }
    };
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    for (source, servers) in declared(root, &mut problems) {
        let (found, bad) = parse_servers(&servers, Scope::Plugin, &source, &lookup);
        problems.extend(bad.into_iter().map(|p| format!("plugin `{plugin}`: {p}")));
        for mut spec in found {
            spec.name = format!("plugin:{plugin}:{}", spec.name);
            if let TransportSpec::Stdio { env, .. } = &mut spec.transport {
                env.entry("CLAUDE_PLUGIN_ROOT".into())
                    .or_insert_with(|| root_text.clone());
            }
            if !specs.iter().any(|s: &ServerSpec| s.name == spec.name) {
                specs.push(spec);
            }
        }
    }
    (specs, problems)
}

/// Every `(source, mcpServers object)` the plugin declares.
fn declared(root: &Path, problems: &mut Vec<String>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mcp_json = root.join(".mcp.json");
    if let Some(file) = read_json(&mcp_json, problems) {
        out.push((mcp_json.display().to_string(), servers_of(&file)));
    }
    let manifest_path = root.join(".claude-plugin/plugin.json");
    let Some(manifest) = read_json(&manifest_path, problems) else {
        return out;
    };
    let source = manifest_path.display().to_string();
    let items = match manifest.get("mcpServers") {
        None | Some(Value::Null) => return out,
        Some(Value::Array(items)) => items.clone(),
        Some(one) => vec![one.clone()],
    };
    for item in items {
        match item {
            Value::Object(_) => out.push((source.clone(), servers_of(&item))),
            Value::String(rel) => match inside(root, &rel) {
                Some(path) => {
                    if let Some(file) = read_json(&path, problems) {
                        out.push((path.display().to_string(), servers_of(&file)));
                    } else if !path.exists() {
                        problems.push(format!(
                            "{source}: mcpServers names {rel}, which does not exist"
                        ));
                    }
                }
                None => problems.push(format!(
                    "{source}: mcpServers path {rel} leaves the plugin's directory; it is not read"
                )),
            },
            _ => problems.push(format!(
                "{source}: mcpServers must be an object, a path or a list of them"
            )),
        }
    }
    out
}

/// `rel` (a path in a plugin's manifest, `./x.json` or
/// `${CLAUDE_PLUGIN_ROOT}/x.json`) under `root`, or `None` when it would
/// leave the plugin's directory.
fn inside(root: &Path, rel: &str) -> Option<PathBuf> {
    let rel = rel
        .strip_prefix("${CLAUDE_PLUGIN_ROOT}")
        .unwrap_or(rel)
        .trim_start_matches('/');
    let rel = Path::new(rel);
    let escapes = rel.components().any(|c| {
        !matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    });
    (!escapes).then(|| root.join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_plugin() {
        let root = Path::new("/p");
        assert_eq!(
            inside(root, "./mcp.json"),
            Some(PathBuf::from("/p/./mcp.json"))
        );
        assert_eq!(
            inside(root, "${CLAUDE_PLUGIN_ROOT}/servers.json"),
            Some(PathBuf::from("/p/servers.json"))
        );
        assert_eq!(inside(root, "../other/x.json"), None);
        assert_eq!(inside(root, "a/../../x.json"), None);
    }
}
