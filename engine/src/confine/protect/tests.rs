//! The walk and the check on real directories (the mounts are the
//! sandbox crate's, and the whole is proven on real commands in
//! `tests/sandbox_protect.rs`).

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::guard::Guard;
use super::walk::{self, Names, Role, Scan};
use crate::settings::sandbox::protected_names;

fn names() -> Names {
    Names::new(&protected_names())
}

fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

fn git_dir(at: &Path) {
    fs::create_dir_all(at.join("objects/info")).unwrap();
    fs::create_dir_all(at.join("refs/heads")).unwrap();
    fs::create_dir_all(at.join("hooks")).unwrap();
    fs::write(at.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(at.join("config"), "[core]\n").unwrap();
}

fn scan(root: &Path) -> Scan {
    let mut budget = 10_000;
    walk::scan(root, &names(), &mut budget, None).0
}

fn found(scan: &Scan) -> Vec<(String, Role)> {
    let mut out: Vec<(String, Role)> = scan
        .entries
        .iter()
        .map(|e| (e.rel.display().to_string(), e.role))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn guard(root: &Path) -> Guard {
    Guard::new(
        names(),
        10_000,
        vec![(root.to_path_buf(), scan(root))],
        Vec::new(),
        Default::default(),
    )
}

#[test]
fn repositories_and_names_are_found_at_any_depth_by_what_they_are() {
    let (_d, root) = tree();
    git_dir(&root.join(".git"));
    fs::write(root.join(".git/commondir"), "..\n").unwrap();
    // A submodule's git directory and a worktree's, inside `.git`.
    git_dir(&root.join(".git/modules/lib"));
    fs::create_dir_all(root.join(".git/worktrees/wt")).unwrap();
    fs::write(root.join(".git/worktrees/wt/HEAD"), "x\n").unwrap();
    fs::write(root.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
    fs::write(root.join(".git/worktrees/wt/gitdir"), "/x/.git\n").unwrap();
    // A nested repository, a submodule's `.git` file, a bare repository.
    git_dir(&root.join("a/b/nested/.git"));
    fs::create_dir_all(root.join("lib")).unwrap();
    fs::write(root.join("lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
    git_dir(&root.join("store.git"));
    // Protected names deep down; a protected directory is not walked.
    fs::create_dir_all(root.join("deep/er/.claude/inner")).unwrap();
    fs::write(root.join("deep/er/.claude/inner/.mcp.json"), "{}").unwrap();
    fs::write(root.join("deep/.envrc"), "").unwrap();
    symlink("elsewhere", root.join("deep/.mcp.json")).unwrap();
    fs::write(root.join("deep/plain.txt"), "").unwrap();
    let s = scan(&root);
    assert!(s.complete);
    let f = found(&s);
    for (rel, role) in [
        (".git", Role::GitDir),
        (".git/config", Role::GitPart),
        (".git/hooks", Role::GitPart),
        (".git/commondir", Role::GitPart),
        (".git/modules/lib", Role::GitDir),
        (".git/modules/lib/config", Role::GitPart),
        (".git/worktrees/wt", Role::GitDir),
        (".git/worktrees/wt/commondir", Role::GitPart),
        (".git/worktrees/wt/gitdir", Role::GitPart),
        ("a/b/nested/.git", Role::GitDir),
        ("a/b/nested/.git/hooks", Role::GitPart),
        ("lib/.git", Role::GitFile),
        ("store.git", Role::GitDir),
        ("store.git/config", Role::GitPart),
        ("deep/er/.claude", Role::Name),
        ("deep/.envrc", Role::Name),
        ("deep/.mcp.json", Role::Name),
    ] {
        assert!(
            f.contains(&(rel.to_string(), role)),
            "{rel} {role:?}: {f:#?}"
        );
    }
    assert!(
        !f.iter()
            .any(|(rel, _)| rel.contains("inner") || rel.contains("plain")),
        "{f:#?}"
    );
}

#[test]
fn a_walk_over_the_limit_says_it_is_incomplete() {
    let (_d, root) = tree();
    for i in 0..50 {
        fs::write(root.join(format!("f{i}")), "").unwrap();
    }
    let mut budget = 20;
    let s = walk::scan(&root, &names(), &mut budget, None).0;
    assert!(!s.complete && s.gap.is_some());
    let mut budget = 100;
    assert!(walk::scan(&root, &names(), &mut budget, None).0.complete);
}

#[test]
fn what_is_created_is_moved_aside_and_what_is_moved_is_left() {
    let (_d, root) = tree();
    git_dir(&root.join(".git"));
    git_dir(&root.join("sub/.git"));
    symlink("shared/settings", root.join(".claude")).unwrap();
    let g = guard(&root);
    // Nothing changed: nothing to say.
    assert!(g.check().is_empty());
    fs::write(root.join(".git/commondir"), "/elsewhere\n").unwrap();
    fs::write(root.join(".mcp.json"), "{}").unwrap();
    fs::create_dir_all(root.join("new/deeper")).unwrap();
    git_dir(&root.join("new/deeper/.git"));
    git_dir(&root.join("bare"));
    fs::rename(root.join("sub"), root.join("moved")).unwrap();
    fs::remove_file(root.join(".claude")).unwrap();
    let notes = g.check();
    assert_eq!(notes.len(), 2, "{notes:?}");
    for gone in [
        ".git/commondir",
        ".mcp.json",
        "new/deeper/.git",
        "bare/HEAD",
    ] {
        assert!(!root.join(gone).exists(), "{gone}");
        assert!(
            root.join(format!("{gone}.baton-refused")).exists(),
            "{gone}"
        );
        assert!(notes[0].contains(gone), "{gone}: {notes:?}");
    }
    assert!(
        root.join("moved/.git/config").exists(),
        "a moved repository stays"
    );
    assert_eq!(
        fs::read_link(root.join(".claude")).unwrap(),
        Path::new("shared/settings"),
        "a removed protected link is put back"
    );
    // Again: a second refusal of the same name gets a name of its own.
    fs::write(root.join(".mcp.json"), "{}").unwrap();
    g.check();
    assert!(root.join(".mcp.json.baton-refused-2").exists());
}

#[test]
fn a_replaced_link_is_moved_aside_and_put_back() {
    let (_d, root) = tree();
    symlink("settings-dir", root.join(".claude")).unwrap();
    let g = guard(&root);
    fs::remove_file(root.join(".claude")).unwrap();
    fs::create_dir(root.join(".claude")).unwrap();
    fs::write(root.join(".claude/settings.json"), "{}").unwrap();
    let notes = g.finish();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(root.join(".claude.baton-refused/settings.json").exists());
    assert_eq!(
        fs::read_link(root.join(".claude")).unwrap(),
        Path::new("settings-dir")
    );
}

#[test]
fn the_walk_and_the_check_follow_no_link_out_of_the_root() {
    let (_d, root) = tree();
    let (_o, outside) = tree();
    git_dir(&outside.join("repo/.git"));
    symlink(&outside, root.join("out")).unwrap();
    let g = guard(&root);
    assert!(found(&scan(&root))
        .iter()
        .all(|(rel, _)| !rel.starts_with("out/")));
    // What appears behind the link is not the root's to move.
    fs::write(outside.join(".mcp.json"), "{}").unwrap();
    assert!(g.check().is_empty());
    assert!(outside.join(".mcp.json").exists());
}

#[test]
fn a_remembered_walk_still_sees_what_changed() {
    let (_d, root) = tree();
    fs::create_dir_all(root.join("a/deep")).unwrap();
    fs::create_dir_all(root.join("b")).unwrap();
    // Old enough to be remembered.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let mut budget = 10_000;
    let (first, memo) = walk::scan(&root, &names(), &mut budget, None);
    assert!(first.entries.is_empty());
    assert!(memo.holds(Path::new("a")) && memo.holds(Path::new("a/deep")));
    // Changed right after it was listed (within the same clock tick, it
    // may be): seen anyway.
    fs::write(root.join("a/deep/.mcp.json"), "{}").unwrap();
    fs::write(root.join("b/.envrc"), "").unwrap();
    let mut budget = 10_000;
    let (second, memo) = walk::scan(&root, &names(), &mut budget, Some(&memo));
    let f = found(&second);
    assert!(
        f.contains(&("a/deep/.mcp.json".into(), Role::Name)),
        "{f:?}"
    );
    assert!(f.contains(&("b/.envrc".into(), Role::Name)), "{f:?}");
    // And what was found in an unchanged directory is found again.
    let mut budget = 10_000;
    let (third, _) = walk::scan(&root, &names(), &mut budget, Some(&memo));
    assert_eq!(found(&third), f);
}

#[test]
fn a_protected_link_linked_elsewhere_is_not_known_there() {
    let (_d, root) = tree();
    symlink("shared/settings", root.join(".claude")).unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    let g = guard(&root);
    // A hard link to the link itself: same inode, but its relative target
    // now resolves from `sub/`.
    nix::unistd::linkat(
        nix::fcntl::AT_FDCWD,
        &root.join(".claude"),
        nix::fcntl::AT_FDCWD,
        &root.join("sub/.claude"),
        nix::unistd::LinkatFlags::empty(),
    )
    .unwrap();
    let notes = g.check();
    assert!(notes[0].contains("sub/.claude"), "{notes:?}");
    assert!(!root.join("sub/.claude").exists());
    assert!(
        fs::read_link(root.join(".claude")).is_ok(),
        "the original stays"
    );
}
