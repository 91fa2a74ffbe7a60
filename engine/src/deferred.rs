//! Which deferred tools the model has discovered (SPEC §10).
//!
//! A deferred tool is offered by name only; once ToolSearch has returned its
//! definition, the model may call it like any other. The set lives in the
//! session so discoveries carry over between messages.

use std::collections::HashSet;

use parking_lot::Mutex;

/// Names of deferred tools whose definitions the model has seen.
#[derive(Debug, Default)]
pub struct DiscoveredTools {
    names: Mutex<HashSet<String>>,
}

impl DiscoveredTools {
    pub fn insert(&self, name: impl Into<String>) {
        self.names.lock().insert(name.into());
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names.lock().contains(name)
    }
}
