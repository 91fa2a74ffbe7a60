//! OAuth logins in `baton serve`: when a remote MCP server needs one, the
//! host gets an `mcp_oauth` line with the URL for its user to open; the
//! loopback redirect listener completes the login, so the host sends
//! nothing back.

use baton::mcp::auth::UrlOpener;
use serde_json::json;

use super::output::write_line;

/// The serve host as the opener of authorization URLs.
pub(crate) struct HostOpener;

#[baton::engine::async_trait]
impl UrlOpener for HostOpener {
    async fn open(&self, server: &str, url: &str) -> Result<(), String> {
        write_line(&json!({
            "type": "mcp_oauth",
            "server": server,
            "url": url,
            "message": format!("Open this URL to log in to the MCP server \"{server}\"."),
        }))
        .map_err(|e| format!("cannot tell the host: {e:?}"))
    }
}

/// Makes the host the opener for servers started from now on.
pub(crate) fn install() {
    crate::cli::mcp::set_oauth_opener(Some(std::sync::Arc::new(HostOpener)));
}
