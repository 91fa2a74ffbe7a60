//! The tool pool the CLI (and hosts that want the defaults) offer.
//!
//! The built-in tools come from `baton-tools`; this is the one seam where
//! the facade turns them into a pool under a permission policy.

use std::sync::Arc;

use baton_engine::pool::{PoolSpec, ToolPool};
use baton_engine::{PermissionPolicy, Tool};
use baton_tools::BuiltinConfig;

/// Every built-in tool with default limits.
pub fn builtin_tools() -> Result<Vec<Arc<Tool>>, String> {
    baton_tools::try_builtins(&BuiltinConfig::default())
        .map(|tools| tools.into_iter().map(Arc::new).collect())
        .map_err(|e| format!("a built-in tool could not be built: {}", e.0))
}

/// The pool of built-ins under `policy` (blanket deny rules remove tools).
pub fn builtin_pool(policy: &dyn PermissionPolicy) -> Result<ToolPool, String> {
    Ok(ToolPool::assemble(
        PoolSpec {
            builtins: builtin_tools()?,
            ..Default::default()
        },
        policy,
    ))
}
