//! The opens against the real kernel, by `openat2` and by the walk kernels
//! without it get: links anywhere on a judged path are refused, never
//! followed, also while a real process swaps them in and out.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::kernel::Method;
use super::{is_changed, Dir, Found};
use crate::files::tests::swapper::Swapper;

const METHODS: [Method; 2] = [Method::Best, Method::Walk];

/// `real/f.txt` ("in"), `outside/f.txt` ("out"), `link -> outside`,
/// `file_link -> real/f.txt`.
fn layout() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("real")).unwrap();
    std::fs::create_dir(root.join("outside")).unwrap();
    std::fs::write(root.join("real/f.txt"), "in").unwrap();
    std::fs::write(root.join("outside/f.txt"), "out").unwrap();
    std::os::unix::fs::symlink(root.join("outside"), root.join("link")).unwrap();
    std::os::unix::fs::symlink(root.join("real/f.txt"), root.join("file_link")).unwrap();
    (dir, root)
}

fn content(found: Found) -> String {
    let Found::File(mut file, _) = found else {
        panic!("not a file: {found:?}");
    };
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    text
}

fn assert_changed<T: std::fmt::Debug>(result: std::io::Result<T>, what: &str) {
    match result {
        Err(e) => assert!(is_changed(&e), "{what}: {e}"),
        Ok(v) => panic!("{what}: opened {v:?}"),
    }
}

#[test]
fn a_link_anywhere_on_the_path_is_refused() {
    let (_dir, root) = layout();
    for m in METHODS {
        let real = Dir::open_by(&root.join("real"), m).unwrap();
        assert_eq!(content(real.find("f.txt".as_ref()).unwrap()), "in");
        assert_changed(Dir::open_by(&root.join("link"), m), "a linked directory");
        let top = Dir::open_by(&root, m).unwrap();
        assert_changed(top.find("file_link".as_ref()), "a link at the end");
        assert!(top.metadata("file_link".as_ref()).unwrap().is_symlink());
        // A magic link of /proc is a link too.
        let cwd = PathBuf::from(format!("/proc/{}/cwd", std::process::id()));
        assert_changed(Dir::open_by(&cwd, m), "a magic link");
    }
}

#[test]
fn opens_below_a_root_stay_below_it_without_links() {
    let (_dir, root) = layout();
    for m in METHODS {
        let top = Dir::open_by(&root, m).unwrap();
        let mut file = top.open_file_beneath(Path::new("real/f.txt")).unwrap();
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        assert_eq!(text, "in");
        assert_changed(top.open_file_beneath(Path::new("link/f.txt")), "via a link");
        assert_changed(top.open_file_beneath(Path::new("file_link")), "a file link");
        let real = top.dir_beneath(Path::new("real")).unwrap();
        assert_changed(
            real.open_file_beneath(Path::new("../outside/f.txt")),
            "a step out",
        );
        assert_changed(top.dir_beneath(Path::new("link")), "a linked directory");
        assert!(top.open_file_beneath(Path::new("real")).is_err());
    }
}

#[test]
fn missing_directories_are_made_by_handle_and_undone() {
    let (_dir, root) = layout();
    for m in METHODS {
        let deep = root.join(format!("{m:?}/a/b"));
        let (dir, made) = Dir::create_all_by(&deep, m).unwrap();
        assert_eq!(dir.path(), deep);
        assert!(deep.is_dir());
        made.undo();
        assert!(!root.join(format!("{m:?}")).exists());
        // Through a link nothing is made, there or here.
        assert_changed(
            Dir::create_all_by(&root.join("link/new/deeper"), m),
            "making directories through a link",
        );
        assert!(!root.join("outside/new").exists());
    }
}

#[test]
fn a_directory_moved_after_it_was_opened_is_not_confirmed() {
    let (_dir, root) = layout();
    let dir = Dir::open(&root.join("real")).unwrap();
    dir.confirm().unwrap();
    std::fs::rename(root.join("real"), root.join("moved")).unwrap();
    assert_changed(dir.confirm(), "a moved directory");
}

#[test]
fn names_are_listed_through_the_handle() {
    let (_dir, root) = layout();
    let mut names = Dir::open(&root).unwrap().names(100).unwrap();
    names.sort();
    let want = ["file_link", "link", "outside", "real"];
    assert_eq!(names, want.map(std::ffi::OsString::from));
    assert_eq!(Dir::open(&root).unwrap().names(2).unwrap().len(), 2);
}

/// Both methods under a real swapper: every open either reaches the real
/// directory or fails as changed; nothing is created or read outside.
#[test]
fn a_swapping_process_never_gets_an_open_outside() {
    let (_dir, root) = layout();
    std::fs::rename(root.join("link"), root.join("alt")).unwrap();
    // A short rest between exchanges lets some opens find the directory
    // in place; races still happen in every round that meets a swap.
    let pause = std::time::Duration::from_micros(100);
    let Some(swapper) = Swapper::start(&root, "real", "alt", pause) else {
        return;
    };
    let mut reached = [0usize; 2];
    for round in 0..2_000 {
        let m = METHODS[round % 2];
        let name = format!("n-{round}");
        let opened = Dir::open_by(&root.join("real"), m).and_then(|d| {
            let found = d.find("f.txt".as_ref())?;
            let mut new = d.create_new(name.as_ref(), 0o600)?;
            new.write_all(b"x")?;
            Ok(found)
        });
        match opened {
            Ok(found) => {
                assert_eq!(content(found), "in", "round {round}");
                reached[round % 2] += 1;
            }
            Err(e) => assert!(is_changed(&e), "round {round}: {e}"),
        }
    }
    assert!(swapper.stop() > 1);
    let mut outside: Vec<_> = std::fs::read_dir(root.join("outside"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    outside.sort();
    assert_eq!(outside, ["f.txt"].map(std::ffi::OsString::from));
    // How many rounds got through depends on the two processes' pace;
    // reported, not asserted (the tests above cover the ordinary opens).
    eprintln!("opens that reached the real directory (openat2, walk): {reached:?}");
}
