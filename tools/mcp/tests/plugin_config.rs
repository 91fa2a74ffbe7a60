//! Reading a plugin's MCP servers from its files: every declaration form
//! Claude Code accepts, `${CLAUDE_PLUGIN_ROOT}`, names, and paths that try
//! to leave the plugin.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton_mcp::{add_plugin_servers, plugin_servers, Loaded, Scope, ServerSpec, TransportSpec};
use serde_json::json;

fn write(path: &std::path::Path, value: serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

fn stdio(spec: &ServerSpec) -> (&str, &[String], &std::collections::BTreeMap<String, String>) {
    match &spec.transport {
        TransportSpec::Stdio { command, args, env } => (command, args, env),
        other => panic!("not stdio: {other:?}"),
    }
}

#[test]
fn every_form_is_read_with_the_plugin_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let r = root.display().to_string();
    write(
        &root.join(".mcp.json"),
        json!({"mcpServers": {"a": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/a"}}}),
    );
    write(
        &root.join(".claude-plugin/plugin.json"),
        json!({"name": "p", "mcpServers": [
            {"b": {"type": "http", "url": "http://127.0.0.1:9/${CLAUDE_PLUGIN_ROOT}"}},
            "./more.json",
            "../outside.json",
            "missing.json"
        ]}),
    );
    write(
        &root.join("more.json"),
        json!({"c": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/c.js"]}}),
    );
    let (specs, problems) = plugin_servers("p", root, &|_| None);
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["plugin:p:a", "plugin:p:b", "plugin:p:c"]);
    assert!(specs.iter().all(|s| s.scope == Scope::Plugin));
    let (command, _, env) = stdio(&specs[0]);
    assert_eq!(command, format!("{r}/bin/a"));
    assert_eq!(env.get("CLAUDE_PLUGIN_ROOT"), Some(&r));
    let (_, args, _) = stdio(&specs[2]);
    assert_eq!(args, [format!("{r}/c.js")]);
    let problems = problems.join("\n");
    assert!(
        problems.contains("../outside.json leaves the plugin"),
        "{problems}"
    );
    assert!(
        problems.contains("missing.json, which does not exist"),
        "{problems}"
    );

    // A server the user configured under the same name is kept.
    let mut loaded = Loaded::default();
    let mut mine = ServerSpec::stdio("plugin:p:a", "mine", vec![]);
    mine.scope = Scope::User;
    loaded.servers.push(mine);
    add_plugin_servers(&mut loaded, &[("p".into(), root.to_path_buf())], &|_| None);
    assert_eq!(loaded.servers.len(), 3);
    assert_eq!(stdio(&loaded.servers[0]).0, "mine");
}

#[test]
fn a_plugin_without_servers_or_with_bad_files_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (specs, problems) = plugin_servers("empty", dir.path(), &|_| None);
    assert!(specs.is_empty() && problems.is_empty());
    std::fs::write(dir.path().join(".mcp.json"), "{not json").unwrap();
    let (specs, problems) = plugin_servers("bad", dir.path(), &|_| None);
    assert!(specs.is_empty());
    assert!(problems[0].contains("not valid JSON"), "{problems:?}");
}
