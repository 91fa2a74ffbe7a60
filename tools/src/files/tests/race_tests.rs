//! The swap race: a real background process exchanges a directory inside
//! the workspace with a link to a directory outside it, while the file tools
//! are called on paths through that directory, judged by the real rules
//! (`acceptEdits`, the workspace bounds, a `Read` deny rule on the outside).
//!
//! Before the tools opened the judged object, the permission stage and the
//! tool each resolved the path: judged inside, opened through the link,
//! Write and apply_patch landed outside and Read and Grep printed the
//! denied file. Now each call either acts on the real directory or fails
//! with "changed"; nothing outside is ever touched or shown.

use std::path::PathBuf;
use std::sync::Arc;

use baton_engine::{
    CallResult, Context, PermissionMode, Pipeline, RulePolicy, Session, ToolContext, ToolPool,
    ToolUse,
};
use serde_json::{json, Value};

use super::swapper::Swapper;
use crate::registry::BuiltinConfig;

const SECRET: &str = "TOP SECRET: the outside twin";
const OUTSIDE_NAME: &str = "outside-only-name.txt";
const ROUNDS: usize = 300;

struct Race {
    _base: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    session: Arc<Session>,
    pipeline: Pipeline,
}

impl Race {
    /// `ws/dir` (a real directory holding a harmless `f.txt`) and `ws/alt`
    /// (a link to `outside`, holding `f.txt` with the secret): the swapper
    /// exchanges the two names.
    fn new() -> Race {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        let (ws, outside) = (root.join("ws"), root.join("outside"));
        std::fs::create_dir_all(ws.join("dir")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join("dir/f.txt"), "harmless\n").unwrap();
        std::fs::write(outside.join("f.txt"), format!("{SECRET}\n")).unwrap();
        std::fs::write(outside.join(OUTSIDE_NAME), format!("{SECRET}\n")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("alt")).unwrap();
        // The secret is denied by a rule; the other outside file only by
        // the workspace bounds (reading outside asks, and nobody answers).
        let deny = format!("Read(/{}/f.txt)", outside.display());
        let policy = RulePolicy::parse(&[], &[], &[deny.as_str()], None, &ws).unwrap();
        let config = BuiltinConfig::default();
        let mut tools = super::super::tools();
        tools.push(crate::apply_patch::tool().unwrap());
        tools.push(crate::grep::tool(&config).unwrap());
        tools.push(crate::glob::tool(&config).unwrap());
        Race {
            session: Session::new("race", root.join("state")),
            pipeline: Pipeline::new(ToolPool::of(tools)).with_policy(Arc::new(policy)),
            ws,
            outside,
            _base: base,
        }
    }

    async fn call(&self, id: String, tool: &str, input: Value) -> CallResult {
        let context = Context::new(&self.ws).with_mode(PermissionMode::AcceptEdits);
        let ctx = ToolContext::standalone(id.clone(), context, self.session.clone());
        let prepared = self.pipeline.prepare(ToolUse::new(id, tool, input));
        self.pipeline.run(prepared, ctx).await
    }

    /// Fails the test if anything but the two original files is outside.
    fn assert_outside_untouched(&self, round: usize, last: &str) {
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            vec!["f.txt".to_string(), OUTSIDE_NAME.to_string()],
            "round {round}: a write landed outside the workspace; last result: {last}"
        );
        let secret = std::fs::read_to_string(self.outside.join("f.txt")).unwrap();
        assert_eq!(secret, format!("{SECRET}\n"), "round {round}");
    }
}

fn assert_not_shown(r: &CallResult, what: &str, round: usize) {
    let text = r.text();
    assert!(
        !text.contains(SECRET) && !text.contains(OUTSIDE_NAME),
        "round {round}: {what} showed what is outside the workspace: {text}"
    );
}

/// Whether a call failed because the path changed under it (the new
/// behaviour) — counted only to report how often the race was met.
fn changed(r: &CallResult) -> bool {
    r.is_error && r.text().contains("changed while it was being opened")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapped_in_link_never_takes_a_call_outside() {
    let race = Race::new();
    let Some(swapper) = Swapper::start(&race.ws, "dir", "alt", std::time::Duration::ZERO) else {
        return;
    };
    let (mut wrote, mut read, mut refused) = (0, 0, 0);
    let target = |name: String| race.ws.join("dir").join(name);
    for round in 0..ROUNDS {
        let id = |tool: &str| format!("{tool}-{round}");
        let path = target(format!("w-{round}.txt"));
        let input = json!({ "file_path": path, "content": "written by Write\n" });
        let r = race.call(id("write"), "Write", input).await;
        wrote += usize::from(!r.is_error);
        refused += usize::from(changed(&r));
        race.assert_outside_untouched(round, &r.text());

        let path = target(format!("p-{round}.txt"));
        let patch = format!(
            "*** Begin Patch\n*** Add File: {}\n+written by apply_patch\n*** End Patch",
            path.display()
        );
        let r = race
            .call(id("patch"), "apply_patch", json!({ "input": patch }))
            .await;
        race.assert_outside_untouched(round, &r.text());

        let input = json!({ "file_path": target("f.txt".into()) });
        let r = race.call(id("read"), "Read", input).await;
        assert_not_shown(&r, "Read", round);
        read += usize::from(r.text().contains("harmless"));
        refused += usize::from(changed(&r));

        let input = json!({ "pattern": "SECRET|harmless", "output_mode": "content" });
        let r = race.call(id("grep"), "Grep", input).await;
        assert_not_shown(&r, "Grep", round);

        let r = race
            .call(id("glob"), "Glob", json!({ "pattern": "**/*" }))
            .await;
        assert_not_shown(&r, "Glob", round);
    }
    let swaps = swapper.stop();
    eprintln!(
        "{ROUNDS} rounds, {swaps} exchanges: {wrote} writes and {read} reads went through, \
         {refused} calls refused as changed"
    );
    assert!(swaps > 1, "the swapper did not run");
    race.assert_outside_untouched(ROUNDS, "");
    // Every write reported done is in the real directory (under whichever
    // of the two names it has now), and nowhere else.
    let real = ["dir", "alt"]
        .iter()
        .map(|n| race.ws.join(n))
        .find(|p| !p.is_symlink())
        .unwrap();
    let written = std::fs::read_dir(&real)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("w-")
        })
        .count();
    assert_eq!(written, wrote);
    // Once nothing swaps any more, the same calls work: the refusals above
    // came from the race.
    let path = real.join("after.txt");
    let input = json!({ "file_path": path, "content": "after the race\n" });
    let r = race.call("write-after".into(), "Write", input).await;
    assert!(!r.is_error, "{}", r.text());
    let input = json!({ "file_path": real.join("f.txt") });
    let r = race.call("read-after".into(), "Read", input).await;
    assert!(r.text().contains("harmless"), "{}", r.text());
}
