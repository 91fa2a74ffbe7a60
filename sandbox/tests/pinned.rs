//! Entries kept in place by the mount namespace, on real processes: a git
//! directory pinned (writable inside, not movable) with read-only parts,
//! and a start that fails rather than protecting something else when an
//! entry was swapped after it was found.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use baton_sandbox::{support, Pinned, Policy, PrepareError, Prepared};
use confined::{try_run as run, Scene};

use crate::support::confined;

/// Pinning needs the mount namespace, so user namespaces too.
fn usable() -> bool {
    let ok = confined::usable() && support().user_namespaces;
    if !ok {
        eprintln!("skipping: no user namespaces");
    }
    ok
}

fn identity(path: &Path) -> (u64, u64) {
    let meta = fs::symlink_metadata(path).expect("exists");
    (meta.dev(), meta.ino())
}

fn pin(path: PathBuf, read_only: bool) -> Pinned {
    let identity = identity(&path);
    Pinned {
        path,
        read_only,
        identity,
    }
}

fn scene() -> Scene {
    let scene = confined::workspace();
    let work = &scene.work;
    fs::create_dir_all(work.join("sub/.git/hooks")).expect("mkdir");
    fs::create_dir_all(work.join("sub/.git/objects")).expect("mkdir");
    fs::write(work.join("sub/.git/config"), "[core]\n").expect("write");
    fs::write(work.join("sub/.git/HEAD"), "ref: refs/heads/main\n").expect("write");
    scene
}

fn writable(s: &Scene) -> Policy {
    let mut policy = Policy::read_only(Policy::system_dirs());
    policy.read.push(s.work.clone());
    policy.write = vec![s.work.clone()];
    policy
}

#[test]
fn a_pinned_git_directory_stays_put_and_its_parts_stay_unwritten() {
    if !usable() {
        return;
    }
    let s = scene();
    let git = s.work.join("sub/.git");
    let mut policy = writable(&s);
    policy.pinned = vec![
        pin(git.clone(), false),
        pin(git.join("config"), true),
        pin(git.join("hooks"), true),
    ];
    let out = run(
        &policy,
        &s.work,
        "echo new > sub/.git/index.lock && mv sub/.git/index.lock sub/.git/index \
         && echo x > sub/.git/HEAD && echo INSIDE-OK",
    )
    .expect("runs");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("INSIDE-OK"),
        "{out:?}"
    );
    for probe in [
        "mv sub/.git sub/aside",
        "rmdir sub/.git",
        "mv sub/.git/config sub/.git/config.old",
        "echo '[alias]' >> sub/.git/config",
        "touch sub/.git/hooks/post-checkout",
        "mv sub/.git/hooks sub/.git/h",
    ] {
        let out = run(&policy, &s.work, probe).expect("runs");
        assert!(!out.status.success(), "{probe} should fail: {out:?}");
    }
    assert!(git.join("config").is_file() && git.join("hooks").is_dir());
    assert_eq!(fs::read_to_string(git.join("config")).unwrap(), "[core]\n");
    assert!(!git.join("hooks/post-checkout").exists());
    // Unpinned, the same directory moves.
    let out = run(&writable(&s), &s.work, "mv sub/.git sub/aside").expect("runs");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_command_started_inside_a_protected_directory_cannot_write_it() {
    if !usable() {
        return;
    }
    let s = scene();
    let hooks = s.work.join("sub/.git/hooks");
    let mut policy = writable(&s);
    policy.deny_write = vec![hooks.clone()];
    // Started there, the command still meets the read-only bind.
    let out = run(&policy, &hooks, "touch post-checkout").expect("runs");
    assert!(!out.status.success(), "{out:?}");
    assert!(!hooks.join("post-checkout").exists());
}

#[test]
fn an_entry_swapped_after_it_was_found_fails_the_start() {
    if !usable() {
        return;
    }
    let s = scene();
    let mut policy = writable(&s);
    policy.pinned = vec![pin(s.work.join("sub/.git/config"), true)];
    // The directory above it swapped for a link to a look-alike.
    fs::rename(s.work.join("sub"), s.work.join("real")).unwrap();
    fs::create_dir_all(s.work.join("decoy/.git")).unwrap();
    fs::write(s.work.join("decoy/.git/config"), "").unwrap();
    std::os::unix::fs::symlink("decoy", s.work.join("sub")).unwrap();
    let err = run(&policy, &s.work, "echo RAN").expect_err("no start");
    // The link is refused, not followed (`O_NOFOLLOW | O_DIRECTORY`).
    assert!(
        [Some(libc::ENOTDIR), Some(libc::ELOOP)].contains(&err.raw_os_error()),
        "{err}"
    );
    // Or replaced by another file of the same name.
    fs::remove_file(s.work.join("sub")).unwrap();
    fs::rename(s.work.join("real"), s.work.join("sub")).unwrap();
    fs::rename(s.work.join("sub/.git/config"), s.work.join("old-config")).unwrap();
    fs::write(s.work.join("sub/.git/config"), "[core]\n").unwrap();
    let err = run(&policy, &s.work, "echo RAN").expect_err("no start");
    assert_eq!(err.raw_os_error(), Some(libc::ESTALE), "{err}");
}

#[test]
fn a_denied_path_named_through_a_link_protects_what_it_names() {
    if !usable() {
        return;
    }
    let s = scene();
    std::os::unix::fs::symlink("sub", s.work.join("via")).unwrap();
    std::os::unix::fs::symlink(".git/config", s.work.join("sub/config-link")).unwrap();
    let mut policy = writable(&s);
    policy.deny_write = vec![
        s.work.join("via/.git/config"),
        // A path that is a link itself names the link: skipped.
        s.work.join("sub/config-link"),
    ];
    let out = run(&policy, &s.work, "echo changed > sub/.git/config").expect("runs");
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(
        fs::read_to_string(s.work.join("sub/.git/config")).unwrap(),
        "[core]\n"
    );
    let out = run(&policy, &s.work, "rm sub/config-link").expect("runs");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn more_entries_than_a_command_can_have_fail_to_prepare() {
    if !usable() {
        return;
    }
    let s = scene();
    let mut policy = writable(&s);
    let identity = identity(&s.work.join("sub/.git/config"));
    policy.pinned = (0..2000)
        .map(|i| Pinned {
            path: s.work.join(format!("f{i}")),
            read_only: true,
            identity,
        })
        .collect();
    match Prepared::new(&policy, support()) {
        Err(PrepareError::Unsupported(why)) => assert!(why.contains("2000"), "{why}"),
        other => panic!("{other:?}"),
    }
}
