//! `headersHelper`: a command in a remote server's entry whose output is
//! headers for the connection (published plugins use it to mint short-lived
//! tokens, e.g. `node "${CLAUDE_PLUGIN_ROOT}/scripts/mcp-headers.mjs"`).
//!
//! As in Claude Code, it runs through the shell each time Baton connects,
//! with `CLAUDE_CODE_MCP_SERVER_NAME` and `CLAUDE_CODE_MCP_SERVER_URL` set,
//! and must print one JSON object of string values; those headers win over
//! the entry's static `headers`. It comes from the user's configuration
//! file (never from the model), like a stdio server's command, so it is run
//! as such a command is: in the project directory, as a process tree of the
//! engine (`baton_engine::process`) that is ended when the helper is done,
//! so a helper that leaves something behind, even in a session of its own,
//! leaves nothing running. A helper that fails, hangs
//! past [`LIMIT`] or prints something else stops the connection with a
//! message saying which.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use crate::process::start_tree;

/// How long a helper may take.
pub(crate) const LIMIT: Duration = Duration::from_secs(10);

/// How long the output of a helper that finished is still waited for.
const GRACE: Duration = Duration::from_secs(1);

/// How much of the helper's output is read (headers are small).
const MAX_OUTPUT: u64 = 64 * 1024;

/// Runs `command` for server `name` at `url`; the headers it printed.
pub(crate) async fn run(
    command: &str,
    name: &str,
    url: &str,
    project_dir: &Path,
) -> Result<BTreeMap<String, String>, String> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .env("CLAUDE_CODE_MCP_SERVER_NAME", name)
        .env("CLAUDE_CODE_MCP_SERVER_URL", url)
        .stdin(Stdio::null());
    // The tree is killed when dropped: also when this connection attempt
    // is given up.
    let (mut child, mut tree) =
        start_tree(cmd, project_dir).map_err(|e| format!("headersHelper could not start: {e}"))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err("headersHelper's output could not be read".into());
    };
    // The pipes are read by this task, beside the wait: a helper printing
    // more than a pipe holds must not block, and whatever was read stays
    // in `out`/`err` even when the reading is given up on.
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = {
        let reading =
            async { tokio::join!(read_into(stdout, &mut out), read_into(stderr, &mut err)) };
        tokio::pin!(reading);
        let mut read = false;
        let status = tokio::time::timeout(LIMIT, async {
            loop {
                tokio::select! {
                    status = child.wait() => break status,
                    _ = &mut reading, if !read => read = true,
                }
            }
        })
        .await;
        // Whatever the helper started ends with it (and lets go of its pipes).
        if let Some(tree) = tree.as_mut() {
            tree.kill_now();
        }
        // Only a process that escaped the tree (it cleared its environment
        // and lost its parent) can still hold a pipe open: give it a short
        // grace. A timeout polls the reads before its timer, so all
        // the helper wrote before it ended is read however late this runs (a
        // grace spent waiting on separate reader tasks could lose output on a
        // loaded machine).
        if !read {
            let _ = tokio::time::timeout(GRACE, &mut reading).await;
        }
        status
    };
    let status =
        status.map_err(|_| format!("headersHelper did not finish within {} s", LIMIT.as_secs()))?;
    let status = status.map_err(|e| format!("headersHelper: {e}"))?;
    if !status.success() {
        let why = String::from_utf8_lossy(&err);
        let why = why.trim();
        return Err(if why.is_empty() {
            format!("headersHelper failed ({status})")
        } else {
            format!("headersHelper failed ({status}): {why}")
        });
    }
    parse(&out)
}

/// Appends at most [`MAX_OUTPUT`] bytes of `pipe` to `buf`, a read at a
/// time, so that what was read is kept if this is dropped.
async fn read_into(pipe: impl tokio::io::AsyncRead + Unpin, buf: &mut Vec<u8>) {
    let mut pipe = pipe.take(MAX_OUTPUT);
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The helper's output: one JSON object whose values are strings.
fn parse(out: &[u8]) -> Result<BTreeMap<String, String>, String> {
    let value: Value = serde_json::from_slice(out)
        .map_err(|e| format!("headersHelper did not print a JSON object: {e}"))?;
    let Value::Object(map) = value else {
        return Err("headersHelper did not print a JSON object".into());
    };
    map.into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            _ => Err(format!("headersHelper's header `{k}` is not a string")),
        })
        .collect()
}

/// `headers` with the helper's output laid over them (the helper wins,
/// whatever the case of the header's name).
pub(crate) fn merged(
    headers: &BTreeMap<String, String>,
    dynamic: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = headers
        .iter()
        .filter(|(k, _)| !dynamic.keys().any(|d| d.eq_ignore_ascii_case(k)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.extend(dynamic);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_must_be_an_object_of_strings() {
        assert_eq!(
            parse(br#"{"Authorization": "Bearer t"}"#).unwrap()["Authorization"],
            "Bearer t"
        );
        assert!(parse(b"Bearer t").unwrap_err().contains("JSON object"));
        assert!(parse(b"[1]").unwrap_err().contains("JSON object"));
        assert!(parse(br#"{"X": 1}"#).unwrap_err().contains("`X`"));
    }

    #[test]
    fn the_helper_wins_whatever_the_case() {
        let fixed = BTreeMap::from([
            ("authorization".to_string(), "old".to_string()),
            ("X-Keep".to_string(), "k".to_string()),
        ]);
        let out = merged(
            &fixed,
            BTreeMap::from([("Authorization".to_string(), "new".to_string())]),
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out["Authorization"], "new");
        assert_eq!(out["X-Keep"], "k");
    }

    #[tokio::test]
    async fn runs_with_the_servers_name_and_reports_failures() {
        let dir = tempfile::tempdir().unwrap();
        let got = run(
            r#"printf '{"X-Who": "%s at %s"}' "$CLAUDE_CODE_MCP_SERVER_NAME" "$CLAUDE_CODE_MCP_SERVER_URL""#,
            "deals",
            "https://h/mcp",
            dir.path(),
        )
        .await
        .unwrap();
        assert_eq!(got["X-Who"], "deals at https://h/mcp");
        let err = run("echo no token >&2; exit 3", "deals", "u", dir.path())
            .await
            .unwrap_err();
        assert!(err.contains("no token"), "{err}");
    }

    /// Running processes whose `argv[0]` is `marker`.
    fn marked(marker: &str) -> Vec<i32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).next() == Some(marker.as_bytes()))
            })
            .collect()
    }

    #[tokio::test]
    async fn a_daemon_the_helper_left_in_its_own_session_is_ended() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("baton-test-helper-daemon-{}", std::process::id());
        let ready = dir.path().join("ready");
        // The daemon keeps the helper's stdout (only its end closes it); the
        // helper prints once the daemon is in its own session.
        let helper = format!(
            "setsid bash -c 'touch {r}; exec -a {marker} sleep 3600' &
             while [ ! -e {r} ]; do sleep 0.05; done
             printf '{{\"X\": \"y\"}}'",
            r = ready.display()
        );
        let got = run(&helper, "d", "u", dir.path()).await;
        let mut left = marked(&marker);
        for _ in 0..100 {
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            left = marked(&marker);
        }
        for pid in &left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        assert_eq!(got.unwrap()["X"], "y");
        assert!(left.is_empty(), "the helper's daemon still runs: {left:?}");
    }
}
