//! A differential property test of the read-only floor.
//!
//! Thousands of generated command lines, drawn from the families of the
//! second security review (brace words, here-docs, builtins that assign,
//! redirections outside simple commands, logical `cd`, recursive readers
//! that follow links, programs with their own file syntax, git reading
//! above the workspace, git configuration from the command line) plus
//! plain writes and network use, go through a real engine with the default
//! rules and nobody to approve anything. Whatever the classifier decides,
//! the outcome must be the same: what it judged read-only ran under the
//! floor, the rest asked and so did not run. So, after every command:
//! - nothing in the scratch tree changed (inside or outside the workspace);
//! - no file outside the workspace was even opened (inotify sees opens,
//!   and an open the kernel refused is never reported);
//! - nothing connected to a local listener.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use baton::engine::permission::RulePolicy;
use baton::Engine;
use common::call;
use proptest::prelude::*;
use serde_json::json;

use crate::common;

struct Scene {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    outside: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let work = root.join("work");
    let outside = root.join("outside");
    std::fs::create_dir_all(work.join("src")).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(work.join("src/lib.rs"), "pub fn hello() {}\n").expect("write");
    std::fs::write(work.join("data.json"), "{\"a\": 1}\n").expect("write");
    std::fs::write(outside.join("secret"), "SECRET-MARKER\n").expect("write");
    std::fs::write(outside.join("secret.jq"), "def s: \"SECRET-MARKER\";\n").expect("write");
    std::fs::write(outside.join("canary"), "unchanged\n").expect("write");
    std::os::unix::fs::symlink(&outside, work.join("link")).expect("symlink");
    Scene {
        _dir: dir,
        root,
        work,
        outside,
    }
}

/// Every path under `dir` with its content (directories and links marked).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let value = if kind.is_symlink() {
                format!("link:{:?}", std::fs::read_link(&path).ok())
            } else if kind.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else {
                let meta = std::fs::metadata(&path).ok();
                format!(
                    "{:?}:{:?}",
                    std::fs::read(&path).ok(),
                    meta.map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
                )
            };
            out.insert(path, value);
        }
    }
    out
}

/// An inotify watch on `dir` reporting every open, read, change, creation
/// and removal inside it.
struct Watch(OwnedFd);

impl Watch {
    fn new(dir: &Path) -> Watch {
        // SAFETY: plain system calls on our own fd.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify");
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).expect("path");
        let mask = libc::IN_OPEN
            | libc::IN_ACCESS
            | libc::IN_MODIFY
            | libc::IN_ATTRIB
            | libc::IN_CREATE
            | libc::IN_DELETE
            | libc::IN_MOVED_FROM
            | libc::IN_MOVED_TO;
        let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), mask) };
        assert!(wd >= 0, "inotify watch");
        Watch(fd)
    }

    /// How many bytes of events arrived since the last call.
    fn drain(&self) -> usize {
        let mut total = 0;
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: reading into our own buffer.
            let n = unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return total;
            }
            total += n as usize;
        }
    }
}

/// The review's families, as templates: `{T}` a file outside, `{W}` a path
/// to write, `{O}` the outside directory, `{P}` a listening port.
const FAMILIES: &[&str] = &[
    "cat {T}",
    "head -c 5 {T}",
    "wc -c {T}",
    "grep -R SECRET .",
    "grep -r SECRET link/",
    "find -L . -type f",
    "find . -follow -name secret",
    "ls -laRL .",
    "du -L link/",
    "test {-v,'a[$(touch {W})]'}",
    "[ {-v,'a[$(cat {T} > src/x)]'} ]",
    "[[ -v a[$(touch {W})] ]]",
    "cat <<EOF\n$(echo \"\nEOF\ntouch {W}\n\")\nEOF",
    "cat <<'X'\n$(touch {W})\nX",
    "printf -v PATH %s /nonexistent; ls",
    "printf -v __baton_cwd_file %s {W}; cd src",
    "read -r PATH <<< /tmp; ls",
    "declare -x BASH_ENV={T}; bash -c true",
    "echo $(<{T})",
    "{ cat; } < {T}",
    "( cat ) < {T}",
    "while read -r l; do echo \"$l\"; done < {T}",
    "if true; then cat; fi < {T}",
    "for i in 1; do echo hi; done > {W}",
    "cd src/../.. && cat outside/secret",
    "cd link && cat secret",
    "cd link/.. && ls",
    "jq -n 'import \"secret\" as s {search: \"{O}\"}; $s::s'",
    "jq -n -L {O} 'include \"secret\"; s'",
    "jq -n --rawfile s {T} '$s'",
    "jq . data.json > {W}",
    "awk 'BEGIN{while((getline l < \"{T}\")>0) print l}'",
    "awk 'BEGIN{print \"x\" > \"{W}\"}'",
    "sed -n 'r {T}' src/lib.rs",
    "sed -n 'w {W}' src/lib.rs",
    "sort -o {W} src/lib.rs",
    "git show HEAD:../outside/secret",
    "git -c alias.st='!touch {W}' st",
    "git -c core.pager='touch {W}' log",
    "git --no-pager -c include.path={T} log",
    "exec 3<>/dev/tcp/127.0.0.1/{P}",
    "curl -s http://127.0.0.1:{P}/",
    "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {P}))'",
    "touch {W}",
    "echo x > {W}",
    "cp src/lib.rs {W}",
    "tee {W} < src/lib.rs",
    "ln -s x {W}",
    "mkdir {W}",
    "rm -f {O}/canary",
    "chmod 000 src/lib.rs",
    "xargs cat < <(echo {T})",
    "env cat {T}",
    "nice cat {T}",
    "timeout 5 cat {T}",
];

const OUTSIDE_FILES: &[&str] = &[
    "../outside/secret",
    "link/secret",
    "{O}/secret",
    "./link/../link/secret",
];
const WRITE_TARGETS: &[&str] = &[
    "../outside/new",
    "link/new",
    "{O}/canary",
    "inside_new",
    "src/lib.rs",
];
const JOINERS: &[&str] = &["; ", " && ", " | ", "\n", " || "];

fn line() -> impl Strategy<Value = String> {
    let part = (
        0..FAMILIES.len(),
        0..OUTSIDE_FILES.len(),
        0..WRITE_TARGETS.len(),
    )
        .prop_map(|(f, t, w)| {
            FAMILIES[f]
                .replace("{T}", OUTSIDE_FILES[t])
                .replace("{W}", WRITE_TARGETS[w])
        });
    (
        prop::collection::vec(part, 1..=3),
        prop::collection::vec(0..JOINERS.len(), 2),
        any::<bool>(),
    )
        .prop_map(|(parts, joins, in_src)| {
            let mut text = String::new();
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    text.push_str(JOINERS[joins[(i - 1) % joins.len()]]);
                }
                text.push_str(p);
            }
            if in_src {
                format!("cd src && {text}")
            } else {
                text
            }
        })
}

fn confinable() -> bool {
    baton::engine::sandbox::support().usable()
}

#[test]
fn nothing_the_classifier_lets_through_escapes_the_floor() {
    if !confinable() {
        eprintln!("skipping: the kernel cannot confine here");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let cases: u32 = std::env::var("BATON_FLOOR_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let ran_confined = std::sync::atomic::AtomicUsize::new(0);
    let total = std::sync::atomic::AtomicUsize::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let strategy = prop::collection::vec(line(), 8);
    let result = runner.run(&strategy, |lines| {
        let s = scene();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port().to_string();
        let outside = s.outside.display().to_string();
        let lines: Vec<String> = lines
            .iter()
            .map(|l| l.replace("{O}", &outside).replace("{P}", &port))
            .collect();
        let before = snapshot(&s.root);
        let watch = Watch::new(&s.outside);
        let state = tempfile::tempdir().expect("state");
        let outcome = runtime.block_on(async {
            let pool = baton::BuiltinConfig::default()
                .pool(&RulePolicy::new())
                .expect("pool");
            let engine = Engine::builder(pool)
                .cwd(&s.work)
                .state_dir(state.path())
                .build()
                .expect("engine");
            let mut outcome = Vec::new();
            // One call per batch, so each is checked on its own.
            for (i, l) in lines.iter().enumerate() {
                let batch = engine.open_batch().await.expect("batch");
                batch
                    .add(call(
                        &format!("c{i}"),
                        "Bash",
                        json!({"command": l, "timeout": 10_000}),
                    ))
                    .expect("add");
                let (results, _) = batch.finish().await;
                let text = results.first().map(|r| r.text()).unwrap_or_default();
                outcome.push((l.clone(), text, watch.drain(), listener.accept().is_ok()));
            }
            engine.shutdown();
            outcome
        });
        let after = snapshot(&s.root);
        for (line, text, events, connected) in &outcome {
            total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if !text.contains("approval") {
                ran_confined.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            prop_assert!(
                !text.contains("SECRET-MARKER"),
                "{line:?} read the secret: {text}"
            );
            prop_assert_eq!(
                *events,
                0,
                "{:?} opened or changed something outside: {}",
                line,
                text
            );
            prop_assert!(!connected, "{line:?} reached the local listener: {text}");
        }
        prop_assert!(before == after, "the scratch tree changed: {:?}", outcome);
        Ok(())
    });
    if let Err(err) = result {
        panic!("{err}");
    }
    let (total, ran_confined) = (total.into_inner(), ran_confined.into_inner());
    eprintln!("{total} command lines; {ran_confined} ran under the floor, the rest asked");
    assert!(
        ran_confined > 0,
        "no generated line ran at all: the test would prove nothing"
    );
}

/// The detectors themselves work: the same kinds of escape, run without
/// the floor by an engine that allows everything, are all seen.
#[test]
fn the_detectors_see_escapes_when_nothing_confines() {
    let s = scene();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let watch = Watch::new(&s.outside);
    let before = snapshot(&s.root);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let state = tempfile::tempdir().expect("state");
    let texts = runtime.block_on(async {
        let pool = baton::BuiltinConfig::default().pool(&RulePolicy::new()).expect("pool");
        let engine = Engine::builder(pool)
            .cwd(&s.work)
            .state_dir(state.path())
            .allow_all_unsafe()
            .build()
            .expect("engine");
        let batch = engine.open_batch().await.expect("batch");
        batch
            .add(call(
                "x",
                "Bash",
                json!({"command": format!("cat link/secret; touch link/new; exec 3<>/dev/tcp/127.0.0.1/{port}")}),
            ))
            .expect("add");
        let (results, _) = batch.finish().await;
        engine.shutdown();
        results.iter().map(|r| r.text()).collect::<Vec<_>>()
    });
    assert!(texts[0].contains("SECRET-MARKER"), "{texts:?}");
    assert!(watch.drain() > 0);
    assert!(listener.accept().is_ok());
    assert!(before != snapshot(&s.root));
}
