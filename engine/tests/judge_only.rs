//! `Pipeline::judge`: the verdict the stages before a tool would reach,
//! with nothing run and nobody asked.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::permission::{FileAccess, PermissionMode, RulePolicy};
use baton_engine::pipeline::judge::Verdict;
use baton_engine::{
    async_trait, Context, PermissionTarget, Pipeline, Session, Tool, ToolContext, ToolDef,
    ToolError, ToolLogic, ToolOutput, ToolPool, ToolUse,
};
use serde_json::{json, Value};

/// Writes `file_path`, as its target says; running it is a failure.
struct Put;

#[async_trait]
impl ToolLogic<Value> for Put {
    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: PathBuf::from(input["file_path"].as_str().unwrap_or("")),
            access: FileAccess::Write,
        }
    }

    async fn validate_input(&self, input: &Value, _ctx: &ToolContext) -> Result<(), String> {
        match input["file_path"].as_str() {
            Some(p) if p.starts_with('/') => Ok(()),
            _ => Err("`file_path` must be absolute".into()),
        }
    }

    async fn call(&self, _input: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        panic!("judging a call must not run it")
    }
}

fn put() -> Tool {
    Tool::raw(
        ToolDef::new("Put", "Writes a file."),
        json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
        Put,
    )
    .unwrap()
}

struct Judging {
    pipeline: Pipeline,
    session: Arc<Session>,
    root: PathBuf,
    _dir: tempfile::TempDir,
}

impl Judging {
    fn new(deny: &[&str]) -> Judging {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let policy = RulePolicy::parse(&[], &[], deny, None, &root).unwrap();
        Judging {
            pipeline: Pipeline::new(ToolPool::of(vec![put()])).with_policy(Arc::new(policy)),
            session: Session::new("judge", root.join("state")),
            root,
            _dir: dir,
        }
    }

    async fn judge(&self, mode: PermissionMode, path: &Path, on: Option<&Path>) -> Verdict {
        let context = Context::new(&self.root)
            .with_roots(vec![self.root.clone()])
            .with_mode(mode);
        let ctx = ToolContext::standalone("c1", context, self.session.clone());
        let call = ToolUse::new("c1", "Put", json!({"file_path": path}));
        let on = on.map(|p| PermissionTarget::Path {
            path: p.to_path_buf(),
            access: FileAccess::Write,
        });
        let judged = self.pipeline.judge(call, ctx, on).await.unwrap();
        judged.verdict
    }
}

#[tokio::test]
async fn rules_protected_paths_roots_and_the_mode_decide_and_nothing_runs() {
    let j = Judging::new(&["Edit(/secret/**)"]);
    let root = j.root.clone();
    let edits = PermissionMode::AcceptEdits;

    assert_eq!(
        j.judge(edits, &root.join("src/a.rs"), None).await,
        Verdict::Allow
    );
    let denied = j.judge(edits, &root.join("secret/key"), None).await;
    assert!(
        matches!(&denied, Verdict::Deny { reason } if reason.contains("secret")),
        "{denied:?}"
    );
    let protected = j.judge(edits, &root.join(".git/config"), None).await;
    assert!(matches!(protected, Verdict::Ask { .. }), "{protected:?}");
    let outside = j.judge(edits, Path::new("/elsewhere/x"), None).await;
    assert!(
        matches!(&outside, Verdict::Ask { reason, .. } if reason.contains("outside")),
        "{outside:?}"
    );
    // Default mode: a write inside asks; dontAsk turns that into a denial.
    let asks = j
        .judge(PermissionMode::Default, &root.join("a.rs"), None)
        .await;
    assert!(matches!(asks, Verdict::Ask { .. }), "{asks:?}");
    let dont = j
        .judge(PermissionMode::DontAsk, &root.join("a.rs"), None)
        .await;
    assert!(matches!(dont, Verdict::Deny { .. }), "{dont:?}");
}

#[tokio::test]
async fn a_named_target_is_judged_instead_of_the_tools() {
    let j = Judging::new(&["Edit(/secret/**)"]);
    let root = j.root.clone();
    let (allowed, denied) = (root.join("src/a.rs"), root.join("secret/key"));
    let edits = PermissionMode::AcceptEdits;
    let on_denied = j.judge(edits, &allowed, Some(&denied)).await;
    assert!(matches!(on_denied, Verdict::Deny { .. }), "{on_denied:?}");
    assert_eq!(
        j.judge(edits, &denied, Some(&allowed)).await,
        Verdict::Allow
    );
}

#[tokio::test]
async fn what_never_reaches_the_permission_stage_is_an_error() {
    let j = Judging::new(&[]);
    let ctx = ToolContext::standalone("c1", Context::new(&j.root), j.session.clone());
    let unknown = ToolUse::new("c1", "Nope", json!({}));
    let err = j
        .pipeline
        .judge(unknown, ctx.clone(), None)
        .await
        .unwrap_err();
    assert!(err.contains("`Nope`"), "{err}");
    let relative = ToolUse::new("c1", "Put", json!({"file_path": "rel"}));
    let err = j.pipeline.judge(relative, ctx, None).await.unwrap_err();
    assert!(err.contains("must be absolute"), "{err}");
}
