//! The check after a sandboxed command: what it created that the mounts
//! could not stop.
//!
//! A mount protects an entry that exists; nothing in the kernel stops a
//! command that may create files in a directory from creating one with a
//! protected name there (`.mcp.json`, `.git/commondir`, a new `.git`). So
//! the guard remembers what the walk found before the command started and,
//! when asked, walks again: every protected entry whose identity it does
//! not know is moved aside (renamed to `<name>.baton-refused`, beside it,
//! where nothing reads it), and every protected link that was removed or
//! replaced is put back. An entry moved within the root (with a directory
//! above it) keeps its identity and is left alone; a link only where it
//! was, since a link is no mount point and could be linked elsewhere.
//!
//! Outside the workspace roots (writable trees the settings add), only the
//! protected paths named there (the home directory's start-up files, …)
//! are checked.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use super::at::{self, Kind};
use super::walk::{self, Names, Role, Scan};
use super::Memory;

/// One named path outside the workspace roots: where to reach it from
/// (trusted), the rest of it, and its identity when the command started.
#[derive(Clone, Debug)]
pub(crate) struct Fixed {
    pub anchor: PathBuf,
    pub rel: PathBuf,
    pub known: Option<((u64, u64), Kind)>,
}

/// The state of the workspace's protected entries when a sandboxed command
/// started, and the check against it.
#[derive(Debug)]
pub struct Guard {
    names: Names,
    limit: usize,
    /// Each workspace root with what the walk found there.
    roots: Vec<(PathBuf, Scan)>,
    fixed: Vec<Fixed>,
    /// Every entry found when the command started, by identity: an entry
    /// with one of these identities (and the same kind, so that a freed
    /// inode number reused for a new file is not taken for an old one) is
    /// not new. These entries are mount points for the command: it could
    /// not have linked them elsewhere.
    known: HashMap<(u64, u64), Kind>,
    /// The links among them, by where they were: a link is not a mount
    /// point, and one linked (hard) into another directory would resolve
    /// its relative target from there, so a link is known only in place.
    links: HashSet<(PathBuf, (u64, u64))>,
    /// What the walks listed, shared with the session's other walks.
    memory: std::sync::Arc<Memory>,
    /// One check at a time (two would race to rename the same entry).
    running: Mutex<()>,
    /// A final check ran: dropping the guard need not check again.
    finished: AtomicBool,
}

impl Guard {
    pub(crate) fn new(
        names: Names,
        limit: usize,
        roots: Vec<(PathBuf, Scan)>,
        fixed: Vec<Fixed>,
        memory: std::sync::Arc<Memory>,
    ) -> Guard {
        let known = roots
            .iter()
            .flat_map(|(_, scan)| scan.entries.iter())
            .map(|e| (e.stat.identity, e.stat.kind.clone()))
            .chain(fixed.iter().filter_map(|f| f.known.clone()))
            .collect();
        let links = roots
            .iter()
            .flat_map(|(root, scan)| scan.entries.iter().map(move |e| (root.join(&e.rel), e)))
            .map(|(path, e)| (path, e.stat.identity, &e.stat.kind))
            .chain(fixed.iter().filter_map(|f| {
                let (identity, kind) = f.known.as_ref()?;
                Some((f.anchor.join(&f.rel), *identity, kind))
            }))
            .filter(|(_, _, kind)| matches!(kind, Kind::Link(_)))
            .map(|(path, identity, _)| (path, identity))
            .collect();
        Guard {
            names,
            limit,
            roots,
            fixed,
            known,
            links,
            memory,
            running: Mutex::new(()),
            finished: AtomicBool::new(false),
        }
    }

    /// Walks again and reverts what the command created; one sentence
    /// for the result (empty when there was nothing to say). Can be called
    /// while the command runs (a background command, before an unsandboxed
    /// one), and again later.
    pub fn check(&self) -> Vec<String> {
        let _one = self.running.lock();
        super::gate::exclusive(|| self.check_now())
    }

    fn check_now(&self) -> Vec<String> {
        let mut moved: Vec<String> = Vec::new();
        let mut restored: Vec<String> = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        let mut gaps: Vec<String> = Vec::new();
        let mut budget = self.limit;
        for (root, start) in &self.roots {
            let mut now = self.memory.walk(root, &self.names, &mut budget);
            if let Some(gap) = &now.gap {
                gaps.push(format!("{} ({gap})", root.display()));
            }
            let Ok(root_fd) = at::open_trusted(root) else {
                continue;
            };
            // Whatever the walk managed, the places read by default are
            // looked at: the root's own names and the known repositories'
            // parts.
            for (rel, role) in self.probes(start) {
                if now.entries.iter().all(|e| e.rel != rel) {
                    if let Some(stat) = at::stat_below(&root_fd, &rel) {
                        now.entries.push(walk::Found { rel, role, stat });
                    }
                }
            }
            // Parents first: a new `.git` is moved aside whole, its parts
            // with it.
            let mut done: Vec<&Path> = Vec::new();
            for found in &now.entries {
                if self.is_known(&root.join(&found.rel), &found.stat)
                    || done.iter().any(|d| found.rel.starts_with(d))
                {
                    continue;
                }
                // A new repository that is not a `.git` (git would take the
                // directory itself for one): its `HEAD` goes, so that it no
                // longer is.
                let target = match found.role {
                    Role::GitDir
                        if !found
                            .rel
                            .file_name()
                            .is_some_and(|n| at::same_name(n, ".git")) =>
                    {
                        found.rel.join("HEAD")
                    }
                    _ => found.rel.clone(),
                };
                match move_aside(&root_fd, &target) {
                    Ok(aside) => moved.push(format!(
                        "{} (now {})",
                        root.join(&target).display(),
                        root.join(aside).display()
                    )),
                    Err(e) => failed.push(format!("{}: {e}", root.join(&target).display())),
                }
                done.push(&found.rel);
            }
            for link in start.entries.iter() {
                let Kind::Link(target) = &link.stat.kind else {
                    continue;
                };
                if now.entries.iter().any(|e| e.stat == link.stat) {
                    continue;
                }
                match put_back(&root_fd, &link.rel, target) {
                    Ok(true) => restored.push(root.join(&link.rel).display().to_string()),
                    Ok(false) => {}
                    Err(e) => failed.push(format!("{}: {e}", root.join(&link.rel).display())),
                }
            }
        }
        for fixed in &self.fixed {
            let Ok(anchor) = at::open_trusted(&fixed.anchor) else {
                continue;
            };
            let path = fixed.anchor.join(&fixed.rel);
            if let Some(now) = at::stat_below(&anchor, &fixed.rel) {
                if self.is_known(&path, &now) {
                    continue;
                }
                match move_aside(&anchor, &fixed.rel) {
                    Ok(aside) => moved.push(format!(
                        "{} (now {})",
                        path.display(),
                        fixed.anchor.join(aside).display()
                    )),
                    Err(e) => failed.push(format!("{}: {e}", path.display())),
                }
            }
            if let Some((_, Kind::Link(target))) = &fixed.known {
                match put_back(&anchor, &fixed.rel, target) {
                    Ok(true) => restored.push(path.display().to_string()),
                    Ok(false) => {}
                    Err(e) => failed.push(format!("{}: {e}", path.display())),
                }
            }
        }
        sentences(&moved, &restored, &failed, &gaps, self.limit)
    }

    /// Whether the entry `stat` found at `path` is one found when the
    /// command started (moved along with a directory, maybe).
    fn is_known(&self, path: &Path, stat: &at::Stat) -> bool {
        self.known
            .get(&stat.identity)
            .is_some_and(|kind| match kind {
                Kind::Link(_) => {
                    *kind == stat.kind && self.links.contains(&(path.to_path_buf(), stat.identity))
                }
                _ => std::mem::discriminant(kind) == std::mem::discriminant(&stat.kind),
            })
    }

    /// The entries checked even when the walk could not finish: each
    /// protected name and `.git` at the root, and the parts of every git
    /// directory found when the command started.
    fn probes(&self, start: &Scan) -> Vec<(PathBuf, Role)> {
        let mut probes: Vec<(PathBuf, Role)> = self
            .names
            .anywhere()
            .iter()
            .map(|n| (PathBuf::from(n), Role::Name))
            .collect();
        if !self.names.git_parts().is_empty() {
            probes.push((PathBuf::from(".git"), Role::GitDir));
        }
        for git in start.entries.iter().filter(|e| e.role == Role::GitDir) {
            for part in self.names.git_parts() {
                probes.push((git.rel.join(part), Role::GitPart));
            }
        }
        probes
    }

    /// [`Guard::check`] once the command and everything it started have
    /// ended: dropping the guard then checks no more.
    pub fn finish(&self) -> Vec<String> {
        let notes = self.check();
        self.finished.store(true, Ordering::SeqCst);
        notes
    }
}

impl Guard {
    /// The command will not run: dropping the guard checks nothing.
    pub fn dismiss(&self) {
        self.finished.store(true, Ordering::SeqCst);
    }
}

impl Drop for Guard {
    /// The last holder let go without a final check (a shell tool that
    /// does not report one): check now, so that nothing the command
    /// created stays, and log what was done.
    fn drop(&mut self) {
        if self.finished.load(Ordering::SeqCst) {
            return;
        }
        for note in self.check() {
            tracing::warn!("sandbox: {note}");
        }
    }
}

/// Renames the entry `rel` (below `dir`, reached without links) aside; its
/// new path, relative like `rel`.
fn move_aside(dir: &std::os::fd::OwnedFd, rel: &Path) -> nix::Result<PathBuf> {
    let name = rel.file_name().ok_or(nix::errno::Errno::EINVAL)?;
    let parent = rel.parent().unwrap_or(Path::new(""));
    let parent_fd = at::open_below(dir, parent)?;
    let aside = at::rename_aside(&parent_fd, name)?;
    Ok(parent.join(aside))
}

/// Makes `rel` the link to `target` again, unless something is there now
/// (what is there was judged on its own). Whether it was put back.
fn put_back(dir: &std::os::fd::OwnedFd, rel: &Path, target: &OsStr) -> nix::Result<bool> {
    let name = rel.file_name().ok_or(nix::errno::Errno::EINVAL)?;
    let parent = at::open_below(dir, rel.parent().unwrap_or(Path::new("")))?;
    if at::stat(&parent, name).is_some() {
        return Ok(false);
    }
    at::relink(&parent, name, target)?;
    Ok(true)
}

fn sentences(
    moved: &[String],
    restored: &[String],
    failed: &[String],
    gaps: &[String],
    limit: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    if !moved.is_empty() {
        out.push(format!(
            "The sandbox does not let a command create repositories, git configuration or protected files (settings, .mcp.json, shell start-up files), so these were moved aside, where nothing reads them: {}. Ask the user to create such files.",
            moved.join(", ")
        ));
    }
    if !restored.is_empty() {
        out.push(format!(
            "Protected links the command removed were put back: {}.",
            restored.join(", ")
        ));
    }
    if !failed.is_empty() {
        out.push(format!(
            "WARNING: protected entries the command created could not be moved aside: {}. Remove them before running git or starting a session here.",
            failed.join("; ")
        ));
    }
    if !gaps.is_empty() {
        out.push(format!(
            "WARNING: the sandbox could not check all of {} for protected files the command may have created (more than {limit} entries to look through, or a directory it could not read); the known repositories and the top-level names were checked.",
            gaps.join(", ")
        ));
    }
    out
}
