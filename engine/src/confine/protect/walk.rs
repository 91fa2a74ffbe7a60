//! The bounded walk that finds, in one workspace root, every entry that
//! must be protected: repositories (`.git` directories and files, and
//! directories git would take for a repository), the parts of each git
//! directory that name programs or other repositories, and the protected
//! names, at any depth.
//!
//! The walk goes from a descriptor of each directory to its children with
//! `O_NOFOLLOW` (see [`super::at`]): a link is recorded as a link, never
//! followed, so a command that swaps a directory for a link cannot send
//! the walk (or what Baton later does with its findings) out of the root.
//! A protected directory (`.claude`) is not walked into: it is protected as
//! a whole. Inside a git directory only `modules/` and `worktrees/` are
//! walked (where git keeps the git directories of submodules and linked
//! worktrees), not its objects.
//!
//! Listing is what costs (about a microsecond an entry), so a walk keeps
//! what it listed ([`Memo`]) and the next walk of the root lists again only
//! the directories that changed since. A directory that gains, loses or
//! renames an entry gets a new change time (`st_ctime`), which no program
//! can set back; one whose change time was recent when it was listed is not
//! kept, since a change within the same clock tick would not move it.
//! Every directory is still opened and looked at, each walk.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::dir::Type;

use super::at::{self, same_name, Kind, Stat};

/// Directories deeper than this are not walked: the walk is then
/// incomplete (and the caller fails closed).
const MAX_DEPTH: usize = 128;

/// A directory changed less than this before the walk is listed again
/// next time (far more than a clock tick).
const RECENT: Duration = Duration::from_secs(2);

/// What earlier walks of one root listed, by directory, and what they
/// looked for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Memo {
    names: Names,
    dirs: HashMap<PathBuf, Listed>,
}

impl Memo {
    /// Whether the listing of `rel` is kept.
    #[cfg(test)]
    pub(crate) fn holds(&self, rel: &Path) -> bool {
        self.dirs.contains_key(rel)
    }
}

/// One directory as it was listed.
#[derive(Clone, Debug)]
struct Listed {
    identity: (u64, u64),
    ctime: (i64, i64),
    /// How many entries it holds (they count against the budget).
    entries: usize,
    subdirs: Vec<OsString>,
    found: Vec<Found>,
}

/// What the walk looks for, from `SandboxConfig::protected_names`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Names {
    /// Names protected wherever an entry has them (`.mcp.json`, `.claude`).
    anywhere: Vec<String>,
    /// Paths inside every git directory (`config`, `hooks`,
    /// `objects/info/alternates`): the `.git/<part>` entries.
    git_parts: Vec<PathBuf>,
}

impl Names {
    pub(crate) fn new(protected: &[String]) -> Names {
        let mut names = Names::default();
        for name in protected {
            match name.strip_prefix(".git/") {
                Some(part) => names.git_parts.push(PathBuf::from(part)),
                None if !name.contains('/') => names.anywhere.push(name.clone()),
                None => {}
            }
        }
        names
    }

    /// Whether there is anything to look for (the walk finds repositories
    /// only when git parts are protected).
    pub(crate) fn is_empty(&self) -> bool {
        self.anywhere.is_empty() && self.git_parts.is_empty()
    }

    fn repositories(&self) -> bool {
        !self.git_parts.is_empty()
    }

    pub(crate) fn is_protected(&self, name: &OsStr) -> bool {
        self.anywhere.iter().any(|n| same_name(name, n))
    }

    pub(crate) fn anywhere(&self) -> &[String] {
        &self.anywhere
    }

    pub(crate) fn git_parts(&self) -> &[PathBuf] {
        &self.git_parts
    }
}

/// Why an entry is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A protected name: read-only.
    Name,
    /// A `.git` file (it says where the git directory is): read-only.
    GitFile,
    /// A git directory: kept in place, writable inside (git writes its
    /// index, objects, refs and lock files there).
    GitDir,
    /// A part of a git directory that names programs or other
    /// repositories (`config`, `hooks`, `commondir`, …): read-only.
    GitPart,
}

/// One protected entry, relative to its root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub rel: PathBuf,
    pub role: Role,
    pub stat: Stat,
}

/// What one walk of one root found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scan {
    pub entries: Vec<Found>,
    /// False when the walk stopped early (the entry budget ran out, a
    /// directory was too deep, or one the command could have made could
    /// not be listed): what it did not see is not known to be safe.
    pub complete: bool,
    /// Why it is incomplete, for the message.
    pub gap: Option<String>,
}

/// Walks `root` through at most `budget` entries (what it goes through is
/// taken off `budget`), listing only the directories `memo` does not hold
/// unchanged; what it listed, for the next walk. A root that does not
/// exist holds nothing.
pub(crate) fn scan(
    root: &Path,
    names: &Names,
    budget: &mut usize,
    memo: Option<&Memo>,
) -> (Scan, Memo) {
    let since = SystemTime::now()
        .checked_sub(RECENT)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or((i64::MAX, 0), |d| {
            (d.as_secs() as i64, d.subsec_nanos() as i64)
        });
    let mut walker = Walker {
        names,
        budget,
        scan: Scan {
            complete: true,
            ..Scan::default()
        },
        // What was listed looking for other names says nothing.
        previous: memo.filter(|m| m.names == *names),
        next: Memo {
            names: names.clone(),
            dirs: HashMap::new(),
        },
        since,
    };
    let Ok(fd) = at::open_trusted(root) else {
        return (walker.scan, walker.next);
    };
    let mut stack: Vec<(OwnedFd, PathBuf, Vec<OsString>)> = Vec::new();
    if let Some(pending) = walker.visit(&fd, Path::new("")) {
        stack.push((fd, PathBuf::new(), pending));
    }
    while walker.scan.complete {
        let depth = stack.len();
        let Some((dir, rel, pending)) = stack.last_mut() else {
            break;
        };
        let Some(name) = pending.pop() else {
            stack.pop();
            continue;
        };
        if depth >= MAX_DEPTH {
            walker.gap(format!(
                "{} is more than {MAX_DEPTH} directories deep",
                root.join(&*rel).join(&name).display()
            ));
            break;
        }
        let rel = rel.join(&name);
        // A directory with nothing below it to walk, unchanged: no need to
        // open it.
        if walker.reuse_leaf(dir, &name, &rel) {
            continue;
        }
        // Gone, or swapped for a link since it was listed: nothing to walk.
        let Ok(child) = at::open_dir(dir, &name) else {
            continue;
        };
        if let Some(pending) = walker.visit(&child, &rel) {
            stack.push((child, rel, pending));
        }
    }
    (walker.scan, walker.next)
}

struct Walker<'a> {
    names: &'a Names,
    budget: &'a mut usize,
    scan: Scan,
    previous: Option<&'a Memo>,
    next: Memo,
    /// Change times from this one on are recent (seconds, nanoseconds).
    since: (i64, i64),
}

impl Walker<'_> {
    fn gap(&mut self, why: String) {
        self.scan.complete = false;
        self.scan.gap.get_or_insert(why);
    }

    /// What an earlier walk listed of the directory at `rel`, if it is
    /// still the same directory, unchanged.
    fn unchanged(&self, rel: &Path, st: &nix::sys::stat::FileStat) -> Option<Listed> {
        self.previous
            .and_then(|m| m.dirs.get(rel))
            .filter(|l| {
                l.identity == (st.st_dev, st.st_ino) && l.ctime == (st.st_ctime, st.st_ctime_nsec)
            })
            .cloned()
    }

    /// Takes what an earlier walk listed of a directory (unchanged) as this
    /// walk's; the subdirectories to walk next.
    fn reuse(&mut self, rel: &Path, listed: Listed) -> Option<Vec<OsString>> {
        if listed.entries > *self.budget {
            *self.budget = 0;
            self.gap("the entry limit was reached".into());
            return None;
        }
        *self.budget -= listed.entries;
        self.scan.entries.extend(listed.found.iter().cloned());
        let subdirs = listed.subdirs.clone();
        self.next.dirs.insert(rel.to_path_buf(), listed);
        Some(subdirs)
    }

    /// Reuses the listing of `name` in `parent` (at `rel`) without opening
    /// it, when it is an unchanged directory with no subdirectory.
    fn reuse_leaf(&mut self, parent: &OwnedFd, name: &OsStr, rel: &Path) -> bool {
        let Ok(st) =
            nix::sys::stat::fstatat(parent, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        else {
            return false;
        };
        let is_dir = nix::sys::stat::SFlag::from_bits_truncate(st.st_mode)
            & nix::sys::stat::SFlag::S_IFMT
            == nix::sys::stat::SFlag::S_IFDIR;
        match self.unchanged(rel, &st) {
            Some(listed) if is_dir && listed.subdirs.is_empty() => {
                self.reuse(rel, listed);
                true
            }
            _ => false,
        }
    }

    /// Lists the directory `dir` (at `rel`), records what is protected in
    /// it, and returns the subdirectories to walk next.
    fn visit(&mut self, dir: &OwnedFd, rel: &Path) -> Option<Vec<OsString>> {
        let st = nix::sys::stat::fstat(dir).ok()?;
        let identity = (st.st_dev, st.st_ino);
        let ctime = (st.st_ctime, st.st_ctime_nsec);
        if let Some(listed) = self.unchanged(rel, &st) {
            return self.reuse(rel, listed);
        }
        let entries = match at::list(dir) {
            Ok(entries) => entries,
            Err(nix::errno::Errno::EACCES) if st.st_uid == our_uid() => {
                // The command could have made it unreadable to hide what
                // it put inside.
                self.gap(format!("{} cannot be listed", rel.display()));
                return None;
            }
            // Another user's directory, which the command cannot write
            // either; or one that vanished.
            Err(_) => return None,
        };
        if entries.len() > *self.budget {
            *self.budget = 0;
            self.gap("the entry limit was reached".into());
            return None;
        }
        *self.budget -= entries.len();
        let named_git = rel.file_name().is_some_and(|n| same_name(n, ".git"));
        if self.names.repositories() && (named_git || looks_like_git_dir(&entries)) {
            return Some(self.git_dir(dir, rel, &entries));
        }
        let count = entries.len();
        let first = self.scan.entries.len();
        let mut pending = Vec::new();
        for (name, kind) in entries {
            let kind = match kind {
                Some(kind) => kind,
                None => match at::stat(dir, &name).map(|s| s.kind) {
                    Some(Kind::Dir) => Type::Directory,
                    _ => Type::File,
                },
            };
            let git = self.names.repositories() && same_name(&name, ".git");
            if git && kind == Type::Directory {
                // Walked next, as a git directory.
                pending.push(name);
            } else if git || self.names.is_protected(&name) {
                let Some(stat) = at::stat(dir, &name) else {
                    continue;
                };
                let role = if git && stat.kind == Kind::File {
                    Role::GitFile
                } else {
                    Role::Name
                };
                self.record(rel.join(&name), role, stat);
            } else if kind == Type::Directory {
                pending.push(name);
            }
        }
        if ctime < self.since {
            self.next.dirs.insert(
                rel.to_path_buf(),
                Listed {
                    identity,
                    ctime,
                    entries: count,
                    subdirs: pending.clone(),
                    found: self.scan.entries[first..].to_vec(),
                },
            );
        }
        Some(pending)
    }

    /// Records the git directory `dir` and its protected parts; what to
    /// walk inside it (the git directories of submodules and worktrees).
    fn git_dir(
        &mut self,
        dir: &OwnedFd,
        rel: &Path,
        entries: &[(OsString, Option<Type>)],
    ) -> Vec<OsString> {
        if let Ok(st) = nix::sys::stat::fstat(dir) {
            let stat = Stat {
                kind: Kind::Dir,
                identity: (st.st_dev, st.st_ino),
            };
            self.record(rel.to_path_buf(), Role::GitDir, stat);
        }
        for part in self.names.git_parts.clone() {
            if let Some(stat) = at::stat_below(dir, &part) {
                self.record(rel.join(&part), Role::GitPart, stat);
            }
        }
        entries
            .iter()
            .filter(|(name, _)| name == "modules" || name == "worktrees")
            .map(|(name, _)| name.clone())
            .collect()
    }

    fn record(&mut self, rel: PathBuf, role: Role, stat: Stat) {
        self.scan.entries.push(Found { rel, role, stat });
    }
}

/// Git takes a directory for a repository when it holds `HEAD` and its
/// object store and refs (its own, or a `commondir`'s): a bare repository,
/// a submodule's or a worktree's git directory. Looser than git (any one
/// of the three is enough), so that nothing git would accept is missed.
fn looks_like_git_dir(entries: &[(OsString, Option<Type>)]) -> bool {
    let has = |n: &str| entries.iter().any(|(name, _)| name == n);
    has("HEAD") && (has("objects") || has("refs") || has("commondir"))
}

fn our_uid() -> u32 {
    // SAFETY: a plain getter.
    unsafe { nix::libc::geteuid() }
}
