//! Looking for a test's processes in /proc: by a marker in their command
//! line, with zombies (exited, not yet reaped) left out, since a zombie no
//! longer runs anything.
//!
//! A crate's tests run side by side in one process, so a marker must be
//! unique in that process, not only in its file: [`marker`] makes one.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A marker no other test uses: `prefix`, then only digits (this
/// process's id, a sequence number and the clock's nanoseconds, each of a
/// fixed width per process). With a prefix such as `1000.` it is a valid
/// `sleep` argument. Two markers with the same prefix have the same
/// length, so neither is found inside the other.
pub fn marker(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let seq = NEXT.fetch_add(1, Ordering::Relaxed) % 10_000;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}{}{seq:04}{nanos:09}", std::process::id())
}

/// The state letter of a process (`R`, `S`, `Z`, …); `None` when gone.
fn state(pid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the command name, which ends with `)`.
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
}

/// Whether `pid` still runs: it exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    !matches!(state(&pid.to_string()), None | Some('Z') | Some('X'))
}

/// Whether the process in `proc_dir` (`/proc/<pid>`) is a zombie or gone.
pub fn is_zombie(proc_dir: &Path) -> bool {
    let pid = proc_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    matches!(state(&pid), None | Some('Z') | Some('X'))
}

/// Each live process's id and command line (arguments joined by spaces),
/// for the processes `keep` accepts.
fn scan(mut keep: impl FnMut(&str) -> bool) -> Vec<(i32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (keep(&text) && alive(pid)).then_some((pid, text))
        })
        .collect()
}

/// Live processes whose command line mentions `needle`.
pub fn pids_with(needle: &str) -> Vec<i32> {
    scan(|text| text.contains(needle))
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// How many live processes' command lines mention `needle`.
pub fn running(needle: &str) -> usize {
    pids_with(needle).len()
}

/// Live `sleep` processes whose arguments name `marker` (shells whose
/// script mentions it are not counted).
pub fn sleeping(marker: &str) -> usize {
    scan(|text| text.starts_with("sleep ") && text.contains(marker)).len()
}

/// The command lines of the live processes mentioning `needle`, for a
/// failure's message.
pub fn listing(needle: &str) -> String {
    scan(|text| text.contains(needle))
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Pids written one per line to `path`.
pub fn pids_in(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Waits (5 s at most) until every pid is gone; the ones still alive.
pub async fn survivors(pids: &[i32]) -> Vec<i32> {
    for _ in 0..100 {
        if pids.iter().all(|p| !alive(*p)) {
            return Vec::new();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pids.iter().copied().filter(|p| alive(*p)).collect()
}

/// Waits (up to `within`) for the processes mentioning `needle` to be
/// gone; how many are left.
pub async fn settle(needle: &str, within: Duration) -> usize {
    let until = Instant::now() + within;
    loop {
        let n = running(needle);
        if n == 0 || Instant::now() >= until {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (20 s at most) until at least `n` processes mention `needle`:
/// the command started them.
pub async fn wait_started(needle: &str, n: usize) {
    let until = Instant::now() + Duration::from_secs(20);
    while running(needle) < n && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (up to `within`, polling) until `done` holds; whether it did.
pub fn eventually(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_unique_and_none_is_inside_another() {
        let markers: Vec<String> = (0..1000).map(|_| marker("1000.")).collect();
        for (i, a) in markers.iter().enumerate() {
            assert_eq!(a.len(), markers[0].len(), "{a}");
            for b in &markers[i + 1..] {
                assert!(
                    !a.contains(b.as_str()) && !b.contains(a.as_str()),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn a_marked_sleep_is_counted_while_it_runs_and_not_once_reaped() {
        let m = marker("1000.");
        let mut child = std::process::Command::new("sleep")
            .arg(&m)
            .spawn()
            .expect("sleep starts");
        let pid = child.id() as i32;
        assert!(eventually(Duration::from_secs(10), || running(&m) == 1));
        assert_eq!(sleeping(&m), 1);
        assert_eq!(pids_with(&m), vec![pid]);
        assert!(alive(pid));
        assert!(listing(&m).starts_with(&format!("sleep {m}")));
        child.kill().expect("kill");
        // Killed but not yet reaped: a zombie, which runs nothing.
        assert!(eventually(Duration::from_secs(10), || !alive(pid)));
        assert_eq!(running(&m), 0);
        child.wait().expect("reaped");
        assert_eq!(sleeping(&m), 0);
    }
}
