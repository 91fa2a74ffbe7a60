//! What a command started with `process::Launch` inherits, through the
//! real `clone` path: no descriptor of Baton's but those it placed, and,
//! when confined, no capability, with or without a user namespace of its
//! own.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::process::{Isolation, Launch};
use baton_engine::sandbox::{support, Policy, Prepared};

/// Runs `launch` with stdout and stderr on one pipe; the output.
fn output_of(mut launch: Launch) -> String {
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let writer = OwnedFd::from(writer);
    launch
        .stdout(writer.try_clone().expect("dup"))
        .stderr(writer);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let (mut child, _tree) = launch.spawn().expect("the command starts");
        child.wait().await.expect("wait");
        let mut out = String::new();
        reader.read_to_string(&mut out).expect("read");
        out
    })
}

/// `path` opened for appending the way a host hands a descriptor over:
/// without close-on-exec, at a number of 50 or above (well away from the
/// descriptors `ls` opens for itself).
fn inheritable(path: &Path) -> OwnedFd {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    // SAFETY: F_DUPFD (no close-on-exec) of a descriptor we hold; the copy
    // is owned below.
    let fd = unsafe { nix::libc::fcntl(file.as_raw_fd(), nix::libc::F_DUPFD, 50) };
    assert!(fd >= 0, "dup: {}", std::io::Error::last_os_error());
    // SAFETY: a fresh descriptor nobody else owns.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn write_through(fd: i32) -> String {
    format!("echo leaked >&{fd} && echo WROTE; ls /proc/self/fd | tr '\\n' ' '")
}

#[test]
fn a_descriptor_baton_inherited_does_not_reach_the_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "").expect("write");
    let held = inheritable(&outside);
    let fd = held.as_raw_fd();
    let script = write_through(fd);
    // Unconfined and confined commands alike.
    let floor = Prepared::new(&Policy::read_only(Policy::system_dirs()), support())
        .ok()
        .map(Arc::new);
    for confine in [None, floor] {
        let mut launch = Launch::new("bash", Isolation::Session);
        launch.arg("-c").arg(&script);
        if let Some(sandbox) = &confine {
            launch.confine(sandbox.clone());
        }
        let out = output_of(launch);
        assert!(!out.contains("WROTE"), "{out}");
        let listed: Vec<&str> = out.lines().last().unwrap_or("").split(' ').collect();
        assert!(
            !listed.contains(&fd.to_string().as_str()),
            "descriptor {fd} reached the command: {out}"
        );
    }
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "");
    // The control: a program started by `std` inherits it and writes.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(String::from_utf8_lossy(&out.stdout).contains("WROTE"));
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "leaked\n");
}

#[test]
fn the_descriptor_the_launch_places_still_arrives() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report");
    std::fs::write(&report, "").expect("write");
    for target in [5, 100] {
        let mut launch = Launch::new("bash", Isolation::Session);
        launch
            .arg("-c")
            .arg(format!("echo {target} >&{target}"))
            .fd(target, inheritable(&report));
        output_of(launch);
    }
    assert_eq!(std::fs::read_to_string(&report).expect("read"), "5\n100\n");
}

struct Scene {
    _dir: tempfile::TempDir,
    work: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().expect("tempdir");
    let work = dir.path().canonicalize().expect("canonical").join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("kept.txt"), "kept\n").expect("write");
    Scene { _dir: dir, work }
}

/// The command's capability sets and `NoNewPrivs`, one `name value` per
/// line, and what it could write.
const REPORT: &str = "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status; \
                      echo new > new.txt && echo made; echo changed > kept.txt || echo protected";

#[test]
fn a_confined_command_has_no_capabilities_with_or_without_a_user_namespace() {
    if !support().usable() {
        eprintln!("skipping: {:?}", support().missing());
        return;
    }
    let s = scene();
    let mut policy = Policy::read_only(Policy::system_dirs());
    policy.write = vec![s.work.clone()];
    let mut policies = vec![(policy.clone(), false)];
    if support().user_namespaces {
        // A protected path: the child is cloned into user and mount
        // namespaces, makes its mounts, then drops what it had there.
        policy.deny_write = vec![s.work.join("kept.txt")];
        policies.push((policy, true));
    }
    // SAFETY: a plain getter.
    let root = unsafe { nix::libc::geteuid() } == 0;
    for (policy, namespaced) in policies {
        let prepared = Arc::new(Prepared::new(&policy, support()).expect("prepares"));
        assert_eq!(prepared.clone_flags() != 0, namespaced);
        let mut launch = Launch::new("bash", Isolation::Session);
        launch
            .arg("-c")
            .arg(REPORT)
            .current_dir(&s.work)
            .confine(prepared);
        let out = output_of(launch);
        for line in out.lines().filter(|l| l.starts_with("Cap")) {
            let (name, value) = line.split_once(':').expect("a status line");
            // Only a process with CAP_SETPCAP can shrink its bounding set;
            // one without has nothing to regain under no_new_privs.
            if name == "CapBnd" && !root && !namespaced {
                continue;
            }
            assert_eq!(value.trim(), "0000000000000000", "{name}: {out}");
        }
        assert_eq!(out.lines().filter(|l| l.starts_with("Cap")).count(), 5);
        assert!(out.contains("NoNewPrivs:\t1"), "{out}");
        assert!(out.contains("made"), "{out}");
        if namespaced {
            assert!(out.contains("protected"), "{out}");
        }
        std::fs::remove_file(s.work.join("new.txt")).expect("made");
    }
}
