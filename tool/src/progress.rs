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

/// An emitter shared by many calls; each call's sink tags its progress
/// with the call's index and id (see [`ProgressSink::tagged`]).
pub type TaggedEmit = dyn Fn(usize, &Arc<str>, Progress) + Send + Sync;

/// Where a call sends its progress. Sending never blocks and never fails.
#[derive(Clone)]
pub struct ProgressSink {
    emit: Target,
}

#[derive(Clone)]
enum Target {
    Discard,
    Own(Arc<Emit>),
    Tagged(Arc<TaggedEmit>, usize, Arc<str>),
}

crate::debug_fields! { ProgressSink as this { connected: !matches!(this.emit, Target::Discard) } }

impl ProgressSink {
    /// A sink that drops everything.
    pub fn discard() -> Self {
        ProgressSink {
            emit: Target::Discard,
        }
    }

    /// A sink calling `emit` with every report.
    pub fn new(emit: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressSink {
            emit: Target::Own(Arc::new(emit)),
        }
    }

    /// A sink of call `index` (`call_id`) over an emitter its batch
    /// shares: no closure to allocate per call, which [`Self::new`] needs.
    pub fn tagged(emit: Arc<TaggedEmit>, index: usize, call_id: Arc<str>) -> Self {
        ProgressSink {
            emit: Target::Tagged(emit, index, call_id),
        }
    }

    /// Reports `progress` (never blocks; dropped when nobody listens).
    pub fn send(&self, progress: Progress) {
        match &self.emit {
            Target::Discard => {}
            Target::Own(emit) => emit(progress),
            Target::Tagged(emit, index, call_id) => emit(*index, call_id, progress),
        }
    }

    /// Reports a line of text without data.
    pub fn message(&self, message: impl Into<String>) {
        self.send(Progress {
            message: message.into(),
            data: None,
        });
    }
}
