//! A real process that swaps a directory and a link, as fast as it can.
//!
//! It is what a background command the model started could do: python3
//! calls `renameat2(RENAME_EXCHANGE)` on two names in one directory in a
//! loop, so each name is, by turns, the real directory and the link. On
//! `SIGTERM` it prints how many exchanges it made.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

const SCRIPT: &str = r#"
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
count = 0
def stop(*_):
    print(count, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
os.chdir(sys.argv[1])
a, b = sys.argv[2].encode(), sys.argv[3].encode()
pause = float(sys.argv[4])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
    print("renameat2 failed: errno", ctypes.get_errno(), flush=True)
    sys.exit(1)
count = 1
print("ready", flush=True)
while True:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
        count += 1
    if pause:
        time.sleep(pause)
"#;

/// The running swapper; stopped (and reaped) on drop.
pub(crate) struct Swapper {
    child: Option<Child>,
}

impl Swapper {
    /// Starts swapping `a` and `b` in `dir`, resting `pause` between two
    /// exchanges (zero: none); returns once the first exchange is done.
    /// `None` (with a note) where python3 or `renameat2` is missing.
    pub(crate) fn start(dir: &Path, a: &str, b: &str, pause: Duration) -> Option<Swapper> {
        let child = Command::new("python3")
            .args(["-c", SCRIPT])
            .arg(dir)
            .args([a, b])
            .arg(pause.as_secs_f64().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => {
                eprintln!("note: cannot start python3 ({e}); skipping the swap race");
                return None;
            }
        };
        let mut line = String::new();
        let stdout = child.stdout.as_mut()?;
        BufReader::new(stdout).read_line(&mut line).ok()?;
        if line.trim() != "ready" {
            eprintln!(
                "note: the swapper could not start ({}); skipping",
                line.trim()
            );
            let _ = child.wait();
            return None;
        }
        Some(Swapper { child: Some(child) })
    }

    /// Stops the swapper; returns how many exchanges it made.
    pub(crate) fn stop(mut self) -> u64 {
        let Some(mut child) = self.child.take() else {
            return 0;
        };
        let pid = Pid::from_raw(child.id() as i32);
        let _ = kill(pid, Signal::SIGTERM);
        let mut out = String::new();
        if let Some(stdout) = child.stdout.as_mut() {
            let _ = BufReader::new(stdout).read_line(&mut out);
        }
        let _ = child.wait();
        out.trim().parse().unwrap_or(0)
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
