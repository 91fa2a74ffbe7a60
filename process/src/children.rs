//! Looking down from this process: the orphans it received, and below.
//!
//! When this process is a child subreaper (the `baton` CLI makes itself
//! one, see [`super::install_orphan_guard`]) or PID 1, every process a
//! finished shell left behind has been re-parented to it: the kernel moves
//! a dying process's children to the nearest subreaper ancestor before the
//! dying process becomes a zombie, so once a shell's exit status has been
//! collected, its survivors are among this process's children (or below
//! them). Looking at those few subtrees answers "did the command leave
//! anything running?" without reading every process of the machine, which
//! is what made N shells ending together cost N full scans of `/proc`.
//!
//! The lists come from `/proc/<pid>/task/<tid>/children`, one per thread:
//! a child is listed under the thread that forked it, and an orphan under
//! the first thread of the group that is not exiting (the kernel's
//! `find_alive_thread`), which is the main thread as long as it runs.

use super::table::{own_pid, parse_stat, read_proc, ProcInfo};

/// Whether orphans of this process's descendants come to it.
pub(crate) fn is_reaper() -> bool {
    own_pid() == 1 || nix::sys::prctl::get_child_subreaper().unwrap_or(false)
}

/// The children of one thread, or `None` when they cannot be listed (no
/// `children` files in this kernel, or the thread is gone).
fn children_of_task(pid: i32, tid: i32) -> Option<Vec<i32>> {
    let mut text = Vec::new();
    if !read_proc(&format!("/proc/{pid}/task/{tid}/children"), &mut text) {
        return None;
    }
    Some(
        text.split(|b| b.is_ascii_whitespace())
            .filter_map(|p| std::str::from_utf8(p).ok()?.parse().ok())
            .collect(),
    )
}

/// The children of `pid`, all its threads together (empty when it is
/// gone).
pub(crate) fn children_of(pid: i32) -> Vec<i32> {
    // Most processes have one thread, whose id is the pid: no listing.
    let single = ProcInfo::read(pid).is_some_and(|p| p.threads <= 1);
    if single {
        return children_of_task(pid, pid).unwrap_or_default();
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| t.file_name().to_str()?.parse::<i32>().ok())
        .flat_map(|tid| children_of_task(pid, tid).unwrap_or_default())
        .collect()
}

/// The orphans this process received (with the children its main thread
/// started), or `None` when the kernel does not list children or the main
/// thread has ended (orphans then go to another thread; the caller falls
/// back to a full scan). `checked` skips the main thread check (the caller
/// did it moments ago: a thread that ended stays ended).
pub(crate) fn adopted(checked: bool) -> Option<Vec<i32>> {
    let me = own_pid();
    if !checked {
        let mut stat = Vec::new();
        if !read_proc(&format!("/proc/{me}/task/{me}/stat"), &mut stat) {
            return None;
        }
        let state = parse_stat(&String::from_utf8_lossy(&stat))?.state;
        if matches!(state, 'Z' | 'X' | 'x') {
            return None;
        }
    }
    children_of_task(me, me)
}
