//! (rule set, call) → decision, for every rule form, mode, precedence
//! level, compound command, path anchor and symlink case of SPEC §11.
//!
//! Paths are real: a temporary workspace, home and outside directory with
//! symlinks between them. In rules and targets, `{W}`, `{H}`, `{O}` and `{E}`
//! stand for the workspace, home, outside and extra directories.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::permission::{
    AskSource, FileAccess, PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionTarget, RulePolicy,
};
use baton_engine::{Context, Tool, ToolDef};
use serde_json::json;

use crate::common;

struct Fixture {
    _dir: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
    outside: PathBuf,
    extra: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (work, home, outside, extra) = (
            root.join("work"),
            root.join("home"),
            root.join("outside"),
            root.join("extra"),
        );
        for d in [
            work.join("src"),
            work.join("secrets"),
            work.join("sub/deep"),
            work.join("notdir"),
            home.join(".ssh"),
            home.join("notes"),
            outside.clone(),
            extra.clone(),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        for f in [
            work.join("src/a.rs"),
            work.join(".env"),
            work.join("sub/.env"),
            work.join("secrets/key.pem"),
            work.join("notdir/secrets"),
            home.join(".ssh/id_rsa"),
            outside.join("x.txt"),
            extra.join("x.txt"),
        ] {
            std::fs::write(f, "data").unwrap();
        }
        std::os::unix::fs::symlink(&outside, work.join("link_out")).unwrap();
        std::os::unix::fs::symlink(work.join("secrets/key.pem"), work.join("link_secret")).unwrap();
        Fixture {
            _dir: dir,
            work,
            home,
            outside,
            extra,
        }
    }

    fn expand(&self, text: &str) -> String {
        text.replace("{W}", &self.work.display().to_string())
            .replace("{H}", &self.home.display().to_string())
            .replace("{O}", &self.outside.display().to_string())
            .replace("{E}", &self.extra.display().to_string())
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Want {
    Allow,
    /// Ask from an explicit rule.
    AskRule,
    /// Ask because no rule decided.
    AskDefault,
    Deny,
}
use Want::*;

#[derive(Debug)]
pub struct Case {
    line: u32,
    mode: PermissionMode,
    tool: &'static str,
    target: &'static str,
    read_only: bool,
    allow: Vec<&'static str>,
    ask: Vec<&'static str>,
    deny: Vec<&'static str>,
    extra_root: bool,
    want: Want,
    suggestion: Option<&'static str>,
}

impl Case {
    pub fn allow(mut self, rules: &[&'static str]) -> Case {
        self.allow.extend(rules);
        self
    }
    pub fn ask(mut self, rules: &[&'static str]) -> Case {
        self.ask.extend(rules);
        self
    }
    pub fn deny(mut self, rules: &[&'static str]) -> Case {
        self.deny.extend(rules);
        self
    }
    pub fn ro(mut self) -> Case {
        self.read_only = true;
        self
    }
    pub fn extra_root(mut self) -> Case {
        self.extra_root = true;
        self
    }
    pub fn suggests(mut self, rule: &'static str) -> Case {
        self.suggestion = Some(rule);
        self
    }
}

/// `target`: `cmd:<command>`, `read:<path>`, `write:<path>`, `url:<url>` or
/// `none`. Read targets are read-only unless the case says otherwise.
#[track_caller]
pub fn c(mode: &str, tool: &'static str, target: &'static str, want: Want) -> Case {
    Case {
        line: std::panic::Location::caller().line(),
        mode: mode.parse().unwrap(),
        tool,
        target,
        read_only: target.starts_with("read:"),
        allow: vec![],
        ask: vec![],
        deny: vec![],
        extra_root: false,
        want,
        suggestion: None,
    }
}

mod cases;
use cases::cases;

fn target(fx: &Fixture, spec: &str) -> PermissionTarget {
    let spec = fx.expand(spec);
    if let Some(cmd) = spec.strip_prefix("cmd:") {
        PermissionTarget::Command(cmd.to_string())
    } else if let Some(path) = spec.strip_prefix("read:") {
        PermissionTarget::Path {
            path: PathBuf::from(path),
            access: FileAccess::Read,
        }
    } else if let Some(path) = spec.strip_prefix("write:") {
        PermissionTarget::Path {
            path: PathBuf::from(path),
            access: FileAccess::Write,
        }
    } else if let Some(url) = spec.strip_prefix("url:") {
        PermissionTarget::Url(url.to_string())
    } else {
        assert_eq!(spec, "none");
        PermissionTarget::None
    }
}

fn policy(fx: &Fixture, case: &Case) -> RulePolicy {
    let expand = |rules: &[&str]| -> Vec<String> { rules.iter().map(|r| fx.expand(r)).collect() };
    let (allow, ask, deny) = (expand(&case.allow), expand(&case.ask), expand(&case.deny));
    RulePolicy::parse(
        &refs(&allow),
        &refs(&ask),
        &refs(&deny),
        Some(&fx.home),
        &fx.work,
    )
    .unwrap_or_else(|e| panic!("line {}: rules did not parse: {e:?}", case.line))
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn tool(name: &str) -> Arc<Tool> {
    Arc::new(
        Tool::raw(
            ToolDef::new(name, "test tool"),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    )
}

fn decide(fx: &Fixture, case: &Case) -> PermissionDecision {
    let policy = policy(fx, case);
    let target = target(fx, case.target);
    let mut roots = vec![fx.work.clone()];
    if case.extra_root {
        roots.push(fx.extra.clone());
    }
    let context = Context::new(&fx.work)
        .with_roots(roots)
        .with_mode(case.mode);
    let tool = tool(case.tool);
    let input = json!({});
    policy.decide(&PermissionRequest {
        tool: &tool,
        input: &input,
        target: &target,
        read_only: case.read_only,
        context: &context,
        caller: None,
    })
}

fn classify(d: &PermissionDecision) -> Want {
    match d {
        PermissionDecision::Allow => Allow,
        PermissionDecision::Deny { .. } => Deny,
        PermissionDecision::Ask {
            source: AskSource::Rule,
            ..
        } => AskRule,
        PermissionDecision::Ask {
            source: AskSource::ModeDefault,
            ..
        } => AskDefault,
    }
}

#[test]
fn decision_table() {
    let fx = Fixture::new();
    let cases = cases();
    assert!(cases.len() >= 120, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let decision = decide(&fx, case);
        let got = classify(&decision);
        if got != case.want {
            failures.push(format!(
                "line {}: {} {} {:?} allow={:?} ask={:?} deny={:?}: want {:?}, got {:?}",
                case.line,
                case.mode,
                case.tool,
                case.target,
                case.allow,
                case.ask,
                case.deny,
                case.want,
                decision
            ));
            continue;
        }
        if let Some(want) = case.suggestion {
            let want = fx.expand(want);
            match &decision {
                PermissionDecision::Ask { suggestion, .. }
                    if suggestion.as_deref() == Some(&want) => {}
                other => failures.push(format!(
                    "line {}: want suggestion {want:?}, got {other:?}",
                    case.line
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("{} permission cases passed", cases.len());
}

#[test]
fn reasons_name_the_rule_and_its_file() {
    let fx = Fixture::new();
    let rule = baton_engine::permission::Rule::parse(
        "Bash(rm:*)",
        baton_engine::permission::RuleKind::Deny,
        Some(&fx.home),
        &fx.work,
    )
    .unwrap()
    .with_source("/proj/.claude/settings.json");
    let mut policy = RulePolicy::new();
    policy.push(rule);
    let target = PermissionTarget::Command("rm -rf x".into());
    let context = Context::new(&fx.work);
    let t = tool("Bash");
    let decision = policy.decide(&PermissionRequest {
        tool: &t,
        input: &json!({}),
        target: &target,
        read_only: false,
        context: &context,
        caller: None,
    });
    let PermissionDecision::Deny { reason } = decision else {
        panic!("{decision:?}")
    };
    assert!(reason.contains("Bash(rm:*)"), "{reason}");
    assert!(reason.contains("/proj/.claude/settings.json"), "{reason}");
    assert!(!policy.denies_whole_tool("Bash"));
}

#[test]
fn whole_tool_denials_remove_tools_from_the_pool() {
    let policy = RulePolicy::parse(
        &[],
        &[],
        &["WebSearch", "mcp__evil", "Bash(rm:*)"],
        None,
        Path::new("/p"),
    )
    .unwrap();
    assert!(policy.denies_whole_tool("WebSearch"));
    assert!(policy.denies_whole_tool("mcp__evil__anything"));
    assert!(!policy.denies_whole_tool("Bash"));
    assert!(!policy.denies_whole_tool("mcp__evil2__x"));
}
