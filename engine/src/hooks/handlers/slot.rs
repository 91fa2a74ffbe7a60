//! A place a host fills after the settings were read.
//!
//! Handlers that need something only the host has (its model for `prompt`
//! and `agent` hooks, its MCP client for `mcp_tool` hooks) are built when
//! the settings load, before the host made that thing. Every handler of
//! one load shares a slot; the host sets it once, and a handler whose slot
//! is still empty reports that as its failure.

use std::sync::{Arc, RwLock};

/// A shared place for one `T`, empty until the host fills it; clones share it.
pub struct Slot<T: ?Sized>(Arc<RwLock<Option<Arc<T>>>>);

impl<T: ?Sized> Slot<T> {
    /// Fills the slot (replacing what was there) for every handler sharing it.
    pub fn set(&self, value: Arc<T>) {
        if let Ok(mut slot) = self.0.write() {
            *slot = Some(value);
        }
    }

    pub(crate) fn get(&self) -> Option<Arc<T>> {
        self.0.read().ok().and_then(|s| s.clone())
    }
}

// Written out: derives would require `T: Clone + Default`, which a trait
// object is not.
impl<T: ?Sized> Clone for Slot<T> {
    fn clone(&self) -> Self {
        Slot(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Default for Slot<T> {
    fn default() -> Self {
        Slot(Arc::new(RwLock::new(None)))
    }
}

impl<T: ?Sized> std::fmt::Debug for Slot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}
