//! What a worker's file transfer refuses, on a real worker over real
//! sockets: paths a `Write` or `Read` of which the engine would not allow
//! (protected paths, deny rules, outside the workspace, a link leading
//! out), hostile archives, and requests without the token beyond
//! loopback. Each refusal places, removes and leaves nothing.

use crate::support::files_worker::{leftovers, FilesWorker};
use crate::transfer::{noise, SETTINGS};

/// Percent-encodes an absolute path for the URL, `/` included.
fn encoded(path: &std::path::Path) -> String {
    path.to_str().unwrap().replace('/', "%2F")
}

fn assert_refused(answer: &crate::support::files_worker::Answer, status: u16, code: &str) {
    assert_eq!(answer.status, status, "{}", answer.text());
    assert!(answer.text().contains(code), "{}", answer.text());
}

#[test]
fn protected_and_denied_paths_are_refused_and_nothing_is_written() {
    let worker = FilesWorker::start(SETTINGS, &[]);
    let work = &worker.work;
    for path in [
        ".git/config",
        ".git/hooks/pre-commit",
        ".claude/settings.json",
        ".bashrc",
        "secret/key",
    ] {
        let answer = worker.call("PUT", path, &[], b"payload");
        assert_refused(&answer, 403, "PERMISSION_DENIED");
        assert!(!work.join(path).exists(), "{path} was written");
    }
    // The reason names the rule.
    let answer = worker.call("PUT", "secret/key", &[], b"payload");
    assert!(answer.text().contains("secret"), "{}", answer.text());

    // An archive judged entry by entry: one protected entry refuses it all.
    let protected = archive(&[
        ("ok.txt", tar::EntryType::Regular, "", b"fine"),
        (
            ".git/hooks/post-checkout",
            tar::EntryType::Regular,
            "",
            b"#!/bin/sh\n",
        ),
    ]);
    let answer = worker.call("PUT", "pkg", &[TAR], &protected);
    assert_refused(&answer, 403, "PERMISSION_DENIED");
    assert!(!work.join("pkg").exists());
    let answer = worker.call(
        "PUT",
        "secret",
        &[TAR],
        &archive(&[("a", tar::EntryType::Regular, "", b"a")]),
    );
    assert_refused(&answer, 403, "PERMISSION_DENIED");

    // Replacing a directory removes what it holds: judged too.
    std::fs::create_dir_all(work.join("proj/.git")).unwrap();
    std::fs::write(work.join("proj/.git/config"), b"[core]").unwrap();
    let plain = archive(&[("a.txt", tar::EntryType::Regular, "", b"a")]);
    let answer = worker.call("PUT", "proj", &[TAR], &plain);
    assert_refused(&answer, 403, "PERMISSION_DENIED");
    assert!(answer.text().contains(".git"), "{}", answer.text());
    assert_eq!(
        std::fs::read(work.join("proj/.git/config")).unwrap(),
        b"[core]"
    );
    assert!(!work.join("proj/a.txt").exists());

    // Removing is writing: refused where writing is, the file stays.
    std::fs::create_dir_all(work.join("secret")).unwrap();
    std::fs::write(work.join("secret/key"), b"k").unwrap();
    assert_refused(
        &worker.call("DELETE", "secret/key", &[], b""),
        403,
        "PERMISSION_DENIED",
    );
    assert!(work.join("secret/key").exists());
    // ...and a directory holding a denied path is not removed at all.
    std::fs::write(work.join("secret/../other"), b"o").unwrap();
    let answer = worker.call("DELETE", "secret?recursive=true", &[], b"");
    assert_refused(&answer, 403, "PERMISSION_DENIED");
    assert!(work.join("secret/key").exists());

    // Reading is judged as a `Read`: a denied file is not sent.
    std::fs::create_dir_all(work.join("private")).unwrap();
    std::fs::write(work.join("private/token"), b"t0p").unwrap();
    let answer = worker.call("GET", "private/token", &[], b"");
    assert_refused(&answer, 403, "PERMISSION_DENIED");
    assert!(!answer.text().contains("t0p"));
    assert_eq!(worker.call("HEAD", "private/token", &[], b"").status, 403);
    let answer = worker.call("GET", ".", &["Accept: application/x-tar"], b"");
    assert_refused(&answer, 403, "PERMISSION_DENIED");
    assert!(leftovers(work).is_empty());
}

#[test]
fn paths_outside_the_workspace_are_refused() {
    let worker = FilesWorker::start(SETTINGS, &[]);
    let outside = &worker.outside;
    let target = outside.join("dropped.txt");
    let answer = worker.call("PUT", &encoded(&target), &[], b"payload");
    assert_refused(&answer, 403, "outside the workspace");
    assert!(!target.exists());
    let answer = worker.call("PUT", "..%2Foutside%2Fup.txt", &[], b"payload");
    assert_refused(&answer, 403, "PERMISSION_DENIED");
    assert!(!outside.join("up.txt").exists());

    // A link inside the workspace that leads out is judged where it leads.
    std::os::unix::fs::symlink(outside, worker.work.join("door")).unwrap();
    let answer = worker.call("PUT", "door/through.txt", &[], b"payload");
    assert_refused(&answer, 403, "PERMISSION_DENIED");
    assert!(!outside.join("through.txt").exists());

    // Reads and removals outside are refused the same way.
    std::fs::write(outside.join("theirs.txt"), b"theirs").unwrap();
    let theirs = encoded(&outside.join("theirs.txt"));
    assert_refused(
        &worker.call("GET", &theirs, &[], b""),
        403,
        "PERMISSION_DENIED",
    );
    assert_refused(
        &worker.call("DELETE", &theirs, &[], b""),
        403,
        "PERMISSION_DENIED",
    );
    assert!(outside.join("theirs.txt").exists());
}

const TAR: &str = "Content-Type: application/x-tar";

/// An archive member: its name, kind, link target and content.
type Member<'a> = (&'a str, tar::EntryType, &'a str, &'a [u8]);

/// A tar archive written header by header, so that it can say what a
/// well-behaved writer refuses to (`..`, absolute names, devices).
fn archive(entries: &[Member<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, kind, link, data) in entries {
        let mut header = tar::Header::new_gnu();
        {
            let old = header.as_old_mut();
            old.name[..name.len()].copy_from_slice(name.as_bytes());
            old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        header.set_entry_type(*kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.extend_from_slice(&[0u8; 1024]);
    out
}

#[test]
fn hostile_archives_are_refused_whole() {
    use tar::EntryType::{Block, Char, Directory, Fifo, Link, Regular, Symlink};
    let worker = FilesWorker::start(SETTINGS, &[]);
    let ok: Member<'_> = ("fine.txt", Regular, "", b"fine");
    let cases: Vec<(&str, Vec<Member<'_>>)> = vec![
        (
            "a parent step",
            vec![ok, ("../escaped.txt", Regular, "", b"x")],
        ),
        (
            "a parent step inside",
            vec![ok, ("a/../../escaped.txt", Regular, "", b"x")],
        ),
        (
            "an absolute path",
            vec![ok, ("/tmp/absolute.txt", Regular, "", b"x")],
        ),
        ("a link out", vec![ok, ("out", Symlink, "../../..", b"")]),
        ("an absolute link", vec![ok, ("etc", Symlink, "/etc", b"")]),
        (
            "a write through a link",
            vec![
                ("sub", Directory, "", b""),
                ("lnk", Symlink, "sub", b""),
                ("lnk/x.txt", Regular, "", b"x"),
            ],
        ),
        (
            "a hard link out",
            vec![ok, ("passwd", Link, "/etc/passwd", b"")],
        ),
        (
            "a hard link up",
            vec![ok, ("up", Link, "../outside/x", b"")],
        ),
        (
            "a hard link to nothing extracted",
            vec![ok, ("h", Link, "later.txt", b"")],
        ),
        ("a character device", vec![ok, ("null", Char, "", b"")]),
        ("a block device", vec![ok, ("disk", Block, "", b"")]),
        ("a FIFO", vec![ok, ("pipe", Fifo, "", b"")]),
        ("a name twice", vec![ok, ok]),
    ];
    for (what, entries) in cases {
        let answer = worker.call("PUT", "unpacked", &[TAR], &archive(&entries));
        assert_eq!(answer.status, 400, "{what}: {}", answer.text());
        assert!(
            answer.text().contains("UNSAFE_ARCHIVE"),
            "{what}: {}",
            answer.text()
        );
        assert!(
            !worker.work.join("unpacked").exists(),
            "{what}: something was placed"
        );
        assert!(
            leftovers(&worker.work).is_empty(),
            "{what}: a temporary is left"
        );
    }
    assert!(!worker.outside.join("escaped.txt").exists());
    assert!(std::fs::read_dir(&worker.outside).unwrap().next().is_none());

    // What is refused is the archive, not archives: a safe one with a link
    // inside it is placed.
    let safe = archive(&[
        ("sub", Directory, "", b""),
        ("sub/a.txt", Regular, "", b"a"),
        ("lnk", Symlink, "sub/a.txt", b""),
        ("hard", Link, "sub/a.txt", b""),
    ]);
    let answer = worker.call("PUT", "unpacked", &[TAR], &safe);
    assert_eq!(answer.status, 204, "{}", answer.text());
    assert_eq!(
        std::fs::read(worker.work.join("unpacked/lnk")).unwrap(),
        b"a"
    );
    assert_eq!(
        std::fs::read(worker.work.join("unpacked/hard")).unwrap(),
        b"a"
    );
}

const TOKEN: &str = "transfer-test-token-0123456789abcdef";

#[test]
fn beyond_loopback_the_token_host_and_origin_are_required() {
    let worker = FilesWorker::start_on("0.0.0.0:0", Some(TOKEN), SETTINGS, &[]);
    let auth = format!("Authorization: Bearer {TOKEN}");
    let body = noise(100, 9);

    let answer = worker.call("PUT", "x.bin", &[], &body);
    assert_eq!(answer.status, 401, "{}", answer.text());
    let answer = worker.call(
        "PUT",
        "x.bin",
        &["Authorization: Bearer wrong-token"],
        &body,
    );
    assert_eq!(answer.status, 401);
    assert!(!worker.work.join("x.bin").exists());
    std::fs::write(worker.work.join("there.txt"), b"there").unwrap();
    assert_eq!(worker.call("GET", "there.txt", &[], b"").status, 401);
    assert_eq!(worker.call("HEAD", "there.txt", &[], b"").status, 401);
    assert_eq!(worker.call("DELETE", "there.txt", &[], b"").status, 401);
    assert!(worker.work.join("there.txt").exists());

    // DNS rebinding and browser pages are refused even with the token.
    let mut rebound = format!(
        "PUT /v1/files/x.bin HTTP/1.1\r\nHost: attacker.example\r\n{auth}\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    rebound.extend_from_slice(&body);
    assert_eq!(worker.raw(&rebound, false).status, 403);
    let from_page = worker.call(
        "PUT",
        "x.bin",
        &[&auth, "Origin: https://attacker.example"],
        &body,
    );
    assert_eq!(from_page.status, 403);
    assert!(!worker.work.join("x.bin").exists());

    let answer = worker.call("PUT", "x.bin", &[&auth], &body);
    assert_eq!(answer.status, 204, "{}", answer.text());
    assert_eq!(std::fs::read(worker.work.join("x.bin")).unwrap(), body);
    let answer = worker.call("GET", "there.txt", &[&auth], b"");
    assert_eq!(
        (answer.status, answer.body.as_slice()),
        (200, &b"there"[..])
    );
}
