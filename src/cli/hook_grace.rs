//! How long a session that is ending still waits for hooks.
//!
//! `shutdown`, the end of input and a signal all let running calls report
//! their results; hooks are programs the user wrote and may never end (the
//! default hook timeout is 600 s). So once a session begins to end, hooks
//! get a short grace, after which every running hook is ended (its process
//! group killed, its outcome "interrupted") and later ones, SessionEnd
//! included, end as soon as they start.

use std::time::Duration;

use baton::engine::hooks::HookRegistry;
use baton::engine::CancelReason;

/// What hooks still get once the session is ending.
pub(super) const HOOK_GRACE: Duration = Duration::from_secs(3);

/// Stops every hook of `hooks` after [`HOOK_GRACE`].
pub(super) fn stop_hooks_after_grace(hooks: HookRegistry) {
    tokio::spawn(async move {
        tokio::time::sleep(HOOK_GRACE).await;
        hooks.stop_running(CancelReason::Shutdown);
    });
}
