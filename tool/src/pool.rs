//! The tool pool: which tools the model is offered (SPEC §3).
//!
//! Order matters beyond tidiness: model APIs cache prompts by prefix, so the
//! same tools must come out in the same order every time. Built-ins come
//! first, sorted by name, then host and MCP tools sorted by name, and a
//! built-in always wins a name clash (an MCP server cannot replace `Bash`).
//!
//! A pool is an immutable, shared value. The restriction stack (a skill or a
//! subagent narrowing the tools) is part of the value: pushing returns a new
//! pool sharing the same tools, so a nested scope cannot leak its restriction
//! to its parent.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::permission::PermissionPolicy;
use crate::tool::{Tool, ToolOrigin};

/// Inputs to [`ToolPool::assemble`].
#[derive(Default, Debug)]
pub struct PoolSpec {
    /// Baton's built-in tools; they come first and win name clashes.
    pub builtins: Vec<Arc<Tool>>,
    /// MCP and host-supplied tools.
    pub others: Vec<Arc<Tool>>,
    /// If set, only these names remain.
    pub allow: Option<Vec<String>>,
    /// Removed even if allowed.
    pub disallow: Vec<String>,
}

struct Inner {
    tools: Vec<Arc<Tool>>,
    by_name: HashMap<String, usize>,
    by_alias: HashMap<String, usize>,
}

/// The assembled, ordered set of tools.
#[derive(Clone)]
pub struct ToolPool {
    inner: Arc<Inner>,
    restrictions: Vec<Arc<BTreeSet<String>>>,
}

impl std::fmt::Debug for ToolPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools().map(|t| t.name().to_string()))
            .finish()
    }
}

impl ToolPool {
    /// Assembles the pool in SPEC §3's order. `policy` removes tools that a
    /// blanket deny rule names.
    pub fn assemble(spec: PoolSpec, policy: &dyn PermissionPolicy) -> ToolPool {
        let keep = |t: &Arc<Tool>| t.is_enabled() && !policy.denies_whole_tool(t.name());
        let mut builtins: Vec<Arc<Tool>> = spec.builtins.into_iter().filter(keep).collect();
        let mut others: Vec<Arc<Tool>> = spec.others.into_iter().filter(keep).collect();
        builtins.sort_by(|a, b| a.name().cmp(b.name()));
        others.sort_by(|a, b| a.name().cmp(b.name()));

        let mut tools: Vec<Arc<Tool>> = Vec::with_capacity(builtins.len() + others.len());
        let mut by_name = HashMap::new();
        for tool in builtins.into_iter().chain(others) {
            if by_name.contains_key(tool.name()) {
                continue;
            }
            if let Some(allow) = &spec.allow {
                if !allow.iter().any(|n| n == tool.name()) {
                    continue;
                }
            }
            if spec.disallow.iter().any(|n| n == tool.name()) {
                continue;
            }
            by_name.insert(tool.name().to_string(), tools.len());
            tools.push(tool);
        }
        let mut by_alias = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            for alias in tool.def().aliases() {
                if !by_name.contains_key(alias) {
                    by_alias.entry(alias.clone()).or_insert(i);
                }
            }
        }
        ToolPool {
            inner: Arc::new(Inner {
                tools,
                by_name,
                by_alias,
            }),
            restrictions: Vec::new(),
        }
    }

    /// A pool of built-ins only, nothing filtered (tests, examples).
    pub fn of(builtins: Vec<Tool>) -> ToolPool {
        ToolPool::assemble(
            PoolSpec {
                builtins: builtins.into_iter().map(Arc::new).collect(),
                ..Default::default()
            },
            &crate::permission::AllowAllUnsafe,
        )
    }

    fn permitted(&self, tool: &Tool) -> bool {
        self.restrictions
            .last()
            .is_none_or(|top| top.contains(tool.name()))
    }

    /// The tools offered, in prompt order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.inner.tools.iter().filter(|t| self.permitted(t))
    }

    /// The names of the tools calls may use, in pool order.
    pub fn names(&self) -> Vec<String> {
        self.tools().map(|t| t.name().to_string()).collect()
    }

    /// Finds a tool by exact name, then by alias; restricted tools are not found.
    pub fn get(&self, name: &str) -> Option<&Arc<Tool>> {
        let i = self
            .inner
            .by_name
            .get(name)
            .or_else(|| self.inner.by_alias.get(name))
            .or_else(|| {
                let today = crate::aliases::canonical_tool_name(name);
                self.inner.by_name.get(today)
            })?;
        let tool = &self.inner.tools[*i];
        self.permitted(tool).then_some(tool)
    }

    /// A pool in which only `names` are available, until popped.
    pub fn push_restriction<I, S>(&self, names: I) -> ToolPool
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut next = self.clone();
        next.restrictions
            .push(Arc::new(names.into_iter().map(Into::into).collect()));
        next
    }

    /// The pool as it was before the last push.
    pub fn pop_restriction(&self) -> ToolPool {
        let mut next = self.clone();
        next.restrictions.pop();
        next
    }

    /// Whether both pools hold the same assembled tools (restrictions aside);
    /// lets a tool cache what it derives from a pool.
    pub fn shares_tools_with(&self, other: &ToolPool) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// How many restrictions (subagent scopes) are pushed on the pool.
    pub fn restriction_depth(&self) -> usize {
        self.restrictions.len()
    }

    /// Whether the tool came from outside the built-ins.
    pub fn is_external(tool: &Tool) -> bool {
        !matches!(tool.def().tool_origin(), ToolOrigin::BuiltIn)
    }
}
