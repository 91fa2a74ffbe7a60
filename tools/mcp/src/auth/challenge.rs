//! Asking a server how it wants to be authorised before a login that no
//! refused request started (`baton mcp login`): one unauthenticated
//! JSON-RPC `ping`; a 401's `WWW-Authenticate` names the resource metadata
//! and scopes. Anything else (no auth needed, an error) gives `None`, and
//! discovery falls back to the well-known locations.

use std::time::Duration;

/// The `WWW-Authenticate` value of an unauthenticated `ping` to `url`,
/// if the server answers 401 with one.
pub async fn challenge_of(url: &str) -> Option<String> {
    let response = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(30))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":"baton-login","method":"ping"}"#)
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get("www-authenticate")?
        .to_str()
        .ok()
        .map(str::to_string)
}
