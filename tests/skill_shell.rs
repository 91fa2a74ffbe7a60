//! A skill's shell blocks (`` !`command` ``, ```` ```! ````) through
//! `baton run`, a real process with real bash and git: each command is a
//! `Bash` call judged like the model's own, so read-only commands fill in
//! their output while a write, or a write smuggled in through the skill's
//! arguments, is refused with nothing run (headless: nobody to ask). The
//! settings' `disableSkillShellExecution` runs none of them.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

fn write_skill(project: &Path, name: &str, text: &str) {
    let dir = project.join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

/// Runs one `Skill` call with `args` and returns the result text.
fn run_skill(project: &Path, home: &Path, skill: &str, args: &str, settings: Value) -> String {
    let settings_file = home.join("settings.json");
    std::fs::write(&settings_file, settings.to_string()).unwrap();
    let message = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "s", "name": "Skill", "input": {"skill": skill, "args": args}}
    ]});
    let out = baton_test_support::cli::with_stdin(
        crate::support::baton()
            .args(["run", "--cwd"])
            .arg(project)
            .arg("--settings")
            .arg(&settings_file)
            .arg("-")
            .env("HOME", home)
            .env_remove("CLAUDE_CONFIG_DIR"),
        &message.to_string(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn project() -> (tempfile::TempDir, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let git = Command::new("git")
        .args(["init", "-q", "-b", "trunk-for-skills"])
        .current_dir(project.path())
        .status()
        .unwrap();
    assert!(git.success());
    write_skill(
        project.path(),
        "ctx",
        "---\ndescription: Shows the repository state\n---\n\
         Missing: !`cat no-such-file`\n\
         Branch: !`git branch --show-current`\n\
         Touch: !`touch written-by-skill`\n\
         ```!\necho fenced-$ARGUMENTS\n```\n\
         Echo: !`echo arg-$ARGUMENTS`\n",
    );
    (project, home)
}

#[test]
fn read_only_blocks_fill_in_and_writes_are_refused() {
    let (project, home) = project();
    let p = project.path();
    let out = run_skill(p, home.path(), "ctx", "ok", json!({}));
    // A failing command does not stop the ones after it.
    assert!(out.contains("Missing: [shell command not run:"), "{out}");
    assert!(out.contains("Branch: trunk-for-skills"), "{out}");
    assert!(out.contains("fenced-ok"), "{out}");
    assert!(out.contains("Echo: arg-ok"), "{out}");
    assert!(out.contains("Touch: [shell command not run:"), "{out}");
    assert!(!p.join("written-by-skill").exists(), "a refused write ran");
    assert!(!out.contains("!`"), "a block was left in place: {out}");
}

#[test]
fn arguments_cannot_smuggle_a_command_into_a_block() {
    let (project, home) = project();
    let p = project.path();
    let out = run_skill(p, home.path(), "ctx", "x; touch injected", json!({}));
    assert!(
        !p.join("injected").exists(),
        "the argument's command ran: {out}"
    );
    assert!(out.contains("Echo: [shell command not run:"), "{out}");
    // The allowed block of the same skill still ran.
    assert!(out.contains("Branch: trunk-for-skills"), "{out}");
}

#[test]
fn the_settings_can_turn_skill_commands_off() {
    let (project, home) = project();
    let p = project.path();
    let out = run_skill(
        p,
        home.path(),
        "ctx",
        "ok",
        json!({"disableSkillShellExecution": true}),
    );
    assert!(
        out.contains("Branch: [shell command execution disabled by policy]"),
        "{out}"
    );
    assert!(!out.contains("trunk-for-skills"), "{out}");
    assert!(!out.contains("fenced-ok"), "{out}");
}
