//! Cancellation scopes: turn → batch → call → nested batch.
//!
//! A bare token says *that* work was cancelled; the model also needs to know
//! *why* (the user pressed Esc, a sibling shell command failed, the engine is
//! shutting down), because the result text differs. So each scope carries the
//! reason it was cancelled with, and a child that was cancelled through its
//! parent reports the parent's reason. Cancelling a parent reaches every
//! descendant; cancelling a child never touches the parent.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// Why a scope was cancelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// The user stopped the turn (Esc / Ctrl-C).
    User,
    /// The user typed a new message; only tools that interrupt on it stop.
    NewMessage,
    /// The engine cancelled this call because another call of its batch failed.
    Sibling {
        /// Id of the call whose failure triggered the cancellation.
        failed_call_id: String,
        /// Short label of the failed call, e.g. `Bash(make -j8…)`.
        failed_call: String,
    },
    /// The engine or host is shutting down.
    Shutdown,
    /// Anything else, with a description.
    Other(String),
}

/// One scope: its token and reason slot, linked to its parent's. Shared
/// by every clone of the scope, so cloning never copies the ancestor chain
/// and never touches the token: a `CancellationToken` clone or drop locks
/// its tree node, and a call's scope is cloned several times on its way
/// (its context, the coordinator's slot, the pipeline's stages).
///
/// The token is made the first time something needs it: to wait for
/// cancellation, to cancel, or to make a child's token. Until then the
/// scope is cancelled exactly when an ancestor is, and asking walks up to
/// the nearest ancestor that has a token. Most calls end without anyone
/// waiting on their scope (a no-op, a read that finished at once), and a
/// token made eagerly cost each of them an allocation and two locks of the
/// batch's token (to join its children, and to leave them on drop).
#[derive(Debug)]
struct Node {
    token: OnceLock<CancellationToken>,
    reason: OnceLock<CancelReason>,
    parent: Option<Arc<Node>>,
}

impl Node {
    fn token(&self) -> &CancellationToken {
        self.token.get_or_init(|| match &self.parent {
            // A parent cancelled by then gives a child born cancelled.
            Some(parent) => parent.token().child_token(),
            None => CancellationToken::new(),
        })
    }

    fn is_cancelled(&self) -> bool {
        match self.token.get() {
            Some(token) => token.is_cancelled(),
            // Without a token this scope was never cancelled itself
            // (cancelling makes the token): only an ancestor can be.
            None => self.parent.as_ref().is_some_and(|p| p.is_cancelled()),
        }
    }
}

/// A node of the cancellation tree. Cheap to clone; clones share the node.
#[derive(Clone, Debug)]
pub struct CancelScope {
    node: Arc<Node>,
}

impl Default for CancelScope {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelScope {
    /// A root scope.
    pub fn new() -> Self {
        CancelScope {
            node: Arc::new(Node {
                token: OnceLock::new(),
                reason: OnceLock::new(),
                parent: None,
            }),
        }
    }

    /// A scope cancelled whenever this one is, which can also be cancelled alone.
    pub fn child(&self) -> Self {
        CancelScope {
            node: Arc::new(Node {
                token: OnceLock::new(),
                reason: OnceLock::new(),
                parent: Some(Arc::clone(&self.node)),
            }),
        }
    }

    /// Cancels this scope and all its descendants. The first reason sticks:
    /// cancelling twice is harmless and keeps the original explanation.
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.node.reason.set(reason);
        self.node.token().cancel();
    }

    /// Whether this scope (or one above it) was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.node.is_cancelled()
    }

    /// Why this scope is cancelled: its own reason, else the nearest
    /// cancelled ancestor's. `None` while not cancelled.
    pub fn reason(&self) -> Option<CancelReason> {
        if !self.node.is_cancelled() {
            return None;
        }
        let mut node = Some(&self.node);
        while let Some(n) = node {
            if let Some(r) = n.reason.get() {
                return Some(r.clone());
            }
            node = n.parent.as_ref();
        }
        Some(CancelReason::Other("cancelled".into()))
    }

    /// Resolves when this scope is cancelled.
    pub async fn cancelled(&self) {
        self.node.token().cancelled().await
    }

    /// The underlying token, for APIs that take one.
    pub fn token(&self) -> &CancellationToken {
        self.node.token()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_reason_reaches_children_but_not_the_reverse() {
        let batch = CancelScope::new();
        let call = batch.child();
        let nested = call.child();
        nested.cancel(CancelReason::Shutdown);
        assert!(!call.is_cancelled());
        assert!(!batch.is_cancelled());

        let other = call.child();
        batch.cancel(CancelReason::User);
        assert!(other.is_cancelled());
        assert_eq!(other.reason(), Some(CancelReason::User));
        // A scope cancelled first keeps its own reason.
        assert_eq!(nested.reason(), Some(CancelReason::Shutdown));
    }

    /// Tokens are made lazily: a scope whose token comes after its
    /// ancestor was cancelled is born cancelled, and one made before wakes
    /// its waiter when the ancestor is cancelled.
    #[tokio::test]
    async fn late_and_early_tokens_both_see_an_ancestor_cancel() {
        let turn = CancelScope::new();
        let batch = turn.child();
        let early = batch.child();
        let waiting = tokio::spawn({
            let early = early.clone();
            async move { early.cancelled().await }
        });
        let late = batch.child().child();
        assert!(!late.is_cancelled());
        turn.cancel(CancelReason::User);
        assert!(late.is_cancelled());
        assert_eq!(late.reason(), Some(CancelReason::User));
        // Its token is made only now, under a cancelled ancestor.
        late.cancelled().await;
        assert!(late.token().is_cancelled());
        assert!(waiting.await.is_ok());
        assert_eq!(early.reason(), Some(CancelReason::User));
    }

    #[test]
    fn first_reason_sticks() {
        let s = CancelScope::new();
        s.cancel(CancelReason::NewMessage);
        s.cancel(CancelReason::User);
        assert_eq!(s.reason(), Some(CancelReason::NewMessage));
    }
}
