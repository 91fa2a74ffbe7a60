//! `ToolSearch`: loads deferred tools on demand (SPEC §10).
//!
//! A session with hundreds of MCP tools offers most of them by name only;
//! the model calls this tool to get the definitions it needs, either by name
//! (`select:A,B`) or by keywords ranked as [`index`] describes. What it finds
//! is recorded in the session's [`DiscoveredTools`], so the next request's
//! tool list (see `baton_engine::deferred::request_tools`) carries it.
//!
//! The result depends on what the host's API accepts: `tool_reference`
//! blocks (Anthropic's API expands them into the definitions), or the full
//! definitions as text in the host's wire format.

pub(crate) mod index;
pub(crate) mod query;
mod render;

use std::sync::Arc;

use baton_engine::deferred::{
    deferral_of, is_deferred_now, Deferral, DiscoveredTools, PoolService, TOOL_SEARCH,
};
use baton_engine::{
    async_trait, InterruptBehavior, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
    ToolPool, WorkKind,
};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

pub use index::{search_linear, SearchIndex};
pub use query::{name_parts, Query};

/// Results returned when the call does not say.
pub const DEFAULT_MAX_RESULTS: usize = 5;

/// The input of `ToolSearch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// `select:Name1,Name2` to load tools by exact name, or keywords describing
    /// the capability you need; prefix a keyword with `+` to require it in the
    /// tool name (e.g. `+slack send message`).
    pub query: String,
    /// Most tools to return for a keyword search (default 5); ignored by
    /// `select:`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_results: Option<u32>,
}

/// The tool, with its index of the last pool it searched.
#[derive(Default, Debug)]
pub struct ToolSearch {
    index: Mutex<Option<(bool, Arc<SearchIndex>)>>,
}

impl ToolSearch {
    /// The index of `pool`'s deferred tools, built on first use and kept
    /// while the pool is the same.
    /// One pool may serve several engines (sessions) whose tool search is
    /// on in one and off in another, so the cache is keyed by both.
    fn index_for(&self, pool: &ToolPool, deferral: &Deferral) -> Arc<SearchIndex> {
        let mut cached = self.index.lock();
        if let Some((_, index)) = cached
            .as_ref()
            .filter(|(active, i)| *active == deferral.active && i.is_for(pool))
        {
            return index.clone();
        }
        let index = Arc::new(SearchIndex::build(pool, deferral));
        *cached = Some((deferral.active, index.clone()));
        index
    }
}

/// The `ToolSearch` tool: finds deferred tools by name or keywords and
/// loads their definitions for the next turn.
pub fn tool() -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        TOOL_SEARCH,
        "Loads deferred tools. Some tools are listed by name only (in a \
         <system-reminder>, or marked deferred); their parameters are unknown until \
         loaded, and calling one unloaded fails. Query forms:\n\
         - \"select:Read,NotebookEdit\": load these tools by exact name;\n\
         - \"notebook jupyter\": keywords; the best matches are loaded (max_results, default 5);\n\
         - \"+slack send\": a `+` keyword must appear in the tool's name, the others rank.\n\
         Loaded tools can be called from your next turn on.",
    )
    .search_hint("find load deferred tools by name or keyword")
    .interrupt(InterruptBehavior::Cancel)
    .always_load(true)
    // Microseconds of in-memory matching over the tool pool; no process.
    .work_kind(WorkKind::Wait);
    Tool::typed::<ToolSearchInput, _>(def, ToolSearch::default())
}

#[async_trait]
impl ToolLogic<ToolSearchInput> for ToolSearch {
    fn is_concurrency_safe(&self, _: &ToolSearchInput) -> bool {
        true
    }

    fn is_read_only(&self, _: &ToolSearchInput) -> bool {
        true
    }

    async fn call(
        &self,
        input: ToolSearchInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let pool = PoolService::of(&ctx).ok_or_else(|| {
            ToolError::new("ToolSearch cannot see the tool pool in this context (no PoolService); the host must run it inside a batch")
        })?;
        let deferral = deferral_of(&ctx.session);
        let discovered = ctx.session.slots().get_or_default::<DiscoveredTools>();
        let query = Query::parse(&input.query);
        let (found, missing) = match &query {
            Query::Select(names) => select(&pool, names),
            Query::Keywords { required, optional } => {
                let max = input
                    .max_results
                    .map_or(DEFAULT_MAX_RESULTS, |m| m.max(1) as usize);
                let index = self.index_for(&pool, &deferral);
                (index.search(required, optional, max, &pool), Vec::new())
            }
        };
        for name in &found {
            if pool
                .get(name)
                .is_some_and(|t| is_deferred_now(t, &pool, &deferral))
            {
                discovered.insert(name.clone());
            }
        }
        Ok(render::output(
            &pool,
            &deferral.settings,
            &input.query,
            &query,
            &found,
            &missing,
        ))
    }
}

/// Tools named by `select:`, by exact name or alias, else ignoring case;
/// returns the names found (canonical, in the order asked) and those not.
fn select(pool: &ToolPool, names: &[String]) -> (Vec<String>, Vec<String>) {
    let mut found: Vec<String> = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        let tool = pool.get(name).cloned().or_else(|| {
            pool.tools()
                .find(|t| t.name().eq_ignore_ascii_case(name))
                .cloned()
        });
        match tool {
            Some(t) if !found.iter().any(|f| f == t.name()) => found.push(t.name().to_string()),
            Some(_) => {}
            None => missing.push(name.clone()),
        }
    }
    (found, missing)
}

#[cfg(test)]
mod tests;
