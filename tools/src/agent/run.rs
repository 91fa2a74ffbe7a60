//! One Agent call: checks, the subagent's pool and context, the host's run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::nesting::NestingService;
use baton_engine::subagent::{
    child_mode, AgentChain, AgentDefinition, AgentFrame, RunningSlot, SubagentBatches,
    SubagentHooks, SubagentReport, SubagentRunner, SubagentService, SubagentTask,
    MAX_CONCURRENT_ENV, MAX_DEPTH_ENV,
};
use baton_engine::HookRegistry;
use baton_engine::{ToolContext, ToolError, ToolOutput, ToolPool};

use super::background::{self, BackgroundAgents};
use super::catalog::{AgentCatalog, READ_ONLY_TOOLS};
use super::tree::{AgentRecord, AgentState, AgentTree};
use super::worktree::Worktree;
use super::AgentInput;
use crate::bash::TaskOwner;
use baton_engine::subagent_inbox::Letter;

/// How long a runner may take to wind down once its Agent call was
/// cancelled, before the call stops waiting for it.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The tool a `tools:` entry names: a rule's tool part, old names mapped
/// through the engine's one alias table.
pub(crate) fn canonical(name: &str) -> &str {
    let tool = name.split('(').next().unwrap_or(name).trim();
    baton_engine::aliases::canonical_tool_name(tool)
}

/// The subagent's tools: the parent's, narrowed by the definition. The
/// restriction stack only checks its top, so the new top is cut from what
/// the parent can see, never wider.
pub(crate) fn child_pool(parent: &ToolPool, def: &AgentDefinition) -> ToolPool {
    let listed = def.tools.as_ref().map(|t| {
        t.iter()
            .map(|n| canonical(n).to_string())
            .collect::<Vec<_>>()
    });
    let denied: Vec<&str> = def.disallowed_tools.iter().map(|n| canonical(n)).collect();
    let names: Vec<String> = parent
        .names()
        .into_iter()
        .filter(|n| listed.as_ref().is_none_or(|l| l.iter().any(|x| x == n)))
        .filter(|n| !denied.contains(&n.as_str()))
        .filter(|n| !def.read_only || READ_ONLY_TOOLS.contains(&n.as_str()))
        .collect();
    parent.push_restriction(names)
}

fn refuse(text: String) -> Result<ToolOutput, ToolError> {
    Err(ToolError::new(text))
}

/// What one run of a subagent starts from: a new Agent call, or a
/// `SendMessage` continuing a subagent that had ended.
pub(crate) struct Launch {
    pub definition: Arc<AgentDefinition>,
    pub description: String,
    pub prompt: String,
    /// The call's `model`; the definition's applies when `None`.
    pub model: Option<String>,
    pub name: Option<String>,
    pub background: bool,
    pub worktree: bool,
    /// The subagent to continue (its id, and the transcript its last run
    /// reported), for a resumed run.
    pub resume: Option<AgentRecord>,
}

pub(crate) async fn run(
    catalog: &AgentCatalog,
    input: AgentInput,
    ctx: ToolContext,
) -> Result<ToolOutput, ToolError> {
    let definition = catalog
        .find(input.subagent_type.as_deref())
        .map_err(ToolError::new)?;
    let launch = Launch {
        definition,
        description: input.description,
        prompt: input.prompt,
        model: input.model,
        name: input.name.filter(|n| !n.trim().is_empty()),
        background: input.run_in_background == Some(true),
        worktree: input.isolation.as_deref() == Some("worktree"),
        resume: None,
    };
    launch_run(launch, ctx).await
}

pub(crate) async fn launch_run(launch: Launch, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let Some(service) = SubagentService::of(&ctx) else {
        return refuse(
            "No subagent runner is registered: this host does not run subagents, so the \
             Agent tool cannot be used here. Do the task yourself with the other tools."
                .into(),
        );
    };
    let definition = launch.definition.clone();
    let chain = AgentChain::of(&ctx.context);
    let max_depth = service.limits.max_depth;
    if chain.depth() >= max_depth {
        return refuse(format!(
            "Subagent depth limit reached: subagents may nest at most {max_depth} levels \
             ({MAX_DEPTH_ENV}); this agent is at level {}. Do the task yourself.",
            chain.depth()
        ));
    }
    let Some(nesting) = NestingService::of(&ctx) else {
        return refuse("this engine cannot run nested batches, so no subagent can run".into());
    };
    let Some(parent_pool) = nesting.pool() else {
        return refuse("this engine does not say which tools a subagent may use".into());
    };
    let Some(slot) = service.try_start() else {
        return refuse(format!(
            "Concurrent subagent limit reached: at most {} subagents may run at once \
             ({MAX_CONCURRENT_ENV}). Wait for running agents to finish, or do the task yourself.",
            service.limits.max_concurrent
        ));
    };

    let agent_id = match &launch.resume {
        Some(record) => record.id.clone(),
        None => service.next_agent_id(),
    };
    let background = launch.background;
    let worktree = match launch.worktree {
        true => Some(
            Worktree::create(ctx.cwd(), ctx.session.state_dir(), &agent_id)
                .await
                .map_err(ToolError::new)?,
        ),
        false => None,
    };
    let pool = child_pool(&parent_pool, &definition);
    // At the last level `Agent` is not offered to the model; its batches
    // keep it, so a call made anyway gets the depth-limit error, not
    // "no such tool".
    let offered = if chain.depth() + 1 >= max_depth {
        pool.push_restriction(pool.names().into_iter().filter(|n| n != "Agent"))
    } else {
        pool.clone()
    };
    let mut context = ctx.context.clone();
    context.permission_mode = child_mode(context.permission_mode, definition.permission_mode);
    if let Some(tree) = &worktree {
        context.cwd = tree.cwd_for(ctx.cwd());
        let mut roots = vec![tree.path.clone()];
        roots.extend(context.roots.iter().cloned());
        context.roots = Arc::new(roots);
    }
    let chain = chain.pushed(AgentFrame {
        agent_id: agent_id.clone(),
        agent_type: definition.name.clone(),
        call_id: ctx.call_id.clone(),
    });
    // Background shells the subagent starts are its own, stopped when it ends.
    context.extensions = context
        .extensions
        .with(chain)
        .with(TaskOwner(agent_id.clone()));

    let model = launch.model.clone().or_else(|| {
        definition
            .model
            .clone()
            .filter(|m| !m.eq_ignore_ascii_case("inherit"))
    });
    // A background agent's batches hang under the session's background
    // root, not under this call, which returns at once.
    let mut parent = ctx.clone();
    if background {
        parent.cancel = BackgroundAgents::scope(&ctx.session);
    }
    let tree = AgentTree::of(&ctx.session);
    let inbox = match &launch.resume {
        Some(record) => record.inbox.clone(),
        None => Arc::default(),
    };
    tree.started(AgentRecord {
        id: agent_id.clone(),
        name: launch.name.clone(),
        agent_type: definition.name.clone(),
        description: launch.description.clone(),
        parent: chain_parent(&ctx),
        state: AgentState::Running,
        background,
        inbox: inbox.clone(),
        started: Instant::now(),
        definition: definition.clone(),
        model: launch.model.clone(),
        transcript: None,
    });
    let batches = SubagentBatches::new(parent.clone(), pool, context.clone());
    let hooks = Arc::new(SubagentHooks::new(
        ctx.services
            .get::<HookRegistry>()
            .map(|h| (*h).clone())
            .unwrap_or_default(),
        &ctx.session,
        &context,
        agent_id.clone(),
        definition.name.clone(),
    ));
    // A hanging SubagentStart hook yields to an interrupt (dropped: its
    // process group is killed); the run then sees the cancellation.
    let start = tokio::select! {
        s = hooks.start() => s,
        _ = parent.cancel.cancelled() => Default::default(),
    };
    let task = SubagentTask {
        agent_id: agent_id.clone(),
        definition: definition.clone(),
        description: launch.description.clone(),
        prompt: launch.prompt.clone(),
        model,
        tools: offered,
        context,
        cancel: parent.cancel.clone(),
        batches: batches.clone(),
        start_context: start.additional_context,
        hooks: hooks.clone(),
        inbox,
        resume: launch
            .resume
            .as_ref()
            .map(|r| r.transcript.clone().unwrap_or_default()),
    };
    let run = Run {
        agent_id: agent_id.clone(),
        agent_type: definition.name.clone(),
        runner: service.runner.clone(),
        batches,
        worktree,
        hooks,
        _slot: slot,
    };
    if background {
        let output = background::output_file(&ctx.session, &agent_id);
        let text = background::launched(&agent_id, &output);
        let listed = background::listed(&parent, &agent_id, &launch.description);
        tokio::spawn(async move {
            let ended = run.run(task, &parent).await;
            // The tree first: whoever hears of the end may message it at
            // once, and must find it ended.
            let unread = mark_ended(&parent, &agent_id, ended.state, ended.transcript);
            background::finished(&parent.session, &agent_id, &ended.text, ended.state).await;
            listed.ended(&parent.session, ended.state);
            continue_with(&parent, unread);
        });
        return Ok(ToolOutput::text(text));
    }
    let ended = run.run(task, &ctx).await;
    let unread = mark_ended(&ctx, &agent_id, ended.state, ended.transcript);
    continue_with(&ctx, unread);
    match ended.state {
        AgentState::Finished => Ok(ToolOutput::text(ended.text)),
        _ => Err(ToolError::new(ended.text)),
    }
}

/// The subagent the calling context runs inside (`None`: the main agent).
fn chain_parent(ctx: &ToolContext) -> Option<String> {
    AgentChain::of(&ctx.context)
        .current()
        .map(|f| f.agent_id.clone())
}

/// Marks the run's end in the session's agent tree; returns the messages
/// that came in after the runner last looked (the subagent then stays
/// marked running, for [`continue_with`]).
fn mark_ended(
    ctx: &ToolContext,
    agent_id: &str,
    state: AgentState,
    transcript: Option<Vec<serde_json::Value>>,
) -> Option<(AgentRecord, Vec<Letter>)> {
    AgentTree::of(&ctx.session).ended(agent_id, state, transcript)
}

/// Unread messages would otherwise be lost: the subagent is continued
/// with them in the background, as a message to a finished agent is.
fn continue_with(ctx: &ToolContext, unread: Option<(AgentRecord, Vec<Letter>)>) {
    let Some((record, letters)) = unread else {
        return;
    };
    let prompt = letters
        .iter()
        .map(|l| l.text())
        .collect::<Vec<_>>()
        .join("\n");
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let launch = super::messaging::resumed(record, prompt);
        let id = launch
            .resume
            .as_ref()
            .map(|r| r.id.clone())
            .unwrap_or_default();
        if let Err(e) = Box::pin(launch_run(launch, ctx.clone())).await {
            AgentTree::of(&ctx.session).ended(&id, AgentState::Failed, None);
            tracing_note(&ctx, &id, &e.to_string());
        }
    });
}

/// Tells the host a continuation could not start (nobody else would know).
fn tracing_note(ctx: &ToolContext, agent_id: &str, why: &str) {
    ctx.session.notify(baton_engine::Notification {
        kind: "agent_finished".into(),
        message: format!("Agent {agent_id} could not be continued with its messages: {why}"),
        data: Some(serde_json::json!({"agent_id": agent_id, "status": "failed", "text": why})),
    });
}

/// One subagent from start to end, in the foreground or background.
struct Run {
    agent_id: String,
    agent_type: String,
    runner: Arc<dyn SubagentRunner>,
    batches: SubagentBatches,
    worktree: Option<Worktree>,
    hooks: Arc<SubagentHooks>,
    /// The running slot, freed when the run ends.
    _slot: RunningSlot,
}

impl Run {
    /// Runs the loop, stops what the subagent left running, settles the
    /// worktree; the result text and whether it is an error.
    async fn run(self, task: SubagentTask, parent: &ToolContext) -> Ended {
        let started = Instant::now();
        let outcome = run_to_end(self.runner.clone(), task, parent).await;
        let transcript = outcome.as_ref().ok().and_then(|r| r.transcript.clone());
        let cancelled = parent.cancel.is_cancelled();
        let unheard = stop_hooks(&self.hooks, &outcome, parent).await;
        crate::bash::stop_owned(&parent.session, &self.agent_id).await;
        let kept = match self.worktree {
            Some(tree) => tree.finish().await,
            None => None,
        };
        let uses = self.batches.tool_uses();
        let (mut text, state) = match outcome {
            Ok(report) => (
                completed(&self.agent_id, &report, uses, started.elapsed()),
                AgentState::Finished,
            ),
            Err(message) => (
                format!(
                    "Subagent {} ({}) failed after {uses} tool uses: {message}",
                    self.agent_id, self.agent_type
                ),
                if cancelled {
                    AgentState::Cancelled
                } else {
                    AgentState::Failed
                },
            ),
        };
        if let Some(feedback) = unheard {
            text.push_str(&format!(
                "\n\nA SubagentStop hook asked the subagent to go on, but its runner had \
                 already returned (it does not ask SubagentTask::stopping): {feedback}"
            ));
        }
        if let Some(kept) = kept {
            text.push_str(
                "

The agent changed its worktree, which was kept:
",
            );
            text.push_str(&kept);
        }
        Ended {
            text,
            state,
            transcript,
        }
    }
}

/// How one run of a subagent ended.
struct Ended {
    /// The Agent call's result text.
    text: String,
    state: AgentState,
    /// What the runner reported, kept for a later continuation.
    transcript: Option<Vec<serde_json::Value>>,
}

/// Fires SubagentStop for a runner that did not ask the hooks itself.
/// After a cancellation the hooks run on their own, so they never hold up
/// the cancelled call; their feedback is then moot. Returns the feedback a
/// hook gave a subagent that completed, which can no longer act on it.
async fn stop_hooks(
    hooks: &Arc<SubagentHooks>,
    outcome: &Result<SubagentReport, String>,
    parent: &ToolContext,
) -> Option<String> {
    if hooks.asked() {
        return None;
    }
    let last = outcome.as_ref().ok().map(|r| r.text.clone());
    if parent.cancel.is_cancelled() {
        let hooks = hooks.clone();
        tokio::spawn(async move { hooks.ended(last.as_deref()).await });
        return None;
    }
    let feedback = hooks.ended(last.as_deref()).await;
    feedback.filter(|_| outcome.is_ok())
}

/// Runs the host's loop. Once the call is cancelled the loop gets a grace
/// period to see its cancelled batches and return; a loop that ignores
/// cancellation is then dropped, so the Agent call still ends.
async fn run_to_end(
    runner: Arc<dyn SubagentRunner>,
    task: SubagentTask,
    ctx: &ToolContext,
) -> Result<SubagentReport, String> {
    let run = runner.run(task);
    tokio::pin!(run);
    tokio::select! {
        r = &mut run => r,
        _ = ctx.cancel.cancelled() => match tokio::time::timeout(STOP_GRACE, run).await {
            Ok(r) => r,
            Err(_) => Err("the subagent did not stop after its call was cancelled".into()),
        },
    }
}

/// The result text: the subagent's reply, then what it cost.
pub(crate) fn completed(
    agent_id: &str,
    report: &SubagentReport,
    tool_uses: usize,
    elapsed: Duration,
) -> String {
    let mut text = if report.text.trim().is_empty() {
        "(the subagent finished without a final message)".to_string()
    } else {
        report.text.clone()
    };
    text.push_str(&format!(
        "\n\nagentId: {agent_id}\n<usage>tool_uses: {tool_uses}\nduration_ms: {}",
        elapsed.as_millis()
    ));
    if let (Some(i), Some(o)) = (report.input_tokens, report.output_tokens) {
        text.push_str(&format!("\ntotal_tokens: {}", i + o));
    }
    text.push_str("</usage>");
    text
}
