//! Starting one sealed git: bounded in time and output, its whole process
//! tree stopped with the call, and confined where the kernel allows.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use baton_engine::process::{Isolation, Launch, TreeGuard};
use baton_engine::sandbox::{self, Network, Policy, Prepared};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;

use super::seal::{self, Seal};

/// Longest one git command may take (a checkout of a large tree).
const GIT_LIMIT: Duration = Duration::from_secs(120);
/// Most output kept from one stream; a query printing more is refused
/// rather than held whole in memory.
const OUTPUT_LIMIT: usize = 16 * 1024 * 1024;

/// What one git run ended with.
pub(super) struct Output {
    /// `None` when git was killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub args: Vec<String>,
}

impl Output {
    /// The sentence for a git that did not succeed.
    pub(super) fn failure(&self, what: &str) -> String {
        let why = self.stderr.trim();
        match (self.code, why.is_empty()) {
            (_, false) => format!("git {what} failed: {why}"),
            (Some(code), true) => format!("git {what} failed with exit code {code}"),
            (None, true) => format!("git {what} was killed by a signal"),
        }
    }
}

/// Runs git and returns its stdout, or the failure as a sentence.
pub(super) async fn run(
    dir: &Path,
    args: &[&str],
    seal: &Seal,
    write: &[PathBuf],
) -> Result<String, String> {
    let out = output(dir, args, seal, write).await?;
    if out.code == Some(0) {
        Ok(out.stdout)
    } else {
        Err(out.failure(&out.args.join(" ")))
    }
}

/// Runs git to its end, whatever its exit code.
pub(super) async fn output(
    dir: &Path,
    args: &[&str],
    seal: &Seal,
    write: &[PathBuf],
) -> Result<Output, String> {
    let cannot = |e: std::io::Error| format!("cannot run git: {e}");
    let mut launch = Launch::new("git", Isolation::Group);
    launch.arg("-C").arg(dir);
    for arg in args {
        launch.arg(arg);
    }
    launch.current_dir(dir);
    for var in seal::inherited_git_vars() {
        launch.env_remove(var);
    }
    for (key, value) in seal.env() {
        launch.env(key, value);
    }
    launch.env("GIT_TERMINAL_PROMPT", "0").env("LC_ALL", "C");
    if write.is_empty() {
        // `git status` refreshes the index when it can; a query must not.
        launch.env("GIT_OPTIONAL_LOCKS", "0");
    }
    if let Some(prepared) = confinement(write)? {
        launch.confine(prepared);
    }
    let (out_w, out_r) = pipe::pipe().map_err(cannot)?;
    let (err_w, err_r) = pipe::pipe().map_err(cannot)?;
    launch
        .stdout(out_w.into_blocking_fd().map_err(cannot)?)
        .stderr(err_w.into_blocking_fd().map_err(cannot)?);
    let (mut child, tree) = launch.spawn().map_err(cannot)?;
    // Dropped with the call (or on a timeout): git and anything it
    // started are stopped.
    let mut guard = TreeGuard::new(tree);
    let work = async { tokio::join!(read_bounded(out_r), read_bounded(err_r), child.wait()) };
    let label = args.first().copied().unwrap_or("");
    let (stdout, stderr, status) = match tokio::time::timeout(GIT_LIMIT, work).await {
        Ok(done) => done,
        Err(_) => {
            guard.kill_now();
            return Err(format!(
                "git {label} did not finish within {} s",
                GIT_LIMIT.as_secs()
            ));
        }
    };
    let status = status.map_err(cannot)?;
    Ok(Output {
        code: status.code(),
        stdout: stdout.map_err(|e| format!("git {label}: {e}"))?,
        stderr: stderr.unwrap_or_default(),
        args: args.iter().map(|a| a.to_string()).collect(),
    })
}

/// The kernel policy for a git that may write only `write`: everything
/// readable, the usual devices writable, no network. `None` where the
/// kernel cannot confine (the seal alone holds then).
fn confinement(write: &[PathBuf]) -> Result<Option<Arc<Prepared>>, String> {
    let support = sandbox::support();
    if support.missing().is_some() {
        return Ok(None);
    }
    let policy = Policy {
        write: write.to_vec(),
        network: Network::Denied,
        ..Policy::read_only([PathBuf::from("/")])
    };
    Prepared::new(&policy, support)
        .map(|p| Some(Arc::new(p)))
        .map_err(|e| format!("cannot confine git: {e}"))
}

/// Reads a pipe to its end, keeping at most [`OUTPUT_LIMIT`] bytes.
async fn read_bounded(mut from: pipe::Receiver) -> Result<String, String> {
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut over = false;
    loop {
        match from.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) if kept.len() + n <= OUTPUT_LIMIT => kept.extend_from_slice(&buf[..n]),
            Ok(_) => over = true,
            Err(e) => return Err(format!("reading its output failed: {e}")),
        }
    }
    if over {
        return Err(format!(
            "it printed more than {} MiB, which Baton does not hold",
            OUTPUT_LIMIT / (1024 * 1024)
        ));
    }
    Ok(String::from_utf8_lossy(&kept).into_owned())
}
