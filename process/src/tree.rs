//! Finding and stopping every process a command started.
//!
//! A process group is not enough: `set -m` gives each job a group of its
//! own, `setsid` a new session, and a child may call `setpgid` itself. So a
//! tree is everything that
//! - is the root, or shares the root's session or process group;
//! - carries the tree's tag in its environment (`BATON_TREE`, set on the
//!   root and inherited by everything it starts, across `setsid`, `nohup`,
//!   `disown` and double forks: it survives its parent dying and being
//!   re-parented to init);
//! - or descends from any of those (parent links, for children that cleared
//!   their environment while their parent still lives);
//!
//! and started no earlier than the root (a process older than the root
//! cannot be its descendant, which also keeps reused pids out). Only a
//! process that both cleared its environment and lost its parent escapes;
//! that needs cgroups, which this machine-independent code does not assume.
//!
//! Zombies are never waited for: a zombie runs nothing, and when its parent
//! (bash) died first it is re-parented to init, which may take a second to
//! reap it, or never do so when Baton is PID 1 of a container. Zombies that
//! end up as Baton's own children (Baton is a subreaper, or PID 1) are
//! reaped here, by pid, so that no other owner's child status is stolen.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use parking_lot::Mutex;

use super::children;
use super::guard::guarded_roots;
use super::scan::{fresh_snapshot, shared_snapshot, Snapshot};
use super::table::{environ_has, own_pid, ProcInfo};
use super::TAG_VAR;

/// The processes of one command, named by their root (the shell) and tag.
#[derive(Debug)]
pub struct ProcessTree {
    id: u64,
    root: i32,
    start: u64,
    /// `BATON_TREE=<tag>`, as it appears in the environment.
    env_entry: Vec<u8>,
    /// Pids seen as members, so their zombies can be reaped even after
    /// they left every other trace (a `setsid` orphan of a dead parent).
    seen: Mutex<HashSet<(i32, u64)>>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Drop for ProcessTree {
    fn drop(&mut self) {
        super::scan::tree_ended(self.start);
        crate::count::tree(false);
    }
}

/// What a walk below one of this process's children found.
enum Below {
    /// A running member.
    Alive,
    /// No running member.
    Walked,
    /// Started before the root: nothing below can be a descendant.
    Older,
}

/// What a stop achieved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StopReport {
    /// Processes signalled one by one. The root's process group is
    /// signalled as a whole first; its members count only if a later scan
    /// still found them running.
    pub signalled: usize,
    /// Processes still running after SIGKILL (stuck in the kernel, or owned
    /// by another user): the result must not claim they were stopped.
    pub survivors: usize,
}

impl ProcessTree {
    /// The tree rooted at `root`, spawned with `tag` in its environment
    /// (see [`super::configure`]). `None` when the root is already gone.
    pub fn new(root: i32, tag: &str) -> Option<ProcessTree> {
        let info = ProcInfo::read(root)?;
        super::scan::tree_started(info.start);
        crate::count::tree(true);
        Some(ProcessTree {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            root,
            start: info.start,
            env_entry: format!("{TAG_VAR}={tag}").into_bytes(),
            seen: Mutex::new(HashSet::new()),
        })
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The root's pid (also the id of its session and process group).
    pub fn root(&self) -> i32 {
        self.root
    }

    /// The tree's processes in `snap` (a full [`snapshot`](super::table::snapshot)),
    /// zombies included.
    pub fn members_in(&self, snap: &[ProcInfo]) -> Vec<ProcInfo> {
        let root = ProcInfo::read(self.root);
        self.members_by(snap, root, &HashSet::new(), |i| {
            environ_has(snap[i].pid, &self.env_entry, false)
        })
    }

    /// Members among `snap` and the root as read after it (`root`), with
    /// `tagged(i)` telling whether `snap[i]` carries the tag.
    ///
    /// The root's pid names the session and group only while they are
    /// ours: the kernel does not hand out a pid that is still a session or
    /// group id, so when another process has it now (another start time),
    /// nothing of ours is left under those ids, and they do not count.
    ///
    /// A process in the session or group of another guarded tree (`roots`)
    /// is that tree's, and its environment is not read: it could carry this
    /// tree's tag only by forging it (a session or group cannot be joined
    /// from outside), and it is stopped with its own tree anyway. With N
    /// trees stopping together, this is what keeps each of them from
    /// reading the environment of every process of the other N.
    fn members_by(
        &self,
        snap: &[ProcInfo],
        root: Option<ProcInfo>,
        roots: &HashSet<i32>,
        tagged: impl Fn(usize) -> bool,
    ) -> Vec<ProcInfo> {
        let elsewhere = |id: i32| id != self.root && roots.contains(&id);
        let me = own_pid();
        let ours = root.filter(|r| r.start == self.start);
        let ids_ours = root.is_none() || ours.is_some();
        let candidates: Vec<(usize, &ProcInfo)> = snap
            .iter()
            .enumerate()
            .filter(|(_, p)| p.start >= self.start && p.pid != me && p.pid != self.root)
            .collect();
        let mut set: HashSet<i32> = HashSet::new();
        if ours.is_some() {
            set.insert(self.root);
        }
        for &(i, p) in &candidates {
            let by_ids = ids_ours && (p.session == self.root || p.pgrp == self.root);
            let other_tree = elsewhere(p.session) || elsewhere(p.pgrp);
            if by_ids || (p.is_live() && !other_tree && tagged(i)) {
                set.insert(p.pid);
            }
        }
        loop {
            let before = set.len();
            for (_, p) in &candidates {
                if set.contains(&p.ppid) {
                    set.insert(p.pid);
                }
            }
            if set.len() == before {
                break;
            }
        }
        let members: Vec<ProcInfo> = ours
            .into_iter()
            .chain(
                candidates
                    .into_iter()
                    .filter(|(_, p)| set.contains(&p.pid))
                    .map(|(_, p)| *p),
            )
            .collect();
        self.seen
            .lock()
            .extend(members.iter().map(|p| (p.pid, p.start)));
        members
    }

    /// The tree's running processes now (from a scan that began after this
    /// call, possibly shared with other trees asking at the same time).
    pub fn live_members(&self) -> Vec<ProcInfo> {
        self.live_in(&shared_snapshot())
    }

    /// [`live_members`](Self::live_members) without holding the runtime's
    /// worker while `/proc` is scanned: what every tree of an interrupt
    /// asks at once.
    pub async fn live_members_async(&self) -> Vec<ProcInfo> {
        let snap = fresh_snapshot().await;
        self.live_in(&snap)
    }

    fn live_in(&self, snap: &Snapshot) -> Vec<ProcInfo> {
        // Read after the scan, which leaves the roots of guarded trees out.
        let root = ProcInfo::read(self.root);
        self.members_by(&snap.procs, root, &snap.roots, |i| {
            snap.has_tag_entry(i, &self.env_entry)
        })
        .into_iter()
        .filter(ProcInfo::is_live)
        .collect()
    }

    /// Whether anything of the tree still runs (zombies do not count).
    ///
    /// Looks down from this process when it can (see
    /// [`alive_below`](Self::alive_below)), else scans `/proc`, blocking
    /// the thread meanwhile: async code uses
    /// [`is_alive_async`](Self::is_alive_async).
    pub fn is_alive(&self) -> bool {
        self.alive_below().unwrap_or_else(|| self.alive_by_scan())
    }

    /// [`is_alive`](Self::is_alive) for async code: a scan, when one is
    /// needed, is shared with every tree asking at the same time and does
    /// not hold the runtime's worker (see [`super::scan`]).
    pub async fn is_alive_async(&self) -> bool {
        match self.alive_below() {
            Some(alive) => alive,
            None => !self.live_members_async().await.is_empty(),
        }
    }

    /// [`is_alive`](Self::is_alive) from a scan of every process.
    pub fn alive_by_scan(&self) -> bool {
        !self.live_members().is_empty()
    }

    /// [`is_alive`](Self::is_alive) from this process's own children, or
    /// `None` when that cannot tell: this process is not a subreaper, the
    /// kernel does not list children, or the children kept changing.
    ///
    /// While the root runs, the tree is alive. Once it has ended, whatever
    /// it left running was re-parented to this process (a subreaper), so
    /// the survivors are in the subtrees of this process's children. The
    /// roots of other guarded trees are skipped with their subtrees (a
    /// process there belongs to that tree; it could only be counted in
    /// this one by copying this tree's tag, and is stopped with its own).
    /// Members are recognised as by the scan (session, group or tag, and
    /// started no earlier than the root); a zombie member that became this
    /// process's child is reaped on the way.
    pub fn alive_below(&self) -> Option<bool> {
        let root = ProcInfo::read(self.root);
        if root.is_some_and(|p| p.start == self.start && p.is_live()) {
            return Some(true);
        }
        // See `members_by`: a reused root pid means our ids are free.
        let ids_ours = root.is_none_or(|p| p.start == self.start);
        if !children::is_reaper() {
            return None;
        }
        let others = guarded_roots(Some(self.id));
        let mut walked = HashSet::new();
        // Until the list of children stops changing: a survivor whose
        // parent dies while it is being walked moves up to this process.
        for round in 0..8 {
            let mut descended = false;
            let kids = children::adopted(round > 0)?;
            for kid in kids {
                if kid == self.root || others.contains(&kid) || !walked.insert(kid) {
                    continue;
                }
                match self.live_member_below(kid, ids_ours)? {
                    Below::Alive => return Some(true),
                    Below::Walked => descended = true,
                    Below::Older => {}
                }
            }
            if !descended {
                return Some(false);
            }
        }
        None
    }

    /// Whether a running member is `top` or below it. `None` when the
    /// subtree is too large to walk here.
    ///
    /// A process started before the root is not its descendant, and
    /// neither is anything below it (orphans move up only to ancestors,
    /// and the walk starts below this process, the root's parent): such a
    /// subtree is skipped. Its processes could count only by carrying a
    /// copy of the tree's tag.
    fn live_member_below(&self, top: i32, ids_ours: bool) -> Option<Below> {
        let me = own_pid();
        let mut stack = vec![top];
        let mut visited = 0usize;
        while let Some(pid) = stack.pop() {
            visited += 1;
            if visited > 4096 {
                return None;
            }
            let Some(p) = ProcInfo::read(pid) else {
                continue;
            };
            if p.start < self.start || p.pid == me {
                if pid == top {
                    return Some(Below::Older);
                }
                continue;
            }
            let by_ids = ids_ours && (p.session == self.root || p.pgrp == self.root);
            if p.is_live() && (by_ids || environ_has(p.pid, &self.env_entry, false)) {
                return Some(Below::Alive);
            }
            if by_ids && !p.is_live() {
                // Descendants of a zombie were re-parented already.
                if p.ppid == me {
                    let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
                }
                continue;
            }
            stack.extend(children::children_of(pid));
        }
        Some(Below::Walked)
    }

    /// Whether the root still runs and leads the process group named by
    /// its pid (only then is signalling that group signalling ours).
    fn leads_its_group(&self) -> bool {
        ProcInfo::read(self.root)
            .is_some_and(|r| r.start == self.start && r.is_live() && r.pgrp == self.root)
    }

    /// Sends `signal` to every running member; returns how many.
    pub fn signal(&self, signal: Signal) -> usize {
        let live = self.live_members();
        for p in &live {
            let _ = kill(Pid::from_raw(p.pid), signal);
        }
        live.len()
    }

    /// SIGKILL to every member, again and again while new ones appear (a
    /// process may fork between the scan and the signal), then reaps what
    /// became Baton's zombies. Synchronous and quick: usable in `Drop`.
    pub fn kill_now(&self) -> StopReport {
        let mut report = StopReport::default();
        if self.leads_its_group() {
            let _ = nix::sys::signal::killpg(Pid::from_raw(self.root), Signal::SIGKILL);
        }
        for _ in 0..20 {
            let live = self.live_members();
            if live.is_empty() {
                break;
            }
            for p in &live {
                let _ = kill(Pid::from_raw(p.pid), Signal::SIGKILL);
            }
            report.signalled += live.len();
            std::thread::sleep(Duration::from_millis(1));
        }
        // SIGKILL cannot be ignored, but takes effect when the process is
        // next scheduled; give the kernel a moment before counting.
        for _ in 0..50 {
            report.survivors = self.live_members().len();
            if report.survivors == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.reap();
        report
    }

    /// SIGTERM (and SIGCONT, so stopped jobs act on it) to every member,
    /// up to `grace` for them to end — processes that appear meanwhile get
    /// their SIGTERM too — then [`kill_now`](Self::kill_now).
    pub async fn stop(&self, grace: Duration) -> StopReport {
        let deadline = tokio::time::Instant::now() + grace;
        let mut told: HashSet<i32> = HashSet::new();
        // One signal to the root's group reaches most of the tree before
        // any scan of `/proc` (the scans then find only what escaped the
        // group, and the group's processes are already on their way out).
        // Only while the root is ours: a reused pid names someone else's
        // group.
        if self.leads_its_group() {
            let group = Pid::from_raw(self.root);
            let _ = nix::sys::signal::killpg(group, Signal::SIGTERM);
            let _ = nix::sys::signal::killpg(group, Signal::SIGCONT);
        }
        // Signals take effect when their process next runs: look again
        // soon, then less often (each look is a scan of `/proc`).
        let mut pause = Duration::from_millis(1);
        loop {
            let live = self.live_members_async().await;
            if live.is_empty() {
                // Nothing runs, so nothing can start either: no SIGKILL
                // rounds (each would be another scan of `/proc`, the
                // slowest part of an interrupt on a busy machine).
                self.reap();
                return StopReport {
                    signalled: told.len(),
                    survivors: 0,
                };
            }
            for p in live.iter().filter(|p| told.insert(p.pid)) {
                let pid = Pid::from_raw(p.pid);
                let _ = kill(pid, Signal::SIGTERM);
                let _ = kill(pid, Signal::SIGCONT);
            }
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(8));
        }
        let mut report = self.kill_now();
        report.signalled = report.signalled.max(told.len());
        report
    }

    /// Reaps zombies of the tree that are Baton's own children, except the
    /// root (its owner — tokio's `Child` — collects it).
    pub fn reap(&self) {
        let me = own_pid();
        let seen: Vec<(i32, u64)> = self.seen.lock().iter().copied().collect();
        let mut gone = Vec::new();
        for (pid, start) in seen {
            if pid == self.root {
                continue;
            }
            match ProcInfo::read(pid) {
                // The same process (not a reused pid), now our zombie.
                Some(p) if p.start == start && p.ppid == me && !p.is_live() => {
                    let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
                    gone.push((pid, start));
                }
                Some(p) if p.start == start => {}
                _ => gone.push((pid, start)),
            }
        }
        let mut seen = self.seen.lock();
        for entry in gone {
            seen.remove(&entry);
        }
    }
}
