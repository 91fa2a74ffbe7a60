//! Progress reporting from a running call.
//!
//! Progress is not ordered with results (SPEC §1): it goes to the host as soon
//! as it is produced. A sink is therefore just a cheap, cloneable callback that
//! never blocks the tool; the actor layer decides where events go.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One progress update of a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Short human-readable status.
    pub message: String,
    /// Tool-specific details (for Bash: last lines, elapsed, byte/line counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

type Emit = dyn Fn(Progress) + Send + Sync;

/// Where a call sends its progress. Sending never blocks and never fails.
#[derive(Clone)]
pub struct ProgressSink {
    emit: Option<Arc<Emit>>,
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressSink")
            .field("connected", &self.emit.is_some())
            .finish()
    }
}

impl ProgressSink {
    /// A sink that drops everything.
    pub fn discard() -> Self {
        ProgressSink { emit: None }
    }

    pub fn new(emit: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressSink {
            emit: Some(Arc::new(emit)),
        }
    }

    pub fn send(&self, progress: Progress) {
        if let Some(emit) = &self.emit {
            emit(progress);
        }
    }

    pub fn message(&self, message: impl Into<String>) {
        self.send(Progress {
            message: message.into(),
            data: None,
        });
    }
}
