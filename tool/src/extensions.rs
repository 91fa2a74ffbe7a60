//! A small type-keyed map.
//!
//! The engine must not know concrete tools, yet tools need to keep state
//! between calls (files read, todo list, background shells) and the actor layer
//! needs to hand services to tools (opening a nested batch). A map keyed by
//! type lets each owner define its own type without the engine naming it.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

type Entry = Arc<dyn Any + Send + Sync>;

/// Immutable, cheaply cloneable type map; `with` returns a modified copy.
#[derive(Clone, Default)]
pub struct Extensions {
    map: Arc<HashMap<TypeId, Entry>>,
}

crate::debug_fields! { Extensions as this { len: this.map.len() } }

impl Extensions {
    /// The value stored under type `T`, if any.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|e| e.clone().downcast::<T>().ok())
    }

    /// A copy with `value` stored under its type (replacing any previous one).
    pub fn with<T: Any + Send + Sync>(&self, value: T) -> Self {
        self.with_arc(Arc::new(value))
    }

    /// Like [`Self::with`], for a value already shared.
    pub fn with_arc<T: Any + Send + Sync>(&self, value: Arc<T>) -> Self {
        let mut map: HashMap<TypeId, Entry> = (*self.map).clone();
        map.insert(TypeId::of::<T>(), value);
        Extensions { map: Arc::new(map) }
    }
}

/// Mutable, shared type map: `get_or_default` hands every caller the same slot.
#[derive(Default, Debug)]
pub struct SharedSlots {
    map: std::sync::Mutex<HashMap<TypeId, Entry>>,
}

impl SharedSlots {
    /// The map, even after a panic elsewhere while it was held: every
    /// write is one insert, so a poisoned map is still whole.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TypeId, Entry>> {
        self.map
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The slot of type `T`, created with `T::default()` on first use.
    pub fn get_or_default<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        let mut map = self.lock();
        let entry = map
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()) as Entry)
            .clone();
        drop(map);
        match entry.downcast::<T>() {
            Ok(v) => v,
            // Unreachable: the key is T's TypeId. Recover rather than panic.
            Err(_) => Arc::new(T::default()),
        }
    }

    /// The slot of type `T`, if someone created it.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.lock()
            .get(&TypeId::of::<T>())
            .and_then(|e| e.clone().downcast::<T>().ok())
    }

    /// Puts `value` in the slot of its type, replacing what was there.
    pub fn insert<T: Any + Send + Sync>(&self, value: Arc<T>) {
        self.lock().insert(TypeId::of::<T>(), value);
    }
}
