//! Trees that die with their owner, and with Baton.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::tree::{ProcessTree, StopReport};
use super::{tag_prefix, TAG_VAR};

/// Every guarded tree of this process, for [`kill_all_now`].
static LIVE: OnceLock<Mutex<HashMap<u64, Arc<ProcessTree>>>> = OnceLock::new();

fn live() -> &'static Mutex<HashMap<u64, Arc<ProcessTree>>> {
    LIVE.get_or_init(Default::default)
}

/// The roots of every guarded tree but the one with id `except`.
pub(crate) fn guarded_roots(except: Option<u64>) -> HashSet<i32> {
    live()
        .lock()
        .values()
        .filter(|t| Some(t.id()) != except)
        .map(|t| t.root())
        .collect()
}

/// Kills its tree when dropped, unless disarmed.
#[derive(Debug)]
pub struct TreeGuard {
    tree: Option<Arc<ProcessTree>>,
}

impl TreeGuard {
    /// Guards `tree`, registering it so that [`kill_all_now`] reaches it.
    pub fn new(tree: ProcessTree) -> TreeGuard {
        let tree = Arc::new(tree);
        live().lock().insert(tree.id(), tree.clone());
        TreeGuard { tree: Some(tree) }
    }

    /// The guarded tree; `None` once disarmed.
    pub fn tree(&self) -> Option<&Arc<ProcessTree>> {
        self.tree.as_ref()
    }

    /// Forget the tree: it is known to be gone (or handed over).
    pub fn disarm(&mut self) {
        if let Some(tree) = self.tree.take() {
            live().lock().remove(&tree.id());
        }
    }

    /// Moves the tree into a new guard, leaving this one unarmed.
    pub fn take(&mut self) -> TreeGuard {
        TreeGuard {
            tree: self.tree.take(),
        }
    }

    /// Kills the tree now and disarms.
    pub fn kill_now(&mut self) -> StopReport {
        let report = self.tree.as_ref().map(|t| t.kill_now()).unwrap_or_default();
        self.disarm();
        report
    }
}

impl Drop for TreeGuard {
    fn drop(&mut self) {
        if self.tree.is_some() {
            self.kill_now();
        }
    }
}

/// SIGKILL to every guarded tree of this process, and to every process
/// carrying one of its tags: the last resort before exiting (a second
/// Ctrl-C). Returns how many processes were still running afterwards.
pub fn kill_all_now() -> usize {
    let trees: Vec<Arc<ProcessTree>> = live().lock().values().cloned().collect();
    let mut survivors = 0;
    for tree in trees {
        survivors += tree.kill_now().survivors;
    }
    let prefix = format!("{TAG_VAR}={}", tag_prefix()).into_bytes();
    for p in super::table::snapshot() {
        if p.is_live()
            && p.pid != super::table::own_pid()
            && super::table::environ_has(p.pid, &prefix, true)
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    survivors
}

/// The sentinel's script: wait until Baton's end of the pipe closes (Baton
/// exited, however it died), then kill every process carrying one of
/// Baton's tags, a few rounds in case some were forking. Builtins only, so
/// it works while the machine is out of processes.
const SENTINEL: &str = r#"while read -r _; do :; done
for round in 1 2 3; do
  found=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    { while IFS= read -r -d '' kv; do
        if [[ $kv == "$1"* ]]; then kill -KILL "$p"; found=1; break; fi
      done < "$d/environ"; } 2>/dev/null
  done
  [ "$found" = 0 ] && break
done"#;

static SENTINEL_PIPE: OnceLock<Option<std::process::ChildStdin>> = OnceLock::new();

/// Makes this process a child subreaper and starts the sentinel (once per
/// process; later calls do nothing). For programs whose whole life is
/// running tools (the `baton` CLI); a library host may call it too. Returns
/// what could not be set up, for a diagnostic: the rest still works.
pub fn install_orphan_guard() -> Vec<String> {
    let mut problems = Vec::new();
    // Under the PID 1 reaper (see `init`), orphans belong to it.
    if !super::under_init() {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            problems.push(format!("cannot become a child subreaper: {e}"));
        }
    }
    let started = SENTINEL_PIPE.get_or_init(|| {
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new("bash");
        cmd.arg("-c")
            .arg(SENTINEL)
            .arg("baton-sentinel")
            .arg(format!("{TAG_VAR}={}", tag_prefix()))
            .env_remove(TAG_VAR)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Its own process group: a terminal's Ctrl-C or hangup must not
            // end it before Baton.
            .process_group(0);
        match cmd.spawn() {
            Ok(mut child) => child.stdin.take(),
            Err(e) => {
                problems.push(format!("cannot start the orphan sentinel: {e}"));
                None
            }
        }
    });
    if started.is_none() && problems.is_empty() {
        problems.push("the orphan sentinel is not running".into());
    }
    problems
}
