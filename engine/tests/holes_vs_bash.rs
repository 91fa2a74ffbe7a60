//! Differential test of the second review's holes against real bash.
//!
//! A scratch tree holds a workspace `w/` (with a secret `.env`, a link
//! `link_out` pointing out and a link `deeplink` pointing further in) next
//! to `out/`, `home/` and a git repository at the top. Generated lines mix
//! the review's families (brace words, here-documents, assignments,
//! redirections of compound commands, `cd` with `..`, link-following
//! readers, jq/awk/sed/sort file syntax, git `-c`). Each line the
//! classifier calls read-only is run by bash in `w/`, watched with
//! inotify:
//! - a read-only line changes nothing, anywhere;
//! - a line the policy allows without asking opens nothing outside `w/`;
//! - a line allowed under `deny: Read(.env)` does not open `.env`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::permission::{
    PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest, PermissionTarget,
    RulePolicy,
};
use baton_engine::{Context, Tool, ToolDef};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use proptest::prelude::*;
use serde_json::json;

use crate::common;

struct Scratch {
    _dir: tempfile::TempDir,
    top: PathBuf,
    work: PathBuf,
    inotify: Inotify,
    /// Watched directory and whether it is outside the workspace.
    watches: HashMap<WatchDescriptor, (PathBuf, bool)>,
}

/// What bash did, as inotify saw it.
#[derive(Debug, Default)]
struct Seen {
    changed: Vec<String>,
    opened_outside: Vec<String>,
    opened_env: bool,
}

const CHANGES: AddWatchFlags = AddWatchFlags::IN_CREATE
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_MODIFY)
    .union(AddWatchFlags::IN_MOVED_FROM)
    .union(AddWatchFlags::IN_MOVED_TO)
    .union(AddWatchFlags::IN_CLOSE_WRITE)
    .union(AddWatchFlags::IN_DELETE_SELF);

fn git(dir: &Path, home: &Path, args: &[&str]) {
    // No background maintenance: a detached `git maintenance` writing
    // `.git/objects/maintenance.lock` after the commit would look like a
    // write by the command under test.
    let status = Command::new("git")
        .args(["-c", "maintenance.auto=false", "-c", "gc.auto=0"])
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let (work, out, home) = (top.join("w"), top.join("out"), top.join("home"));
        for d in [work.join("src/deep"), out.clone(), home.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        let write = |p: PathBuf, text: &str| std::fs::write(p, text).unwrap();
        write(out.join("secret"), "secret\n");
        write(out.join("secret.json"), "{\"s\":1}\n");
        write(out.join("mod.jq"), "def f: 1;\n");
        write(out.join("cfg"), "[alias]\n\tst = !touch M10\n");
        write(work.join(".env"), "KEY=1\n");
        write(work.join("src/a.rs"), "fn a() {}\nsecret\n");
        write(work.join("src/data.json"), "{\"a\":1}\n");
        write(work.join("list0"), "../out/secret\0");
        write(work.join("names"), "../out/secret\n");
        write(
            work.join("SUMS"),
            "0000000000000000000000000000000000000000000000000000000000000000  ../out/secret\n",
        );
        std::os::unix::fs::symlink(&out, work.join("link_out")).unwrap();
        std::os::unix::fs::symlink(work.join("src/deep"), work.join("deeplink")).unwrap();
        git(&top, &home, &["init", "-q"]);
        git(&top, &home, &["add", "out"]);
        git(
            &top,
            &home,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "x",
            ],
        );
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK).unwrap();
        let mut watches = HashMap::new();
        // The repository above the workspace: `git show HEAD:out/secret`
        // reads its objects, not `out/`.
        let mut dirs = vec![
            (top.clone(), true),
            (out, true),
            (home, true),
            (work.clone(), false),
            (work.join("src"), false),
            (work.join("src/deep"), false),
        ];
        let mut pending = vec![top.join(".git")];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    pending.push(entry.path());
                }
            }
            dirs.push((dir, true));
        }
        for (path, outside) in dirs {
            let flags = if outside {
                AddWatchFlags::IN_ALL_EVENTS
            } else {
                CHANGES | AddWatchFlags::IN_OPEN
            };
            let wd = inotify.add_watch(&path, flags).unwrap();
            watches.insert(wd, (path, outside));
        }
        Scratch {
            _dir: dir,
            top,
            work,
            inotify,
            watches,
        }
    }

    fn events(&self) -> Seen {
        let mut seen = Seen::default();
        // Events arrive asynchronously but are queued before the writing
        // or opening system call returns, so after the process has exited
        // every event is already readable.
        while let Ok(events) = self.inotify.read_events() {
            if events.is_empty() {
                break;
            }
            for e in events {
                let Some((dir, outside)) = self.watches.get(&e.wd) else {
                    continue;
                };
                let name = e
                    .name
                    .as_ref()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let shown = format!("{}/{name} {:?}", dir.display(), e.mask);
                // `git status` refreshes the index's stat cache (a lock
                // file renamed over `.git/index`) unless optional locks are
                // off; the index describes the same content before and
                // after, and the classifier counts it as a read (see
                // docs/bash-matching.md).
                let stat_cache = dir.ends_with(".git") && name.starts_with("index");
                if e.mask.intersects(CHANGES) && !stat_cache {
                    seen.changed.push(shown.clone());
                }
                let opened = e.mask.intersects(
                    AddWatchFlags::IN_OPEN
                        | AddWatchFlags::IN_ACCESS
                        | AddWatchFlags::IN_CLOSE_NOWRITE,
                );
                // The top's watch also reports the workspace itself,
                // which is inside.
                let workspace = *dir == self.top && name == "w";
                if *outside && opened && !workspace {
                    seen.opened_outside.push(shown);
                } else if opened && *dir == self.work && name == ".env" {
                    seen.opened_env = true;
                }
            }
        }
        seen
    }

    /// Runs `line` with bash in the workspace and reports what it did.
    fn run(&self, line: &str) -> Seen {
        self.events();
        let child = Command::new("bash")
            .arg("-c")
            .arg(line)
            .current_dir(&self.work)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.top.join("home"))
            .env("LANG", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            panic!("bash did not start");
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
            }
        }
        self.events()
    }
}

fn allowed(work: &Path, deny: &[&str], line: &str) -> bool {
    let Ok(policy) = RulePolicy::parse(&[], &[], deny, None, work) else {
        return false;
    };
    let tool = Arc::new(
        Tool::raw(
            ToolDef::new("Bash", "t"),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    );
    let target = PermissionTarget::Command(line.to_string());
    let context = Context::new(work)
        .with_roots(vec![work.to_path_buf()])
        .with_mode(PermissionMode::Default);
    matches!(
        policy.decide(&PermissionRequest {
            tool: &tool,
            input: &json!({}),
            target: &target,
            read_only: baton_engine::shell::is_read_only(line),
            context: &context,
            caller: None,
        }),
        PermissionDecision::Allow
    )
}

/// Checks one line; `Err` says what went wrong.
fn judge(scratch: &Scratch, line: &str) -> Result<bool, String> {
    if !baton_engine::shell::is_read_only(line) {
        return Ok(false);
    }
    let free = allowed(&scratch.work, &[], line);
    let env_free = allowed(&scratch.work, &["Read(.env)"], line);
    let seen = scratch.run(line);
    if !seen.changed.is_empty() {
        return Err(format!(
            "{line:?} is read-only but changed {:?}",
            seen.changed
        ));
    }
    if free && !seen.opened_outside.is_empty() {
        return Err(format!(
            "{line:?} is allowed without asking but opened {:?}",
            seen.opened_outside
        ));
    }
    if env_free && seen.opened_env {
        return Err(format!(
            "{line:?} is allowed under Read(.env) but read .env"
        ));
    }
    Ok(true)
}

/// The review's families, with harmful and harmless members.
const FRAGMENTS: &[&str] = &[
    // Brace words.
    "test {-v,'a[$(touch M1)]'}",
    "[ {-v,'a[$(touch M1)]'} ]",
    "test -n {a,b}",
    "cat {src/a.rs,../out/secret}",
    "grep {-R,x} .",
    "wc -l {src/a.rs,.env}",
    "sort {-o,M2} src/a.rs",
    // Here-documents.
    "cat <<EOF\n$(echo \"\nEOF\ntouch M3\n\")\nEOF\n",
    "cat <<EOF\n$(echo '\nEOF\ntouch M3\n')\nEOF\n",
    "cat <<'EOF'\nplain\nEOF\n",
    "cat <<EOF\n$(cat ../out/secret)\nEOF\n",
    // Assignments.
    "printf %n PATH",
    "printf -v PATH x",
    "read PATH < src/a.rs",
    "for __baton_x in 1; do :; done",
    "printf '%s' x",
    "echo ${X:=1}",
    // Redirections of compound commands.
    "{ cat; } < ../out/secret",
    "( cat ) < link_out/secret",
    "while read -r l; do :; done < ../out/secret",
    "echo \"$(<../out/secret)\"",
    "echo \"$(<.env)\"",
    "if true; then cat; fi < src/a.rs",
    "for x in 1; do echo; done > M4",
    "{ ls; } > ../out/M5",
    // cd with `..`.
    "cd deeplink/../.. && cat out/secret",
    "cd -P deeplink/../.. && ls",
    "cd link_out/.. && ls",
    "cd src/deep/.. && ls",
    "cd .. && ls",
    "cd",
    // Link-following readers.
    "grep -R secret .",
    "grep -r secret .",
    "find -L . -name secret",
    "find . -follow -name x",
    "ls -RL",
    "ls -R",
    "du -L -s .",
    "du -s .",
    "diff -r src link_out",
    "diff -r --no-dereference src deeplink",
    // Programs with file syntax of their own.
    "jq -n 'import \"secret\" as $s {search: \"../out\"}; $s'",
    "jq -n 'include \"mod\" {search: \"../out\"}; f'",
    "jq . src/data.json",
    "sed 'r ../out/secret' src/a.rs",
    "sed -n 'w M6' src/a.rs",
    "sed -n 1p src/a.rs",
    "sed 's/fn/gn/' src/a.rs",
    "sed '1s/.*/touch M11/e' src/a.rs",
    "sed 's/fn/gn/w M12' src/a.rs",
    "awk '{getline x < \"../out/secret\"}' src/a.rs",
    "sort -o M7 src/a.rs",
    "sort src/a.rs",
    "wc --files0-from=list0",
    "sha256sum -c SUMS",
    "file -f names",
    "grep -f ../out/secret src/a.rs",
    "head -c 1 .env",
    "cat .e*",
    "cat ./.env",
    // git configuration and the repository above the workspace.
    "git -c alias.st='!touch M8' st",
    "git -c core.pager='touch M9' -p log",
    "git -c include.path=../out/cfg st",
    "git log --oneline",
    "git show HEAD:out/secret",
    "git status",
];

const CONNECTORS: &[&str] = &["; ", " && ", " || ", " | ", "\n"];

fn line_strategy() -> impl Strategy<Value = String> {
    let fragment = (prop::sample::select(FRAGMENTS), 0..4u8).prop_map(|(f, wrap)| match wrap {
        1 if !f.contains('\n') => format!("echo $({f})"),
        2 if !f.contains('\n') => format!("{{ {f}; }}"),
        3 if !f.contains('\n') => format!("({f})"),
        _ => f.to_string(),
    });
    prop::collection::vec((fragment, prop::sample::select(CONNECTORS)), 1..4).prop_map(|parts| {
        let mut line = String::new();
        for (i, (f, c)) in parts.iter().enumerate() {
            if i > 0 {
                line.push_str(c);
            }
            line.push_str(f);
        }
        line
    })
}

/// Every fragment alone, so each family runs at least once.
#[test]
fn each_fragment_alone_keeps_the_floor() {
    let scratch = Scratch::new();
    let mut wrong = Vec::new();
    let mut ran = 0;
    for f in FRAGMENTS {
        match judge(&scratch, f) {
            Ok(true) => ran += 1,
            Ok(false) => {}
            Err(e) => wrong.push(e),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    eprintln!(
        "{ran} of {} fragments were read-only and ran",
        FRAGMENTS.len()
    );
    assert!(ran >= 10, "only {ran} fragments were read-only");
}

/// The watch sees what it must: reads outside, reads of `.env`, writes.
#[test]
fn the_watch_catches_reads_and_writes() {
    let scratch = Scratch::new();
    let seen = scratch.run("cat ../out/secret");
    assert!(!seen.opened_outside.is_empty(), "{seen:?}");
    let seen = scratch.run("grep -R secret .");
    assert!(!seen.opened_outside.is_empty(), "{seen:?}");
    let seen = scratch.run("echo \"$(<.env)\"");
    assert!(seen.opened_env, "{seen:?}");
    let seen = scratch.run("cat <<EOF\n$(echo \"\nEOF\ntouch M3\n\")\nEOF\n");
    assert!(
        !seen.changed.is_empty(),
        "bash ran the hidden touch: {seen:?}"
    );
    let seen = scratch.run("test {-v,'a[$(touch M1)]'}");
    assert!(!seen.changed.is_empty(), "{seen:?}");
    let seen = scratch.run("cat src/a.rs");
    assert!(
        seen.changed.is_empty() && seen.opened_outside.is_empty(),
        "{seen:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_lines_keep_the_floor(line in line_strategy()) {
        thread_local! {
            static SCRATCH: Scratch = Scratch::new();
        }
        let verdict = SCRATCH.with(|s| judge(s, &line));
        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
    }
}
