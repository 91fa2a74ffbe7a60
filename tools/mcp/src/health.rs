//! An MCP server's health as metrics: whether it is ready, and how often
//! it failed. Watches the server's state rather than every place that
//! changes it, so a new transition cannot be forgotten.

use tokio::sync::watch;

use crate::server::ServerState;

/// Records `name`'s health from `state` until the server is dropped.
pub(crate) fn watch(name: String, mut state: watch::Receiver<ServerState>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        loop {
            let now = state.borrow_and_update().clone();
            let failed = matches!(now, ServerState::Failed(_) | ServerState::Restarting { .. });
            baton_engine::metrics::mcp_server(&name, now == ServerState::Ready, failed);
            if state.changed().await.is_err() {
                return;
            }
        }
    });
}
