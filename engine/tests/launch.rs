//! `process::Launch` (clone + exec without copying the parent) against
//! `std::process::Command` and against what the child reports about itself:
//! arguments and environment arrive byte for byte, the session or group is
//! new, signal dispositions and mask are the defaults, errors are clear, and
//! a child ends when the thread that started it ends or its handle is
//! dropped.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::time::{Duration, Instant};

use baton_engine::process::{Isolation, Launch};
use proptest::prelude::*;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `launch` with stdout and stderr on one pipe; returns the output and
/// the exit code.
fn output_of(mut launch: Launch) -> (Vec<u8>, i32) {
    let (mut reader, writer) = std::io::pipe().unwrap();
    let writer = OwnedFd::from(writer);
    launch.stdout(writer.try_clone().unwrap()).stderr(writer);
    runtime().block_on(async move {
        let (mut child, _tree) = launch.spawn().unwrap();
        let status = child.wait().await.unwrap();
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        (out, status.code().unwrap_or(-1))
    })
}

fn stat_fields(text: &str) -> Vec<String> {
    let close = text.rfind(')').unwrap();
    text[close + 2..].split(' ').map(str::to_owned).collect()
}

#[test]
fn arguments_environment_directory_and_streams_arrive() {
    let dir = tempfile::tempdir().unwrap();
    let mut launch = Launch::new("bash", Isolation::Session);
    launch
        .arg("-c")
        .arg(r#"printf '%s|' "$0" "$1" "$FOO" "$PWD"; echo err >&2; exit 7"#)
        .arg("zero")
        .arg("one two")
        .env("FOO", "first")
        .env("FOO", "second")
        .current_dir(dir.path());
    let (out, code) = output_of(launch);
    let want = format!("zero|one two|second|{}|err\n", dir.path().display());
    assert_eq!(String::from_utf8_lossy(&out), want);
    assert_eq!(code, 7);
}

#[test]
fn the_environment_is_the_same_as_with_std_command() {
    let script = "env -0 | grep -zv '^BATON_TREE=' | sort -z";
    let ours = output_of({
        let mut l = Launch::new("bash", Isolation::Group);
        l.arg("-c").arg(script).env("EXTRA", "x=y");
        l
    })
    .0;
    let std_out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("EXTRA", "x=y")
        .output()
        .unwrap()
        .stdout;
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&std_out)
    );
}

#[test]
fn a_session_or_a_group_of_its_own_with_default_signals() {
    // The shell's own stat line, and the status of a child it starts
    // (mask and ignored signals are inherited across fork and exec).
    let script = "cat /proc/$$/stat; echo; grep -E '^Sig(Blk|Ign)' /proc/self/status; \
                  yes | head -c 3 >/dev/null; echo pipe-ok";
    for (isolation, new_session) in [(Isolation::Session, true), (Isolation::Group, false)] {
        let mut launch = Launch::new("bash", isolation);
        launch.arg("-c").arg(script);
        let (out, code) = output_of(launch);
        let text = String::from_utf8_lossy(&out).into_owned();
        assert_eq!(code, 0, "{text}");
        let mut lines = text.lines();
        let stat = lines.next().unwrap();
        let pid: i32 = stat.split(' ').next().unwrap().parse().unwrap();
        let fields = stat_fields(stat);
        let (pgrp, session): (i32, i32) = (fields[2].parse().unwrap(), fields[3].parse().unwrap());
        assert_eq!(pgrp, pid, "{isolation:?}: a group of its own");
        let own_session = nix::unistd::getsid(None).unwrap().as_raw();
        if new_session {
            assert_eq!(session, pid, "a session of its own");
        } else {
            assert_eq!(session, own_session, "Baton's session");
        }
        assert!(text.contains("SigBlk:\t0000000000000000"), "{text}");
        // SIGPIPE (bit 13) is not ignored, so `yes | head` ends.
        let ign = text.lines().find(|l| l.starts_with("SigIgn:")).unwrap();
        let mask = u64::from_str_radix(ign.trim_start_matches("SigIgn:").trim(), 16).unwrap();
        assert_eq!(mask & (1 << 12), 0, "{text}");
        assert!(text.contains("pipe-ok"));
    }
}

#[test]
fn missing_program_or_directory_are_clear_errors() {
    let rt = runtime();
    rt.block_on(async {
        let err = Launch::new("no-such-program-baton-test", Isolation::Group)
            .spawn()
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
        assert!(err.to_string().contains("not found on PATH"), "{err}");

        let mut launch = Launch::new("bash", Isolation::Group);
        launch.current_dir("/no/such/directory");
        let err = launch.spawn().unwrap_err();
        assert!(err.to_string().contains("working directory"), "{err}");

        let mut launch = Launch::new("/etc/passwd", Isolation::Group);
        launch.arg("x");
        let err = launch.spawn().unwrap_err();
        assert!(err.to_string().contains("could not execute"), "{err}");

        let mut launch = Launch::new("bash", Isolation::Group);
        launch.env("A=B", "c");
        assert!(launch.spawn().is_err());
        let mut launch = Launch::new("bash", Isolation::Group);
        launch.arg("nul\0byte");
        assert!(launch.spawn().is_err());
    });
}

/// Waits until `pid` is a zombie or gone (true) or the time runs out.
fn ends_within(pid: i32, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) if stat_fields(&stat)[0] != "Z" => {}
            _ => return true,
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn a_child_dies_with_the_thread_that_started_it() {
    let pid = std::thread::spawn(|| {
        runtime().block_on(async {
            let mut launch = Launch::new("sleep", Isolation::Session);
            launch.arg("30");
            let (child, _tree) = launch.spawn().unwrap();
            let pid = child.id();
            // Not dropped: only PR_SET_PDEATHSIG can end it now.
            std::mem::forget(child);
            pid
        })
    })
    .join()
    .unwrap();
    assert!(
        ends_within(pid, Duration::from_secs(10)),
        "the child outlived its thread"
    );
    nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap();
}

#[test]
fn dropping_a_child_that_was_not_waited_for_kills_it() {
    let rt = runtime();
    let pid = rt.block_on(async {
        let mut launch = Launch::new("sleep", Isolation::Group);
        launch.arg("30");
        let (child, _tree) = launch.spawn().unwrap();
        child.id()
    });
    assert!(
        ends_within(pid, Duration::from_secs(10)),
        "the child survived its handle"
    );
}

#[test]
fn many_children_started_together_are_each_waited_for() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                tokio::spawn(async move {
                    let mut launch = Launch::new("bash", Isolation::Session);
                    launch.arg("-c").arg(format!("exit {i}"));
                    let (mut child, _tree) = launch.spawn().unwrap();
                    child.wait().await.unwrap().code()
                })
            })
            .collect();
        for (i, task) in tasks.into_iter().enumerate() {
            assert_eq!(task.await.unwrap(), Some(i as i32));
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Arguments and values with any bytes but NUL (invalid UTF-8, quotes,
    /// newlines, `=`) arrive exactly.
    #[test]
    fn any_bytes_arrive_exactly(
        args in proptest::collection::vec(proptest::collection::vec(1u8..=255, 0..40), 0..5),
        value in proptest::collection::vec(1u8..=255, 0..60),
    ) {
        let mut launch = Launch::new("bash", Isolation::Group);
        launch.arg("-c").arg(r#"printf '%s\0' "$@" "$BATON_PROP""#).arg("bash");
        for a in &args {
            launch.arg(OsString::from_vec(a.clone()));
        }
        launch.env("BATON_PROP", OsString::from_vec(value.clone()));
        let (out, code) = output_of(launch);
        prop_assert_eq!(code, 0);
        let mut want = Vec::new();
        for a in args.iter().chain([&value]) {
            want.extend_from_slice(std::ffi::OsStr::from_bytes(a).as_bytes());
            want.push(0);
        }
        prop_assert_eq!(out, want);
    }
}
