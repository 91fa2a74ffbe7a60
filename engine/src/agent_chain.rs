//! Which subagents a call runs inside: a chain kept in each context's
//! extensions, read by hooks (`agent_id`, `agent_type`), approvals (the
//! asking call's `agent_chain`) and the subagent machinery that extends it.

use baton_tool::context::Context;

/// One level of the subagent chain a call runs inside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentFrame {
    /// Id of the subagent (unique in the engine).
    pub agent_id: String,
    /// Its definition's name (`subagent_type`).
    pub agent_type: String,
    /// Id of the `Agent` call that started it.
    pub call_id: String,
}

/// The subagents a context belongs to, outermost first; empty for the main
/// agent. Kept in [`Context::extensions`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentChain(pub Vec<AgentFrame>);

impl AgentChain {
    /// The chain of `context` (empty outside any subagent).
    pub fn of(context: &Context) -> AgentChain {
        context
            .extensions
            .get::<AgentChain>()
            .map(|c| (*c).clone())
            .unwrap_or_default()
    }

    /// How many subagent levels deep the context is.
    pub fn depth(&self) -> usize {
        self.0.len()
    }

    /// The innermost subagent, if any.
    pub fn current(&self) -> Option<&AgentFrame> {
        self.0.last()
    }

    /// Ids of the `Agent` calls from the root down.
    pub fn call_ids(&self) -> Vec<String> {
        self.0.iter().map(|f| f.call_id.clone()).collect()
    }

    /// This chain with `frame` added as the innermost level.
    pub fn pushed(&self, frame: AgentFrame) -> AgentChain {
        let mut next = self.clone();
        next.0.push(frame);
        next
    }
}
