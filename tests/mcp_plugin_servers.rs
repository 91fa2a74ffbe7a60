//! MCP servers shipped by an enabled plugin, through the command line
//! (`baton run`, a real process, real servers): one declared in the
//! plugin's `.claude-plugin/plugin.json` (with `${CLAUDE_PLUGIN_ROOT}`), one
//! in its `.mcp.json`; both are offered as `mcp__plugin_<plugin>_<server>__…`
//! and answer, and `--strict-mcp-config` leaves them out.

use std::path::Path;
use std::process::Output;

use baton_test_support::mcp_servers;
use serde_json::{json, Value};

fn server_script() -> std::path::PathBuf {
    mcp_servers::script("oversized.py")
}

/// A home with plugin `tidy@market` installed at `plugin`, and a settings
/// file enabling it.
fn install(home: &Path, plugin: &Path, project: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(home.join(".claude/plugins")).unwrap();
    std::fs::write(
        home.join(".claude/plugins/installed_plugins.json"),
        json!({"version": 2, "plugins": {"tidy@market": [
            {"scope": "user", "installPath": plugin, "version": "1.0.0"}]}})
        .to_string(),
    )
    .unwrap();
    let settings = project.join("s.json");
    std::fs::write(
        &settings,
        json!({
            "enabledPlugins": {"tidy@market": true},
            // Plugin servers' tools are named like any MCP tool in rules.
            "permissions": {"allow": ["mcp__plugin_tidy_files__echo", "mcp__plugin_tidy_extra__echo"]}
        })
        .to_string(),
    )
    .unwrap();
    settings
}

fn run(project: &Path, home: &Path, settings: &Path, extra: &[&str], message: &Value) -> Output {
    baton_test_support::cli::with_stdin(
        crate::support::baton()
            .arg("run")
            .args(extra)
            .arg("--cwd")
            .arg(project)
            .arg("--settings")
            .arg(settings)
            .arg("--state-dir")
            .arg(project.join("state"))
            .arg("-")
            .env("HOME", home)
            .env_remove("CLAUDE_CONFIG_DIR")
            // A cold Python on a loaded machine can take long to start.
            .env("MCP_TIMEOUT", "120000"),
        &message.to_string(),
    )
}

#[test]
fn an_enabled_plugins_servers_are_started_and_called() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let plugin = tempfile::tempdir().unwrap();
    let root = plugin.path();
    std::fs::copy(server_script(), root.join("server.py")).unwrap();
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::fs::write(
        root.join(".claude-plugin/plugin.json"),
        json!({"name": "tidy", "mcpServers": {
            "files": {"command": "python3", "args": ["-u", "${CLAUDE_PLUGIN_ROOT}/server.py"]}
        }})
        .to_string(),
    )
    .unwrap();
    // The plugin form: no `mcpServers` wrapper.
    std::fs::write(
        root.join(".mcp.json"),
        json!({"extra": {"command": "python3", "args": ["-u", "${CLAUDE_PLUGIN_ROOT}/server.py"]}})
            .to_string(),
    )
    .unwrap();
    let settings = install(home.path(), root, project.path());
    let message = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "mcp__plugin_tidy_files__echo", "input": {"text": "from plugin.json"}},
        {"type": "tool_use", "id": "b", "name": "mcp__plugin_tidy_extra__echo", "input": {"text": "from .mcp.json"}},
        {"type": "tool_use", "id": "c", "name": "ReadMcpResourceDirTool", "input": {"server": "plugin:tidy:files", "uri": "dir://root"}}
    ]});
    let out = run(project.path(), home.path(), &settings, &[], &message);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    let results: Value = serde_json::from_str(stdout.trim()).unwrap();
    let text = |i: usize| results["content"][i]["content"].to_string();
    assert!(text(0).contains("from plugin.json"), "{stdout}\n{stderr}");
    assert!(text(1).contains("from .mcp.json"), "{stdout}\n{stderr}");
    assert!(text(2).contains("inode/directory"), "{stdout}\n{stderr}");

    // --strict-mcp-config: only --mcp-config servers, no plugin ones.
    let only_one = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "mcp__plugin_tidy_files__echo", "input": {"text": "x"}}
    ]});
    let out = run(
        project.path(),
        home.path(),
        &settings,
        &["--strict-mcp-config"],
        &only_one,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("is_error") && !stdout.contains("\"x\""),
        "{stdout}"
    );
}
