//! Redirections through descriptors, judged by the classifier and run by
//! real bash holding a descriptor it inherited: number 87, open for reading
//! and writing on a file outside the workspace, as a host could leave one.
//! A line judged read-only neither writes through it nor reads from it.
//! (Baton's own commands no longer inherit such descriptors, see
//! `process::Launch`; the judgement must not rely on that alone.)

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use nix::libc;
use proptest::prelude::*;

const HELD: i32 = 87;
const SECRET: &str = "HELD-SECRET\n";

struct Scratch {
    _dir: tempfile::TempDir,
    work: std::path::PathBuf,
    held: std::fs::File,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        let work = dir.path().join("w");
        std::fs::create_dir_all(&work).expect("mkdir");
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("outside"))
            .expect("open");
        let mut scratch = Scratch {
            _dir: dir,
            work,
            held,
        };
        scratch.reset();
        scratch
    }

    fn reset(&mut self) {
        self.held.set_len(0).expect("truncate");
        self.held.rewind().expect("rewind");
        self.held.write_all(SECRET.as_bytes()).expect("write");
        self.held.rewind().expect("rewind");
    }

    fn held_content(&mut self) -> String {
        let mut text = String::new();
        self.held.rewind().expect("rewind");
        self.held.read_to_string(&mut text).expect("read");
        text
    }

    /// Runs `line` in the workspace with the held file as descriptor 87;
    /// its standard output.
    fn run(&self, line: &str) -> String {
        let fd = self.held.as_raw_fd();
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(line)
            .current_dir(&self.work)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // SAFETY: dup2 only, in the forked child; the copy has no
        // close-on-exec, so bash inherits it.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(fd, HELD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().expect("bash runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// What bash did with a line the classifier called read-only: `Err` when
/// it wrote through or read from the inherited descriptor, or wrote in
/// the workspace.
fn judge(scratch: &mut Scratch, line: &str) -> Result<bool, String> {
    if !baton_engine::shell::is_read_only(line) {
        return Ok(false);
    }
    scratch.reset();
    let out = scratch.run(line);
    let held = scratch.held_content();
    if held != SECRET {
        return Err(format!("{line:?} is read-only but wrote {held:?}"));
    }
    if out.contains(SECRET.trim()) {
        return Err(format!("{line:?} is read-only but read the held file"));
    }
    let made: Vec<_> = std::fs::read_dir(&scratch.work)
        .expect("list")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    if !made.is_empty() {
        return Err(format!("{line:?} is read-only but made {made:?}"));
    }
    Ok(true)
}

/// Redirections over the held descriptor, the standard ones and two the
/// line may open itself.
const REDIRECTIONS: &[&str] = &[
    ">&87",
    "<&87",
    "2>&87",
    "1>&87",
    "0<&87",
    "3>&87",
    "87>&1",
    "87>/dev/null",
    "87<&-",
    "87</dev/null",
    "3>&1",
    "3</dev/null",
    ">&3",
    "<&3",
    "4>&2",
    ">&4",
    "2>&4",
    "1>&2",
    "2>&1",
    ">&2",
    "3>&-",
];

const COMMANDS: &[&str] = &["echo x", "cat", "{ cat; }", "( echo x )", "echo $(cat)"];

fn line_strategy() -> impl Strategy<Value = String> {
    (
        prop::sample::select(COMMANDS),
        prop::collection::vec(prop::sample::select(REDIRECTIONS), 1..4),
        prop::collection::vec(prop::sample::select(REDIRECTIONS), 0..2),
    )
        .prop_map(|(cmd, inner, outer)| {
            let line = format!("{cmd} {}", inner.join(" "));
            if outer.is_empty() {
                line
            } else {
                format!("{{ {line}; }} {}", outer.join(" "))
            }
        })
}

#[test]
fn the_held_descriptor_is_reachable_by_bash() {
    // The control: bash really writes and reads through it.
    let mut scratch = Scratch::new();
    scratch.run("echo leaked >&87");
    assert_ne!(scratch.held_content(), SECRET);
    scratch.reset();
    assert!(scratch.run("cat <&87").contains(SECRET.trim()));
}

#[test]
fn lines_that_open_what_they_use_are_read_only_and_harmless() {
    let mut scratch = Scratch::new();
    for line in [
        "ls 3>&1 1>&2 2>&3",
        "echo x 3>/dev/null >&3",
        "echo x 87>/dev/null >&87",
        "cat 87</dev/null <&87",
    ] {
        assert_eq!(judge(&mut scratch, line), Ok(true), "{line}");
    }
    for line in ["echo x >&87", "cat <&87", "echo x >&87 87>/dev/null"] {
        assert_eq!(judge(&mut scratch, line), Ok(false), "{line}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_lines_never_use_the_inherited_descriptor(line in line_strategy()) {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::new());
        }
        let verdict = SCRATCH.with(|s| judge(&mut s.borrow_mut(), &line));
        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
    }
}
