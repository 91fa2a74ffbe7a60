//! The tool pool the CLI offers.
//!
//! Until the built-in tools crate exports its tools, the CLI has none of
//! its own; this is the single seam where they are registered.

use std::sync::Arc;

use baton_engine::pool::{PoolSpec, ToolPool};
use baton_engine::{PermissionPolicy, Tool};

/// Built-in tools for a session rooted at the given state directory.
pub fn builtin_tools() -> Vec<Arc<Tool>> {
    Vec::new()
}

/// The pool of built-ins under `policy`.
pub fn builtin_pool(policy: &dyn PermissionPolicy) -> ToolPool {
    ToolPool::assemble(
        PoolSpec {
            builtins: builtin_tools(),
            ..Default::default()
        },
        policy,
    )
}
