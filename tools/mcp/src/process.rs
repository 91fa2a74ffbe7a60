//! A stdio server as a process: started and stopped as a process tree of
//! the engine (`baton_engine::process`, as Bash commands and hooks are), so
//! a stop ends everything the server started, even a daemon that left its
//! process group or session; stderr kept in a bounded ring, stdout filtered
//! so that stray prints cannot kill the connection.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::process::{self, Isolation, ProcessTree, TreeGuard};
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream};
use tokio::process::Command;

use crate::frame_guard::{Filter, InFlight, TrackedStdin};
use tokio::sync::watch;

/// Largest JSON-RPC line accepted from a server; a longer one is refused
/// as it streams (see [`crate::frame_guard`]) so one message cannot exhaust
/// memory.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;
/// How long a server (and what it started) gets after SIGTERM before
/// SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

const RING_LINES: usize = 200;
const RING_LINE_CHARS: usize = 2_000;

/// The last lines a server wrote to stderr (and junk it wrote to stdout).
#[derive(Debug, Default)]
pub(crate) struct StderrRing {
    lines: Mutex<VecDeque<String>>,
}

impl StderrRing {
    pub(crate) fn push(&self, line: &str) {
        let mut line = line.trim_end().to_string();
        if line.len() > RING_LINE_CHARS {
            let mut cut = RING_LINE_CHARS;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let mut lines = self.lines.lock();
        if lines.len() == RING_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last `n` lines, oldest first.
    pub(crate) fn tail(&self, n: usize) -> Vec<String> {
        let lines = self.lines.lock();
        lines
            .iter()
            .skip(lines.len().saturating_sub(n))
            .cloned()
            .collect()
    }
}

impl StderrRing {
    /// At most `n` lines that say why a server failed: package managers'
    /// notices (`npm notice`, `npm warn`) and blank lines left out; the
    /// first lines that read as errors (they name the cause, e.g. npm's
    /// `E404`), then the last lines. The plain last lines alone often hold
    /// only an upgrade notice and a log path.
    pub(crate) fn cause(&self, n: usize) -> Vec<String> {
        let kept: Vec<String> = self
            .tail(RING_LINES)
            .into_iter()
            .filter(|l| !is_noise(l))
            .collect();
        let errors: Vec<&String> = kept.iter().filter(|l| reads_as_error(l)).collect();
        let from_errors = errors.len().min(n.div_ceil(2));
        let mut out: Vec<String> = errors[..from_errors]
            .iter()
            .map(|l| l.to_string())
            .collect();
        let rest = n - from_errors;
        for line in kept.iter().skip(kept.len().saturating_sub(rest)) {
            if !out.contains(line) {
                out.push(line.clone());
            }
        }
        out
    }
}

fn is_noise(line: &str) -> bool {
    let l = line.trim().to_ascii_lowercase();
    l.is_empty() || l.starts_with("npm notice") || l.starts_with("npm warn")
}

fn reads_as_error(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    [
        "error",
        "fatal",
        "traceback",
        "exception",
        "not found",
        "no such file",
        "permission denied",
        "e404",
    ]
    .iter()
    .any(|w| l.contains(w))
}

/// A running stdio server.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    pid: i32,
    /// The server and everything it started; killed when dropped. Taken
    /// by the first stop.
    tree: Mutex<Option<TreeGuard>>,
    pub stderr: Arc<StderrRing>,
    /// Lines on stdout that were not JSON-RPC and were skipped.
    pub junk_lines: Arc<AtomicU64>,
    /// `Some(description)` once the process has exited.
    exited: watch::Receiver<Option<String>>,
}

/// Starts a command from the user's MCP configuration (a stdio server, a
/// `headersHelper`) as an engine process tree: in the project directory,
/// with `CLAUDE_PROJECT_DIR` set (as Claude Code does for hooks and
/// servers), stdout and stderr piped, in a process group of its own and
/// tagged like the engine's shell trees. A stop then finds what it started
/// wherever it went, and the CLI's second Ctrl-C (`kill_all_now`) and the
/// orphan sentinel (Baton killed outright) end it too. The guard kills the
/// tree when dropped; `None` only if the command is gone already.
pub(crate) fn start_tree(
    mut cmd: Command,
    project_dir: &Path,
) -> std::io::Result<(tokio::process::Child, Option<TreeGuard>)> {
    cmd.env("CLAUDE_PROJECT_DIR", project_dir)
        .current_dir(project_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let tag = process::configure(&mut cmd, Isolation::Group);
    let child = cmd.spawn()?;
    let tree = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .and_then(|pid| ProcessTree::new(pid, &tag))
        .map(TreeGuard::new);
    Ok((child, tree))
}

/// The pipes rmcp talks over: filtered stdout, and stdin (watched for the
/// ids of requests in flight, see [`crate::frame_guard`]).
pub(crate) type Pipes = (DuplexStream, TrackedStdin);

impl ServerProcess {
    /// Starts `command args` with `env` added (see [`start_tree`]); its
    /// answers are shown to `facts` on their way to rmcp.
    pub(crate) fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        project_dir: &Path,
        facts: Arc<crate::task_facts::TaskFacts>,
    ) -> std::io::Result<(ServerProcess, Pipes)> {
        let mut cmd = Command::new(command);
        cmd.args(args).envs(env).stdin(Stdio::piped());
        let (mut child, tree) = start_tree(cmd, project_dir)?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other(
                "the server's pipes could not be opened",
            ));
        };
        let ring = Arc::new(StderrRing::default());
        let junk = Arc::new(AtomicU64::new(0));
        let (tx, exited) = watch::channel(None);
        let ring_for_err = Arc::clone(&ring);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr);
            let mut buf = Vec::new();
            while let Ok(Some(line)) = read_line_bounded(&mut lines, &mut buf, 64 * 1024).await {
                ring_for_err.push(&String::from_utf8_lossy(line_or_notice(&line)));
            }
        });
        let (ours, theirs) = tokio::io::duplex(256 * 1024);
        let in_flight = Arc::new(InFlight::default());
        let filter = Filter {
            to_rmcp: theirs,
            ring: Arc::clone(&ring),
            junk: Arc::clone(&junk),
            in_flight: Arc::clone(&in_flight),
            facts,
        };
        tokio::spawn(filter.run(stdout));
        tokio::spawn(async move {
            let status = child.wait().await;
            let text = match status {
                Ok(s) => s.to_string(),
                Err(e) => format!("wait failed: {e}"),
            };
            let _ = tx.send(Some(text));
        });
        Ok((
            ServerProcess {
                pid,
                tree: Mutex::new(tree),
                stderr: ring,
                junk_lines: junk,
                exited,
            },
            (ours, TrackedStdin::new(stdin, in_flight)),
        ))
    }

    /// The server's pid (also its process group's id).
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// `Some(exit status)` once the server has exited.
    pub(crate) fn exit_status(&self) -> Option<String> {
        self.exited.borrow().clone()
    }

    /// Resolves when the server process exits.
    pub(crate) async fn wait_exit(&self) -> String {
        let mut rx = self.exited.clone();
        loop {
            if let Some(s) = rx.borrow_and_update().clone() {
                return s;
            }
            if rx.changed().await.is_err() {
                return "unknown".into();
            }
        }
    }

    /// Stops the server's tree: SIGTERM to the server and everything it
    /// started, up to `grace` for them to end, then SIGKILL to what is left
    /// (see `ProcessTree::stop`).
    pub(crate) async fn stop(&self, grace: Duration) {
        let guard = self.tree.lock().take();
        if let Some(mut guard) = guard {
            if let Some(tree) = guard.tree().cloned() {
                tree.stop(grace).await;
            }
            guard.disarm();
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), self.wait_exit()).await;
    }

    /// Kills the server's tree at once (for paths that cannot await).
    pub(crate) fn kill_now(&self) {
        let guard = self.tree.lock().take();
        if let Some(mut guard) = guard {
            guard.kill_now();
        }
    }
}

fn line_or_notice(line: &[u8]) -> &[u8] {
    if line == OVERSIZED {
        b"[a line longer than the frame limit was dropped]"
    } else {
        line
    }
}

const OVERSIZED: &[u8] = b"\0oversized\0";

/// Reads one line (without its newline) of at most `max` bytes; a longer
/// line is consumed and reported as [`OVERSIZED`]. `None` at end of input.
async fn read_line_bounded(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    buf.clear();
    let mut oversized = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if buf.is_empty() && !oversized {
                return Ok(None);
            }
            break;
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !oversized {
            if buf.len() + chunk.len() > max {
                oversized = true;
                buf.clear();
                buf.shrink_to(64 * 1024);
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if oversized {
        return Ok(Some(OVERSIZED.to_vec()));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(std::mem::take(buf)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bounded_lines_drop_oversized_and_keep_the_rest() {
        let data = format!("short\n{}\nafter\r\nlast", "x".repeat(100));
        let mut reader = BufReader::with_capacity(7, data.as_bytes());
        let mut buf = Vec::new();
        let mut got = Vec::new();
        while let Some(line) = read_line_bounded(&mut reader, &mut buf, 50).await.unwrap() {
            got.push(String::from_utf8_lossy(line_or_notice(&line)).into_owned());
        }
        assert_eq!(got[0], "short");
        assert!(got[1].contains("frame limit"));
        assert_eq!(&got[2..], ["after", "last"]);
    }

    #[test]
    fn ring_keeps_the_last_lines() {
        let ring = StderrRing::default();
        for i in 0..500 {
            ring.push(&format!("line {i}"));
        }
        assert_eq!(ring.tail(2), vec!["line 498", "line 499"]);
        assert_eq!(ring.tail(10_000).len(), RING_LINES);
    }

    #[test]
    fn the_cause_survives_npm_notices() {
        let ring = StderrRing::default();
        for line in [
            "npm error code E404",
            "npm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fnope - Not found",
            "npm error 404",
            "npm error 404  '@acme/nope@*' is not in this registry.",
            "npm notice",
            "npm notice New major version of npm available! 10.8.2 -> 11.6.0",
            "npm notice Changelog: https://github.com/npm/cli/releases/tag/v11.6.0",
            "npm notice To update run: npm install -g npm@11.6.0",
            "npm notice",
            "npm error A complete log of this run can be found in: /root/.npm/_logs/x.log",
        ] {
            ring.push(line);
        }
        let cause = ring.cause(5);
        assert_eq!(cause.len(), 5, "{cause:?}");
        assert_eq!(cause[0], "npm error code E404");
        assert!(cause[1].contains("404 Not Found"), "{cause:?}");
        assert!(!cause.iter().any(|l| l.contains("npm notice")), "{cause:?}");
        // With no error-looking line, the last lines as before.
        let quiet = StderrRing::default();
        for i in 0..10 {
            quiet.push(&format!("line {i}"));
        }
        assert_eq!(quiet.cause(2), vec!["line 8", "line 9"]);
    }
}
