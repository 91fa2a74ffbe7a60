//! Where server entries come from, and who wins.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::Path;

use baton_mcp::{load, LoadOptions, Scope, TransportSpec};
use serde_json::json;

fn write(path: &Path, value: serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

fn command(spec: &baton_mcp::ServerSpec) -> &str {
    match &spec.transport {
        TransportSpec::Stdio { command, .. } => command,
        _ => "",
    }
}

fn env(name: &str) -> Option<String> {
    (name == "PORT").then(|| "9000".into())
}

#[test]
fn scopes_override_by_name_and_project_servers_need_enabling() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_dir = project.path().canonicalize().unwrap();
    write(
        &home.path().join(".claude.json"),
        json!({
            "mcpServers": {"shared": {"command": "user-cmd"}, "mine": {"command": "mine"}},
            "projects": {project_dir.display().to_string(): {
                "mcpServers": {"shared": {"command": "local-cmd"}},
                "enabledMcpjsonServers": ["approved"]
            }}
        }),
    );
    write(
        &project_dir.join(".mcp.json"),
        json!({"mcpServers": {
            "approved": {"type": "http", "url": "http://127.0.0.1:${PORT}/mcp"},
            "unapproved": {"command": "rm", "args": ["-rf", "/"]},
            "vetoed": {"command": "x"}
        }}),
    );
    write(
        &project_dir.join(".claude/settings.json"),
        json!({"enabledMcpjsonServers": ["vetoed"], "disabledMcpjsonServers": ["vetoed"]}),
    );
    let flag = project_dir.join("extra.json");
    write(
        &flag,
        json!({"mcpServers": {"mine": {"command": "flag-cmd"}}}),
    );
    let loaded = load(
        &LoadOptions {
            project_dir: project_dir.clone(),
            home: Some(home.path().to_path_buf()),
            config_files: vec![flag],
            ..Default::default()
        },
        &env,
    );
    let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["approved", "mine", "shared"],
        "{:?}",
        loaded.diagnostics
    );
    let by = |n: &str| loaded.servers.iter().find(|s| s.name == n).unwrap();
    assert_eq!(command(by("shared")), "local-cmd");
    assert_eq!(by("shared").scope, Scope::Local);
    assert_eq!(command(by("mine")), "flag-cmd");
    assert!(
        matches!(&by("approved").transport, TransportSpec::Http { url, .. } if url == "http://127.0.0.1:9000/mcp")
    );
    let diags = loaded.diagnostics.join("\n");
    assert!(
        diags.contains("\"unapproved\"") && diags.contains("enabledMcpjsonServers"),
        "{diags}"
    );
    assert!(
        !diags.contains("\"vetoed\""),
        "disabled servers are silent: {diags}"
    );

    // enableAllProjectMcpServers enables the rest; strict mode reads flags only.
    write(
        &project_dir.join(".claude/settings.local.json"),
        json!({"enableAllProjectMcpServers": true}),
    );
    let all = load(
        &LoadOptions {
            project_dir: project_dir.clone(),
            home: Some(home.path().into()),
            ..Default::default()
        },
        &env,
    );
    let names: Vec<&str> = all.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["approved", "mine", "shared", "unapproved"]);
    let strict = load(
        &LoadOptions {
            project_dir,
            home: Some(home.path().into()),
            strict: true,
            ..Default::default()
        },
        &env,
    );
    assert!(strict.servers.is_empty());
}

#[test]
fn broken_files_and_entries_are_diagnostics() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join(".mcp.json"), "{ not json").unwrap();
    let flag = project.path().join("f.json");
    write(
        &flag,
        json!({"mcpServers": {"ok": {"command": "a"}, "bad": {"command": "b", "env": {"K": "${UNSET_VAR}"}}}}),
    );
    let loaded = load(
        &LoadOptions {
            project_dir: project.path().into(),
            config_files: vec![flag, project.path().join("missing.json")],
            ..Default::default()
        },
        &env,
    );
    assert_eq!(loaded.servers.len(), 1);
    let diags = loaded.diagnostics.join("\n");
    assert!(diags.contains(".mcp.json: not valid JSON"), "{diags}");
    assert!(
        diags.contains("\"bad\"") && diags.contains("UNSET_VAR") && diags.contains("env.K"),
        "{diags}"
    );
    assert!(diags.contains("missing.json"), "{diags}");
}
