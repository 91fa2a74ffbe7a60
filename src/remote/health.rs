//! Is a worker still there while a call waits on it?
//!
//! A worker that died closes its connection, which the call sees. A worker
//! that is paused (SIGSTOP, a frozen VM) or cut off by the network closes
//! nothing: the kernel even accepts new connections for it. Its calls would
//! wait forever, and the session would stay leased to it. So while a call
//! waits, the worker's `/healthz` (answered by `baton mcp serve --http`
//! without authentication and without touching any call) is asked every
//! [`PROBE_EVERY`]; no answer within [`PROBE_TIMEOUT`] means the worker
//! stopped answering. A long call on a healthy worker keeps answering
//! probes, so it is not cut short; [`TOTAL_LIMIT`] bounds it anyway.

use std::sync::OnceLock;
use std::time::Duration;

/// How often a waiting call checks its worker.
pub(super) const PROBE_EVERY: Duration = Duration::from_secs(5);

/// How long a health check may take before the worker counts as gone.
pub(super) const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// After an interrupt, how long the worker may take to show it is alive
/// (then its final output is awaited, up to the cancel grace).
pub(super) const CANCEL_PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The most a remote call may take: beyond the longest Bash timeout
/// (10 minutes), which the worker enforces itself.
pub(super) const TOTAL_LIMIT: Duration = Duration::from_secs(15 * 60);

fn client() -> Option<&'static reqwest::Client> {
    static CLIENT: OnceLock<Option<reqwest::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| reqwest::Client::builder().build().ok())
        .as_ref()
}

/// The worker's health URL: its MCP endpoint with the path `/healthz`.
fn health_url(mcp_url: &str) -> Option<reqwest::Url> {
    let mut url = reqwest::Url::parse(mcp_url).ok()?;
    url.set_path("/healthz");
    url.set_query(None);
    Some(url)
}

/// What one health check found.
enum Probe {
    Answered,
    /// Failed at once: the connection was refused or reset, or the
    /// worker said it is not healthy. A worker that died looks like this.
    Failed(String),
    /// No answer in time: paused, frozen or cut off.
    Silent,
}

/// Asks the worker's `/healthz`, waiting at most `within`. A URL that
/// cannot be probed counts as answering (the connection's own checks still
/// apply): no probe must fail a call by itself.
async fn probe(mcp_url: &str, within: Duration) -> Probe {
    let (Some(client), Some(url)) = (client(), health_url(mcp_url)) else {
        return Probe::Answered;
    };
    match tokio::time::timeout(within, client.get(url).send()).await {
        Ok(Ok(response)) if response.status().is_success() => Probe::Answered,
        Ok(Ok(response)) => Probe::Failed(format!("it answered HTTP {}", response.status())),
        Ok(Err(e)) if e.is_connect() => Probe::Failed("the connection was refused".into()),
        Ok(Err(e)) if e.is_timeout() => Probe::Silent,
        Ok(Err(_)) => Probe::Failed("the connection failed".into()),
        Err(_) => Probe::Silent,
    }
}

/// `Ok` if the worker answers its health check within `within`, else why
/// not, as a clause for the call's error ("it is gone …").
pub(super) async fn answers(mcp_url: &str, within: Duration) -> Result<(), String> {
    match probe(mcp_url, within).await {
        Probe::Answered => Ok(()),
        Probe::Failed(why) => Err(gone(&why)),
        Probe::Silent => Err(format!(
            "it stopped answering (its health check got no answer within {} s)",
            within.as_secs()
        )),
    }
}

fn gone(why: &str) -> String {
    format!("it is gone (its health check failed at once: {why})")
}

/// Resolves (with the reason) once the worker fails a health check. The
/// reason tells a worker that is gone (the check failed at once) from one
/// that stopped answering, so whoever reads it looks in the right place.
pub(super) async fn stops_answering(mcp_url: &str) -> String {
    loop {
        tokio::time::sleep(PROBE_EVERY).await;
        if let Err(why) = answers(mcp_url, PROBE_TIMEOUT).await {
            return why;
        }
    }
}
