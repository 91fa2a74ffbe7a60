//! Loading and merging settings files from a real directory tree.

use std::path::Path;

use baton_engine::permission::{PermissionMode, PermissionPolicy as _, RuleKind};
use baton_engine::settings::Settings;
use baton_engine::HookEvent;

use crate::common;

struct Tree {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    project: std::path::PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    Tree {
        _dir: dir,
        home,
        project,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn texts(settings: &Settings, kind: RuleKind) -> Vec<String> {
    settings
        .policy
        .rules(kind)
        .iter()
        .map(|r| r.text().to_string())
        .collect()
}

#[test]
fn files_merge_in_claude_code_order() {
    let t = tree();
    write(
        &t.home.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(~/.ssh/**)"], "defaultMode": "plan"},
            "env": {"X": "1"}, "model": "whatever"}"#,
    );
    write(
        &t.project.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"], "defaultMode": "acceptEdits",
            "additionalDirectories": ["../shared", "~/notes"]}}"#,
    );
    write(
        &t.project.join(".claude/settings.local.json"),
        r#"{"permissions": {"ask": ["Bash(git push:*)"]}}"#,
    );
    let explicit = t.project.join("custom.json");
    write(
        &explicit,
        r#"{"permissions": {"deny": ["WebFetch"], "defaultMode": "dontAsk"}}"#,
    );

    let s = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap();
    assert_eq!(s.mode, PermissionMode::AcceptEdits);
    assert_eq!(texts(&s, RuleKind::Deny), ["Read(~/.ssh/**)", "Bash(rm:*)"]);
    assert_eq!(texts(&s, RuleKind::Ask), ["Bash(git push:*)"]);
    assert_eq!(texts(&s, RuleKind::Allow), ["Bash(npm test)"]);
    assert_eq!(s.files.len(), 3);
    let shared = t.project.parent().unwrap().join("shared");
    assert_eq!(
        s.additional_directories,
        vec![shared.clone(), t.home.join("notes")]
    );
    let roots = s.roots(&t.project);
    assert_eq!(roots, vec![t.project.clone(), shared, t.home.join("notes")]);
    let ctx = s.context(&t.project);
    assert_eq!(ctx.permission_mode, PermissionMode::AcceptEdits);
    assert_eq!(ctx.roots.len(), 3);
    // Neither additional directory exists yet, but each is one `mkdir`
    // away (its parent exists): a normal first run, no warning.
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);

    let s = Settings::load_with_home(&t.project, Some(&t.home), Some(&explicit)).unwrap();
    assert_eq!(s.mode, PermissionMode::DontAsk);
    assert_eq!(
        texts(&s, RuleKind::Deny),
        ["Read(~/.ssh/**)", "Bash(rm:*)", "WebFetch"]
    );
    assert!(s.policy.rules(RuleKind::Deny)[1]
        .source()
        .unwrap()
        .ends_with("project/.claude/settings.json"));
}

#[test]
fn bad_entries_are_skipped_or_read_strictly_with_one_warning_each() {
    let t = tree();
    write(
        &t.home.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm -rf", "Read(src/[a)", "Bash(curl:*)"], "allow": ["Bash(ok)"]}}"#,
    );
    write(
        &t.project.join(".claude/settings.json"),
        r#"{"permissions": {"defaultMode": "yolo", "allow": ["Bas*", 3, "Bash(ls)"]}}"#,
    );
    write(
        &t.project.join(".claude/settings.local.json"),
        r#"{"permissions": {"allow": ["Bash(ok)"] "#,
    );
    // A file that is not JSON at all cannot be trusted in part.
    let err = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    assert!(err.problems[0].message.contains("not valid JSON"));
    let local = t.project.join(".claude/settings.local.json");
    assert_eq!(err.problems[0].file, local);
    std::fs::remove_file(&local).unwrap();

    let s = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap();
    // Unreadable deny rules cover their whole tool; the valid ones stay.
    assert_eq!(
        texts(&s, RuleKind::Deny),
        ["Bash(rm -rf", "Read(src/[a)", "Bash(curl:*)"]
    );
    assert!(s.policy.denies_whole_tool("Bash"));
    assert!(s.policy.denies_whole_tool("Read"));
    // Unreadable allow entries allow nothing.
    assert_eq!(texts(&s, RuleKind::Allow), ["Bash(ok)", "Bash(ls)"]);
    assert_eq!(s.mode, PermissionMode::Default);
    let user = t.home.join(".claude/settings.json").display().to_string();
    let project = t
        .project
        .join(".claude/settings.json")
        .display()
        .to_string();
    let warned = |file: &str, needle: &str| {
        s.warnings
            .iter()
            .filter(|w| w.starts_with(file) && w.contains(needle))
            .count()
    };
    assert_eq!(warned(&user, "Bash(rm -rf"), 1, "{:?}", s.warnings);
    assert_eq!(warned(&user, "Read(src/[a)"), 1, "{:?}", s.warnings);
    assert_eq!(warned(&project, "yolo"), 1, "{:?}", s.warnings);
    assert_eq!(warned(&project, "Bas*"), 1, "{:?}", s.warnings);
    assert_eq!(warned(&project, "allow[1]"), 1, "{:?}", s.warnings);
    assert_eq!(s.warnings.len(), 5, "{:?}", s.warnings);
}

#[test]
fn missing_files_are_fine_but_a_missing_explicit_file_is_not() {
    let t = tree();
    let s = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap();
    assert!(s.policy.is_empty());
    assert_eq!(s.mode, PermissionMode::Default);
    assert!(s.hooks.is_empty());
    let s = Settings::load_with_home(&t.project, None, None).unwrap();
    assert!(s.files.is_empty());
    let err = Settings::load_with_home(
        &t.project,
        Some(&t.home),
        Some(&t.project.join("nope.json")),
    )
    .unwrap_err();
    assert!(err.to_string().contains("nope.json"), "{err}");
}

#[test]
fn the_home_project_is_read_once() {
    let t = tree();
    write(
        &t.home.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(ls)"]}}"#,
    );
    let s = Settings::load_with_home(&t.home, Some(&t.home), None).unwrap();
    assert_eq!(texts(&s, RuleKind::Allow), ["Bash(ls)"]);
}

#[test]
fn tilde_rules_need_a_home() {
    let t = tree();
    write(
        &t.project.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Read(~/.ssh/**)"]}}"#,
    );
    // No home: the rule cannot be placed, so it covers the whole tool.
    let s = Settings::load_with_home(&t.project, None, None).unwrap();
    assert!(s.policy.denies_whole_tool("Read"));
    assert!(
        s.warnings.iter().any(|w| w.contains("home")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn hooks_are_read_and_bad_entries_skipped_with_a_warning() {
    let t = tree();
    write(
        &t.home.join(".claude/settings.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
                      "SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    write(
        &t.project.join(".claude/settings.json"),
        r#"{"hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "command", "command": "true", "timeout": 5},
            {"type": "prompt", "prompt": "judge"}]}]}}"#,
    );
    let s = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap();
    // The SessionStart hook runs when a session starts; the prompt hook goes
    // to the host's model (or is a diagnostic when there is none).
    assert_eq!(s.hooks.len(), 4);
    assert!(s.hooks.has_any(HookEvent::PreToolUse, "Bash"));
    assert!(!s.hooks.has_any(HookEvent::PreToolUse, "Edit"));
    assert!(s.hooks.has_any(HookEvent::PostToolUse, "Write"));
    assert!(!s.hooks.has_any(HookEvent::PostToolUse, "NotebookEdit"));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);

    // One bad entry costs only itself, with a warning naming file and entry.
    write(
        &t.project.join(".claude/settings.local.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]},
                                     {"matcher": "Edit", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    let s = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap();
    assert_eq!(s.hooks.len(), 5);
    let bad: Vec<&String> = s
        .warnings
        .iter()
        .filter(|w| w.contains("matcher"))
        .collect();
    assert_eq!(bad.len(), 1, "{:?}", s.warnings);
    assert!(bad[0].contains("settings.local.json"), "{bad:?}");
    assert!(bad[0].contains("hooks.PreToolUse[0]"), "{bad:?}");
}

#[test]
fn a_relative_project_dir_still_anchors_rules() {
    let t = tree();
    write(
        &t.project.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Edit(/src/**)"]}}"#,
    );
    // Relative to the current directory, as a CLI user would type it.
    let cwd = std::env::current_dir().unwrap();
    let relative = pathdiff(&t.project, &cwd);
    let s = Settings::load_with_home(&relative, Some(&t.home), None).unwrap();
    assert!(s.project_dir.is_absolute());
    assert_eq!(s.project_dir, t.project);
    let target = baton_engine::PermissionTarget::Path {
        path: t.project.join("src/a.rs"),
        access: baton_engine::permission::FileAccess::Write,
    };
    let tool = baton_engine::Tool::raw(
        baton_engine::ToolDef::new("Edit", "t"),
        serde_json::json!({"type": "object"}),
        common::Nothing,
    )
    .unwrap();
    let context = s.context(&t.project);
    let decision = baton_engine::PermissionPolicy::decide(
        s.policy.as_ref(),
        &baton_engine::permission::PermissionRequest {
            tool: &tool,
            input: &serde_json::json!({}),
            target: &target,
            read_only: false,
            context: &context,
            caller: None,
        },
    );
    assert!(
        matches!(decision, baton_engine::PermissionDecision::Deny { .. }),
        "{decision:?}"
    );
}

/// `path` spelled relative to `base` (both absolute).
fn pathdiff(path: &Path, base: &Path) -> std::path::PathBuf {
    let common = path
        .components()
        .zip(base.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = std::path::PathBuf::new();
    for _ in base.components().skip(common) {
        out.push("..");
    }
    for c in path.components().skip(common) {
        out.push(c);
    }
    out
}

#[test]
fn an_additional_directory_whose_parent_is_missing_is_warned_about() {
    let t = tree();
    write(
        &t.project.join(".claude/settings.json"),
        r#"{"permissions": {"additionalDirectories": ["~/scratch", "~/no/such/dir"]}}"#,
    );
    let s = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap();
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].contains("no/such/dir"), "{:?}", s.warnings);
    assert_eq!(s.additional_directories.len(), 2);
}
