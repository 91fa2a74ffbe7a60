//! Behaviour tests of the file tools, run through the engine pipeline so the
//! schema and `validate_input` stages are exercised with the tool logic.

mod concurrency_tests;
mod edit_tests;
mod judged_tests;
mod notebook_tests;
mod race_tests;
mod read_tests;
pub(crate) mod swapper;
mod symlink_tests;
mod write_tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::{
    CallResult, Context, Outcome, Pipeline, Session, ToolContext, ToolPool, ToolUse,
};
use serde_json::Value;

/// A workspace directory, a session and a pipeline holding the file tools.
pub(super) struct Env {
    _dir: tempfile::TempDir,
    _state: tempfile::TempDir,
    pub root: PathBuf,
    pub session: Arc<Session>,
    pub pipeline: Pipeline,
    next_id: std::sync::atomic::AtomicUsize,
}

impl Env {
    pub(super) fn new() -> Env {
        Env::with_pipeline(|p| p)
    }

    pub(super) fn with_pipeline(customise: impl FnOnce(Pipeline) -> Pipeline) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Env {
            session: Session::new("files-test", state.path()),
            pipeline: customise(Pipeline::allow_all_unsafe(ToolPool::of(super::tools()))),
            root,
            _dir: dir,
            _state: state,
            next_id: Default::default(),
        }
    }

    pub(super) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub(super) fn p(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    pub(super) fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub(super) fn ctx(&self) -> ToolContext {
        ToolContext::standalone("test", Context::new(&self.root), self.session.clone())
    }

    pub(super) async fn call(&self, tool: &str, input: Value) -> CallResult {
        let n = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let prepared = self
            .pipeline
            .prepare(ToolUse::new(format!("call-{n}"), tool, input));
        self.pipeline.run(prepared, self.ctx()).await
    }

    pub(super) async fn read(&self, rel: &str) -> CallResult {
        let r = self
            .call("Read", serde_json::json!({ "file_path": self.p(rel) }))
            .await;
        assert_ok(&r);
        r
    }
}

pub(super) fn assert_ok(r: &CallResult) {
    assert!(
        !r.is_error,
        "expected success, got {:?}: {}",
        r.outcome,
        r.text()
    );
    assert_eq!(r.outcome, Outcome::Success);
}

/// An error result whose text contains every one of `needles`.
pub(super) fn assert_err(r: &CallResult, outcome: Outcome, needles: &[&str]) {
    assert!(r.is_error, "expected an error, got success: {}", r.text());
    assert_eq!(r.outcome, outcome, "{}", r.text());
    let text = r.text();
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` not in: {text}");
    }
}

pub(super) fn content(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Makes `path` unreadable; returns false when this process can read it
/// anyway (root ignores file modes). The caller then returns, after
/// [`rerun_without_dac_override`] ran the same test in a child that cannot.
pub(super) fn make_unreadable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::read(path).is_err()
}

/// Set in a child test process started by [`rerun_without_dac_override`].
const UNPRIVILEGED_MARK: &str = "BATON_FILES_TEST_UNPRIVILEGED";
/// Set in a child test process started by [`rerun_with_file_size_limit`].
pub(super) const FSIZE_MARK: &str = "BATON_FILES_TEST_FSIZE";

/// Runs the test `name` again in a child process whose capability bounding
/// set lacks the two capabilities that let root read and write regardless of
/// file modes, so the permission-denied paths are really exercised. Skips
/// (with a printed note) when that is not possible.
pub(super) fn rerun_without_dac_override(name: &str) {
    if std::env::var_os(UNPRIVILEGED_MARK).is_some() {
        eprintln!("note: still privileged after dropping capabilities; skipping the permission-denied assertion of {name}");
        return;
    }
    rerun(
        name,
        "setpriv",
        &[
            "--bounding-set=-dac_override,-dac_read_search",
            "--inh-caps=-all",
        ],
        UNPRIVILEGED_MARK,
    );
}

/// Runs the test `name` again in a child process that may not write files
/// larger than `bytes` (RLIMIT_FSIZE, with SIGXFSZ ignored so the write
/// fails with EFBIG instead of killing the process): a disk that fills up
/// in the middle of a write.
pub(super) fn rerun_with_file_size_limit(name: &str, bytes: u64) {
    let limit = format!("--fsize={bytes}:{bytes}");
    rerun(
        name,
        "prlimit",
        &[&limit, "sh", "-c", "trap '' XFSZ; exec \"$0\" \"$@\""],
        FSIZE_MARK,
    );
}

fn rerun(name: &str, program: &str, args: &[&str], mark: &str) {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(program)
        .args(args)
        .arg(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(mark, "1")
        .output();
    match output {
        Ok(out) => {
            let log = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success(),
                "{name} failed under {program}:\n{log}"
            );
            assert!(
                log.contains("1 passed"),
                "{name} did not run in the child:\n{log}"
            );
        }
        Err(e) => eprintln!("note: cannot run {program} ({e}); skipping {name}'s fault injection"),
    }
}

/// Sets a file's mtime into the past, so a later rewrite surely moves it.
pub(super) fn age(path: &Path) {
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(past).unwrap();
}
