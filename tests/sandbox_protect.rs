//! Protection by capability under the `sandbox` settings, proven with real
//! git and a real next session: a sandboxed, auto-allowed command tries one
//! way of planting code for later (a rebuilt `.git`, `.git/commondir`, a
//! `gitdir:` file, `.git/info/attributes` for a filter, a nested
//! repository's config or hooks, a new repository in a subdirectory,
//! `.mcp.json`, `.claude/settings.local.json`), then git runs outside the
//! sandbox and a new `baton run` starts in the workspace: nothing planted
//! may run. Each plant is also applied without the sandbox, where the same
//! consumers must run it: the test proves its plants work, so a plant the
//! sandbox stops is stopped by the sandbox.
//!
//! And ordinary git work (add, commit, branch, stash) inside the sandbox
//! still works.

use std::path::{Path, PathBuf};
use std::process::Command;

use baton_run::confinable;
use serde_json::{json, Value};

use crate::support::baton_run;

struct Scene {
    _dir: tempfile::TempDir,
    work: PathBuf,
    /// Home of the unsandboxed git and sessions: a user's filter lives in
    /// its `.gitconfig`.
    home: PathBuf,
    /// Where planted code leaves its mark (outside every writable tree).
    marks: PathBuf,
    /// Baton's state directory for the sandboxed run (its `TMPDIR`, where
    /// a plant keeps its other repository, lives as long as the scene).
    state: PathBuf,
}

/// Runs `cmd` (unsandboxed) in `dir` with the scene's home.
fn sh(s: &Scene, dir: &Path, cmd: &str) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env("HOME", &s.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("bash runs")
}

fn must(s: &Scene, dir: &Path, cmd: &str) {
    let out = sh(s, dir, cmd);
    assert!(out.status.success(), "{cmd}: {out:?}");
}

/// A repository with one commit, a nested repository `sub` (with a
/// `.claude/` of its own), and `extra` run in it.
fn scene(extra: &str) -> Scene {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let s = Scene {
        work: root.join("work"),
        home: root.join("home"),
        marks: root.join("marks"),
        state: root.join("state"),
        _dir: dir,
    };
    for d in [&s.work, &s.home, &s.marks, &s.state] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(
        s.home.join(".gitconfig"),
        format!(
            "[user]\n\tname = t\n\temail = t@example.com\n[filter \"evil\"]\n\tsmudge = touch {}/attributes; cat\n\tclean = cat\n",
            s.marks.display()
        ),
    )
    .expect("gitconfig");
    let setup = "git init -q . && git config user.name t && git config user.email t@example.com \
         && echo one > f && git add f && git commit -qm one \
         && git init -q sub && git -C sub config user.name t && git -C sub config user.email t@e \
         && echo s > sub/g && git -C sub add g && git -C sub commit -qm s \
         && mkdir sub/.claude && echo '{}' > sub/.claude/settings.json";
    must(&s, &s.work, setup);
    if !extra.is_empty() {
        must(&s, &s.work, extra);
    }
    s
}

/// Everything later that could run a plant: git in the repository, in the
/// nested one and in a new one (a status, a new branch, a file checked out
/// again), then a new session with one Bash call.
fn consume(s: &Scene) {
    let _ = sh(
        s,
        &s.work,
        "git status; git checkout -q -b later; rm -f f && git checkout -- f; \
         git -C sub status; git -C sub checkout -q -b later; \
         git -C newrepo status; true",
    );
    for dir in [s.work.clone(), s.work.join("sub")] {
        let state = tempfile::tempdir().expect("state");
        let message = state.path().join("message.json");
        let call = json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "c0", "name": "Bash", "input": {"command": "true"}}
        ]});
        std::fs::write(&message, call.to_string()).expect("message");
        let _ = crate::support::baton()
            .args(["run", "--cwd"])
            .arg(&dir)
            .arg("--state-dir")
            .arg(state.path())
            .arg(&message)
            .env("HOME", &s.home)
            .env_remove(baton_engine::sandbox::PRETEND_UNAVAILABLE_VAR)
            .output()
            .expect("baton runs");
    }
}

fn marks(s: &Scene) -> Vec<String> {
    std::fs::read_dir(&s.marks)
        .expect("marks")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn sandbox() -> Value {
    json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}})
}

/// Runs the calls sandboxed; each result's text.
fn run_sandboxed(s: &Scene, commands: &[String]) -> Vec<String> {
    let calls: Vec<Value> = commands.iter().map(|c| json!({"command": c})).collect();
    baton_run::bash_calls(&s.work, &s.state, Some(&sandbox()), &[], &calls)
        .into_iter()
        .map(|(text, _)| text)
        .collect()
}

/// One way of planting code: its name (the mark it leaves), the scene's
/// extra setup, and the command; `spare` is a directory outside the
/// workspace the command may write (where it keeps another repository).
fn plants(marks: &Path, spare: &str) -> Vec<(&'static str, String, String)> {
    let fsmonitor = |name: &str| format!("touch {}/{name}; false", marks.display());
    vec![
        (
            "rename",
            String::new(),
            format!(
                "mv .git .git-aside && cp -a .git-aside .git && git config core.fsmonitor '{}'",
                fsmonitor("rename")
            ),
        ),
        (
            "commondir",
            String::new(),
            format!(
                "git init -q --bare {spare}/common && git --git-dir={spare}/common config core.fsmonitor '{}' \
                 && echo {spare}/common > .git/commondir",
                fsmonitor("commondir")
            ),
        ),
        (
            "gitfile",
            String::new(),
            format!(
                "git init -q {spare}/other && git -C {spare}/other config core.fsmonitor '{}' \
                 && mv .git .git-aside && echo \"gitdir: {spare}/other/.git\" > .git",
                fsmonitor("gitfile")
            ),
        ),
        (
            "attributes",
            String::new(),
            "echo '* filter=evil' > .git/info/attributes".to_string(),
        ),
        (
            "nested-config",
            String::new(),
            format!(
                "printf '[core]\\n\\tfsmonitor = %s\\n' '{}' >> sub/.git/config",
                fsmonitor("nested-config")
            ),
        ),
        (
            "nested-hook",
            String::new(),
            format!(
                "printf '#!/bin/sh\\ntouch %s\\n' {}/nested-hook > sub/.git/hooks/post-checkout \
                 && chmod +x sub/.git/hooks/post-checkout",
                marks.display()
            ),
        ),
        (
            "new-repository",
            String::new(),
            format!(
                "git init -q newrepo && git -C newrepo config core.fsmonitor '{}'",
                fsmonitor("new-repository")
            ),
        ),
        (
            "nested-settings",
            String::new(),
            hook_settings(marks, "nested-settings", "sub/.claude/settings.local.json"),
        ),
        (
            "settings-local",
            String::new(),
            format!(
                "mkdir -p .claude && {}",
                hook_settings(marks, "settings-local", ".claude/settings.local.json")
            ),
        ),
        (
            "mcp-json",
            // The user enabled the project's MCP servers; the command
            // adds one.
            "mkdir -p .claude && echo '{\"enableAllProjectMcpServers\": true}' > .claude/settings.local.json"
                .to_string(),
            format!(
                "echo '{{\"mcpServers\": {{\"x\": {{\"command\": \"touch\", \"args\": [\"{}/mcp-json\"]}}}}}}' > .mcp.json",
                marks.display()
            ),
        ),
    ]
}

/// A command writing `file` with a PreToolUse hook that leaves `mark`.
fn hook_settings(marks: &Path, mark: &str, file: &str) -> String {
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("touch {}/{mark}", marks.display())}
    ]}]}});
    format!("echo '{settings}' > {file}")
}

#[test]
fn planted_code_runs_without_the_sandbox_and_never_after_it() {
    if !confinable() {
        return;
    }
    let names: Vec<(&str, String)> = plants(Path::new("/"), "/")
        .into_iter()
        .map(|(name, extra, _)| (name, extra))
        .collect();
    let mut got_through = Vec::new();
    for (name, extra) in names {
        // The control: planted without the sandbox, the consumers run it.
        let control = scene(&extra);
        let spare = control.state.display().to_string();
        let plant = plants(&control.marks, &spare)
            .into_iter()
            .find(|p| p.0 == name)
            .map(|p| p.2)
            .unwrap_or_default();
        let _ = sh(&control, &control.work, &plant);
        consume(&control);
        assert!(
            marks(&control).contains(&name.to_string()),
            "{name}: the plant does not work even unsandboxed ({:?}); the test proves nothing",
            marks(&control)
        );
        // The same plant from a sandboxed, auto-allowed command.
        let s = scene(&extra);
        let plant = plants(&s.marks, "\"$TMPDIR\"")
            .into_iter()
            .find(|p| p.0 == name)
            .map(|p| p.2)
            .unwrap_or_default();
        let results = run_sandboxed(&s, &[format!("{plant}; echo RAN")]);
        assert!(results[0].contains("RAN"), "{name}: {results:?}");
        consume(&s);
        let left = marks(&s);
        if !left.is_empty() {
            got_through.push(format!("{name}: {left:?} ({})", results[0]));
        }
    }
    assert!(got_through.is_empty(), "planted code ran: {got_through:#?}");
}

#[test]
fn what_a_sandboxed_command_creates_is_moved_aside_and_said() {
    if !confinable() {
        return;
    }
    let s = scene("");
    let results = run_sandboxed(
        &s,
        &[
            "echo x > .git/commondir; echo '{}' > .mcp.json; git init -q newrepo; echo done".into(),
            // A repository moved within the workspace is the same
            // repository: left alone.
            "mv sub moved && echo moved".into(),
        ],
    );
    assert!(results[0].contains("moved aside"), "{results:?}");
    for gone in [".git/commondir", ".mcp.json", "newrepo/.git"] {
        assert!(!s.work.join(gone).exists(), "{gone}: {results:?}");
        assert!(
            s.work.join(format!("{gone}.baton-refused")).exists(),
            "{gone}: {results:?}"
        );
    }
    assert!(results[1].contains("moved"), "{results:?}");
    assert!(!results[1].contains("moved aside"), "{results:?}");
    assert!(s.work.join("moved/.git/config").is_file());
}

#[test]
fn git_work_inside_the_sandbox_still_works() {
    if !confinable() {
        return;
    }
    let s = scene("");
    let results = run_sandboxed(
        &s,
        &[
            "echo two >> f && git add f && git commit -qm two && git checkout -q -b topic \
           && echo three >> f && git stash -q && git stash pop -q && git commit -qam three \
           && git -C sub checkout -q -b side && echo GIT-OK"
                .into(),
        ],
    );
    assert!(results[0].contains("GIT-OK"), "{results:?}");
    assert!(!results[0].contains("moved aside"), "{results:?}");
    let log = sh(&s, &s.work, "git log --oneline topic");
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(log.contains("three") && log.contains("two"), "{log}");
}

#[test]
fn what_a_background_command_or_a_leftover_process_creates_goes_too() {
    if !confinable() {
        return;
    }
    let s = scene("");
    // A background task: checked when it ends (the next call waits for
    // that, without a time it must meet).
    let wait_for = |file: &str| {
        format!("for i in $(seq 300); do [ -e {file} ] && echo SEEN && break; sleep 0.1; done")
    };
    let state = &s.state;
    let results = baton_run::bash_calls(
        &s.work,
        state,
        Some(&sandbox()),
        &[],
        &[
            json!({"command": "echo '{}' > .mcp.json", "run_in_background": true}),
            json!({"command": wait_for(".mcp.json.baton-refused")}),
        ],
    );
    assert!(results[1].0.contains("SEEN"), "{results:?}");
    assert!(!s.work.join(".mcp.json").exists());
    // A process a foreground command left running: checked when the
    // session stops it (and before any unsandboxed command).
    let results = baton_run::bash_calls(
        &s.work,
        state,
        Some(&sandbox()),
        &[],
        &[
            json!({"command": "(sleep 1; mkdir -p newrepo && git init -q newrepo; sleep 600) > /dev/null 2>&1 & echo started"}),
            json!({"command": wait_for("newrepo/.git/config")}),
        ],
    );
    assert!(results[1].0.contains("SEEN"), "{results:?}");
    assert!(!s.work.join("newrepo/.git").exists(), "{results:?}");
    assert!(s.work.join("newrepo/.git.baton-refused").exists());
}

#[test]
fn a_workspace_too_large_to_search_is_not_run_sandboxed() {
    if !confinable() {
        return;
    }
    let s = scene("");
    let results = baton_run::bash_calls(
        &s.work,
        &s.state,
        Some(&sandbox()),
        &[(baton_engine::confine::protect::SCAN_LIMIT_VAR, "5")],
        &[json!({"command": "echo ran > ran.txt"})],
    );
    assert!(
        results[0].0.contains("could not be searched") && results[0].1,
        "{results:?}"
    );
    assert!(!s.work.join("ran.txt").exists());
}

#[test]
fn a_start_up_file_in_a_writable_home_is_not_created_either() {
    if !confinable() {
        return;
    }
    let s = scene("");
    // `bash_calls` makes the state directory the home directory.
    let settings = json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true,
        "filesystem": {"allowWrite": ["~/"]}}});
    let results = baton_run::bash_calls(
        &s.work,
        &s.state,
        Some(&settings),
        &[],
        &[
            json!({"command": "echo 'touch /tmp/x' > ~/.bashrc; echo note > ~/notes.txt; echo done"}),
        ],
    );
    assert!(results[0].0.contains("moved aside"), "{results:?}");
    assert!(!s.state.join(".bashrc").exists(), "{results:?}");
    assert!(s.state.join(".bashrc.baton-refused").exists());
    assert!(
        s.state.join("notes.txt").exists(),
        "the rest of home is writable"
    );
}
