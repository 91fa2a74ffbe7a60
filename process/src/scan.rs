//! Scans of `/proc` shared by the trees that ask at the same time.
//!
//! Every running tree asks "what of me still runs?" while it stops and
//! after its shell exits. With N shells ending together (an interrupt),
//! N separate scans, each reading every process, would cost O(N²) file
//! reads; worse, a scan that holds a lock on a runtime worker while others
//! wait for it lets only as many trees ask at once as there are workers, so
//! the scans run one per tree, one after another. Here a caller shares any
//! scan that began after it asked: async callers wait for it without
//! holding a worker (the scan runs on the blocking pool), so all N trees
//! that stop together are served by the same few scans.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::os::unix::fs::DirEntryExt;
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

use super::table::{read_proc, ProcInfo};
use super::TAG_VAR;

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

/// A snapshot of `/proc` that many trees can share (see the module's
/// docs), with each process's `BATON_TREE` entries read at most once, on
/// first use.
#[derive(Debug)]
pub struct Snapshot {
    /// Every process of the system when the scan ran.
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

/// Where shared scans meet: the latest finished scan and whether one is
/// being taken. Scans are numbered in the order they began.
struct Shared {
    /// Number of the latest scan that began.
    started: u64,
    latest: Option<(u64, Arc<Snapshot>)>,
    scanning: bool,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared {
    started: 0,
    latest: None,
    scanning: false,
});
/// Wakes threads waiting in [`shared_snapshot`] when a scan ends.
static ENDED: Condvar = Condvar::new();
/// Wakes tasks waiting in [`fresh_snapshot`] when a scan ends.
static ENDED_ASYNC: Notify = Notify::const_new();

/// What a caller that asked when scan number `seen` had begun should do.
enum Turn {
    /// Use this scan: it began after the caller asked.
    Use(Arc<Snapshot>),
    /// Take scan number `n` (now marked as being taken) and publish it.
    Take(u64),
    /// Another scan is being taken; wait for it to end, then ask again.
    Wait,
}

fn turn(shared: &mut Shared, seen: u64) -> Turn {
    if let Some((n, snap)) = &shared.latest {
        if *n > seen {
            return Turn::Use(Arc::clone(snap));
        }
    }
    if shared.scanning {
        return Turn::Wait;
    }
    shared.scanning = true;
    shared.started += 1;
    Turn::Take(shared.started)
}

/// Ends scan number `n`: publishes it (when taken) and wakes every waiter.
/// Runs even when the scan could not be taken, so that nobody waits for a
/// scan that will never end.
struct Publish {
    n: u64,
    snap: Option<Arc<Snapshot>>,
}

impl Drop for Publish {
    fn drop(&mut self) {
        let mut shared = SHARED.lock();
        if let Some(snap) = self.snap.take() {
            if shared.latest.as_ref().is_none_or(|(n, _)| *n < self.n) {
                shared.latest = Some((self.n, snap));
            }
        }
        shared.scanning = false;
        drop(shared);
        ENDED.notify_all();
        ENDED_ASYNC.notify_waiters();
    }
}

/// Takes the scan `publish` stands for, and publishes it.
fn take_into(mut publish: Publish) -> Arc<Snapshot> {
    let snap = Arc::new(Snapshot::take());
    publish.snap = Some(Arc::clone(&snap));
    snap
}

/// How many shared scans have begun in this process: what a caller has
/// seen begin when it asks (and, for tests and benches, N trees stopping
/// together should take a few, not N).
pub fn scans_begun() -> u64 {
    SHARED.lock().started
}

/// A snapshot of `/proc` taken entirely after this call began: either a new
/// one, or one that another caller started after this call began (then
/// both share it). Never an older one, so a caller always sees the effect
/// of anything it did before asking (a signal, a process ending).
///
/// Blocks the calling thread while a scan is taken; in async code use
/// [`fresh_snapshot`], which leaves the runtime's worker free.
pub fn shared_snapshot() -> Arc<Snapshot> {
    let mut shared = SHARED.lock();
    let seen = shared.started;
    loop {
        match turn(&mut shared, seen) {
            Turn::Use(snap) => return snap,
            Turn::Take(n) => {
                drop(shared);
                return take_into(Publish { n, snap: None });
            }
            Turn::Wait => ENDED.wait(&mut shared),
        }
    }
}

/// [`shared_snapshot`] for async callers: waits for a scan without holding
/// a runtime worker, and takes a scan on the blocking pool.
///
/// Cancel-safe: a scan that began keeps running and is published even when
/// the caller stops waiting for it.
pub async fn fresh_snapshot() -> Arc<Snapshot> {
    let seen = scans_begun();
    loop {
        // Registered before the state is read, so an end between the two
        // still wakes this caller.
        let ended = ENDED_ASYNC.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        let next = turn(&mut SHARED.lock(), seen);
        match next {
            Turn::Use(snap) => return snap,
            Turn::Take(n) => {
                // The closure owns the publication: if it never runs (the
                // runtime is shutting down), dropping it still ends the
                // scan for the waiters.
                let publish = Publish { n, snap: None };
                let scan = tokio::task::spawn_blocking(move || take_into(publish));
                match scan.await {
                    Ok(snap) => return snap,
                    // No blocking pool: scan here rather than fail.
                    Err(_) => return shared_snapshot(),
                }
            }
            Turn::Wait => ended.await,
        }
    }
}
