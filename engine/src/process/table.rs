//! A snapshot of `/proc`: who is whose parent, in which group and session,
//! started when, and whether it is still running or only a zombie.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::os::unix::fs::DirEntryExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use nix::unistd::Pid;
use parking_lot::Mutex;

use super::TAG_VAR;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Clock ticks after boot; a process started before another cannot be
    /// its descendant.
    pub start: u64,
    /// Threads in the process.
    pub threads: u32,
    /// `Z` (zombie) and `X` (dead) are gone for every purpose but reaping.
    pub state: char,
}

impl ProcInfo {
    /// Still running (or stopped): not a zombie waiting for its parent.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }

    pub fn read(pid: i32) -> Option<ProcInfo> {
        // One `read` into the stack: a stat line is a few hundred bytes, and
        // this runs for every process of every scan (`fs::read_to_string`
        // would add a `statx` and a second `read` per file).
        let mut file = fs::File::open(format!("/proc/{pid}/stat")).ok()?;
        let mut buf = [0u8; 1024];
        let n = file.read(&mut buf).ok()?;
        if n == buf.len() {
            // Not expected from the kernel; read the rest the slow way.
            let mut all = buf.to_vec();
            file.read_to_end(&mut all).ok()?;
            return parse_stat(&String::from_utf8_lossy(&all));
        }
        // Lossy: the command name is whatever bytes the program chose (a
        // name that is not UTF-8 must not make a process invisible); the
        // fields after it are ASCII.
        parse_stat(&String::from_utf8_lossy(buf.get(..n)?))
    }
}

/// Reads a small `/proc` file whole into `out`: open, read until EOF,
/// close. (`fs::read` would first ask for the size with `statx` and
/// `lseek`, which `/proc` answers with 0 anyway: two wasted calls per file,
/// on a path taken for every process of every scan.)
pub(crate) fn read_proc(path: &str, out: &mut Vec<u8>) -> bool {
    out.clear();
    let Ok(mut file) = fs::File::open(path) else {
        return false;
    };
    let mut chunk = [0u8; 4096];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return true,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Parses a `stat` line. The command name sits in parentheses and may hold
/// spaces and parentheses itself, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcInfo> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    let field = |n: usize| rest.get(n - 3).copied();
    Some(ProcInfo {
        pid,
        state: field(3)?.chars().next()?,
        ppid: field(4)?.parse().ok()?,
        pgrp: field(5)?.parse().ok()?,
        session: field(6)?.parse().ok()?,
        start: field(22)?.parse().ok()?,
        threads: field(20)?.parse().ok()?,
    })
}

/// Every process visible in `/proc` (those that vanish while reading are
/// simply absent).
pub fn snapshot() -> Vec<ProcInfo> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(ProcInfo::read)
        .collect()
}

/// Start times of the roots of every live [`ProcessTree`](super::ProcessTree)
/// (how many roots started at each tick).
static TREE_STARTS: Mutex<BTreeMap<u64, usize>> = Mutex::new(BTreeMap::new());

pub(crate) fn tree_started(start: u64) {
    *TREE_STARTS.lock().entry(start).or_default() += 1;
}

pub(crate) fn tree_ended(start: u64) {
    let mut starts = TREE_STARTS.lock();
    if let Some(n) = starts.get_mut(&start) {
        *n -= 1;
        if *n == 0 {
            starts.remove(&start);
        }
    }
}

/// Start times seen by earlier shared scans, by pid and the inode number of
/// the process's `/proc` directory. The pair names one process: when a pid
/// is reused, the kernel has dropped the old process's `/proc` entries, and
/// the new one gets a new inode.
static KNOWN_STARTS: Mutex<Option<HashMap<(i32, u64), u64>>> = Mutex::new(None);

/// Every process that could be a member of a live tree: all but the roots
/// in `skip`, and but processes known (from an earlier scan) to have
/// started before the oldest live tree's root. Members start no earlier
/// than their root, so those can be nobody's member, and a start time never
/// changes: the machine's long-running processes are read once, not on
/// every scan.
fn snapshot_for_trees(skip: &HashSet<i32>) -> Vec<ProcInfo> {
    let floor = TREE_STARTS.lock().keys().next().copied();
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut known = KNOWN_STARTS.lock();
    let earlier = known.take().unwrap_or_default();
    let mut seen = HashMap::with_capacity(earlier.len());
    let mut procs = Vec::new();
    for entry in dir.filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if skip.contains(&pid) {
            continue;
        }
        let key = (pid, entry.ino());
        if let (Some(floor), Some(&start)) = (floor, earlier.get(&key)) {
            if start < floor {
                seen.insert(key, start);
                continue;
            }
        }
        if let Some(info) = ProcInfo::read(pid) {
            seen.insert(key, info.start);
            procs.push(info);
        }
    }
    *known = Some(seen);
    procs
}

/// A snapshot of `/proc` that many trees can share, with each process's
/// `BATON_TREE` entries read at most once (on first use).
///
/// Every running tree asks "what of me still runs?" after its shell exits
/// and while it stops: with N shells running together, N separate scans of
/// `/proc` (each reading the environment of every process started since
/// the tree's root, including the other N shells) cost O(N²) file reads.
/// [`shared_snapshot`] lets callers that ask while a scan is being taken
/// share the next one, and the tags are read once per process.
pub struct Snapshot {
    pub procs: Vec<ProcInfo>,
    tags: Vec<OnceLock<Vec<Box<[u8]>>>>,
    /// The roots of the guarded trees when the scan began.
    pub roots: HashSet<i32>,
}

impl Snapshot {
    /// Every process but the roots of guarded trees and processes older
    /// than every live tree (see `snapshot_for_trees`). A tree reads its
    /// own root itself, and another tree's root is never its member: with
    /// N shells running, leaving the N roots out is most of the scan (their
    /// `stat`, and the environment of each one started after the asking
    /// tree's root).
    pub fn take() -> Snapshot {
        let roots = super::guard::guarded_roots(None);
        let procs = snapshot_for_trees(&roots);
        let tags = procs.iter().map(|_| OnceLock::new()).collect();
        Snapshot { procs, tags, roots }
    }

    /// Whether `procs[i]`'s environment holds exactly `entry`
    /// (`BATON_TREE=<tag>`). Unreadable means no.
    pub fn has_tag_entry(&self, i: usize, entry: &[u8]) -> bool {
        let Some(slot) = self.tags.get(i) else {
            return false;
        };
        let pid = self.procs[i].pid;
        slot.get_or_init(|| tag_entries(pid))
            .iter()
            .any(|e| &**e == entry)
    }
}

/// The `BATON_TREE=…` entries of `pid`'s environment.
fn tag_entries(pid: i32) -> Vec<Box<[u8]>> {
    let mut env = Vec::new();
    if !read_proc(&format!("/proc/{pid}/environ"), &mut env) {
        return Vec::new();
    }
    let prefix = format!("{TAG_VAR}=");
    env.split(|&b| b == 0)
        .filter(|kv| kv.starts_with(prefix.as_bytes()))
        .map(Box::from)
        .collect()
}

/// Scans taken so far through [`shared_snapshot`] (the id of the latest
/// one that started).
static STARTED: AtomicU64 = AtomicU64::new(0);
static LATEST: Mutex<Option<(u64, Arc<Snapshot>)>> = Mutex::new(None);

/// A snapshot of `/proc` taken entirely after this call began: either a new
/// one, or one that another caller started after this call began (then
/// both share it). Never an older one, so a caller always sees the effect
/// of anything it did before asking (a signal, a process ending).
pub fn shared_snapshot() -> Arc<Snapshot> {
    // Scans numbered above `seen` start after this point.
    let seen = STARTED.load(Ordering::SeqCst);
    let mut latest = LATEST.lock();
    if let Some((id, snap)) = latest.as_ref() {
        if *id > seen {
            return Arc::clone(snap);
        }
    }
    let id = STARTED.fetch_add(1, Ordering::SeqCst) + 1;
    let snap = Arc::new(Snapshot::take());
    *latest = Some((id, Arc::clone(&snap)));
    snap
}

/// Whether `pid`'s environment holds exactly `entry` (`NAME=value`), or
/// starts with it when `prefix` is set. Unreadable (gone, other user,
/// zombie) means no.
pub fn environ_has(pid: i32, entry: &[u8], prefix: bool) -> bool {
    let mut env = Vec::new();
    if !read_proc(&format!("/proc/{pid}/environ"), &mut env) {
        return false;
    }
    env.split(|&b| b == 0).any(|kv| {
        if prefix {
            kv.starts_with(entry)
        } else {
            kv == entry
        }
    })
}

/// This process's pid.
pub fn own_pid() -> i32 {
    Pid::this().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command_names() {
        let line =
            "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10";
        let info = parse_stat(line).unwrap();
        assert_eq!(info.pid, 4242);
        assert_eq!(info.state, 'S');
        assert_eq!((info.ppid, info.pgrp, info.session), (1, 4242, 4242));
        assert_eq!(info.start, 987654);
        assert_eq!(info.threads, 1);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn sees_itself() {
        let me = ProcInfo::read(own_pid()).unwrap();
        assert!(me.is_live());
        assert!(snapshot().iter().any(|p| p.pid == me.pid));
    }
}
