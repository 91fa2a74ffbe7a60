//! The per-call pipeline (SPEC §4), as a sequence of stages.
//!
//! ```text
//! prepare (at add time):  lookup → parse → classify
//! run:                    cancelled? → schema → validate_input → pre-hooks
//!                         → permission → invoke → map/size → post-hooks
//! ```
//!
//! Each stage either lets the call continue or finishes it with a result;
//! [`Early`] carries that result out through `?`, so `run` reads as the list
//! of stages. Post-hooks see every result of a call that reached the tool.
//! Nothing here knows a concrete tool or the actor layer: permission and
//! hooks are traits, and the coordinator decides *when* a call runs.

mod approval;
pub mod batch_hooks;
mod hook_views;
mod invoke;
pub mod judge;
pub mod messages;
mod permission;
mod permission_hooks;
mod post_hooks;
mod pre_hooks;
mod ready_now;
mod run;
pub mod size;
mod trace;
pub mod unspilled;
mod validate;

use std::sync::Arc;
use std::time::Duration;

use crate::hooks::{HookEvent, HookInput, HookRegistry};
use crate::permission::{
    AllowAllUnsafe, Approver, PermissionPolicy, PermissionRequest, PermissionTarget, RulePolicy,
};
use crate::settings::Settings;
use baton_tool::call::{CallResult, Outcome, ToolUse};
use baton_tool::cancel::CancelReason;
use baton_tool::context::ToolContext;
use baton_tool::pool::ToolPool;
use baton_tool::schema::SchemaProblem;
use baton_tool::tool::{InterruptBehavior, ParsedInput, Tool, WorkKind};

/// A stage finished the call early with this result.
pub(crate) struct Early(Box<CallResult>);

impl Early {
    pub(crate) fn new(result: CallResult) -> Self {
        Early(Box::new(result))
    }
}

type Flow<T = ()> = Result<T, Early>;

/// An approver supplied per batch by the runtime, through
/// [`ToolContext::services`]; it takes precedence over the pipeline's own.
#[derive(Clone)]
pub struct ApproverService(pub Arc<dyn Approver>);

// Not derived: the approver is a trait object.
baton_tool::debug_fields! { ApproverService { .. } }

/// Everything needed to run calls: the pool and the stages' collaborators.
#[derive(Clone)]
pub struct Pipeline {
    pool: ToolPool,
    policy: Arc<dyn PermissionPolicy>,
    hooks: HookRegistry,
    approver: Option<Arc<dyn Approver>>,
    cancel_grace: Duration,
    /// Names the services this pipeline adds to every call's (its policy
    /// and hooks); renewed whenever either changes. See
    /// [`Pipeline::call_services`].
    services_id: u64,
}

/// Source of [`Pipeline`]'s `services_id`s.
static NEXT_SERVICES_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_services_id() -> u64 {
    NEXT_SERVICES_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Marks services that already hold what the pipeline with this
/// `services_id` adds to a call's (see [`Pipeline::call_services`]).
struct CallServices(u64);

baton_tool::debug_fields! { Pipeline { pool, hooks } }

impl Pipeline {
    /// A pipeline with the SPEC §11 defaults: no rules, read-only calls
    /// inside the workspace allowed, everything else asks, and with no
    /// approver an ask is a denial. No hooks.
    ///
    /// Secure unless told otherwise: an embedder who forgets the policy gets
    /// a pipeline that refuses writes, not one that runs them.
    pub fn new(pool: ToolPool) -> Self {
        Pipeline {
            pool,
            policy: Arc::new(RulePolicy::new()),
            hooks: HookRegistry::default(),
            approver: None,
            cancel_grace: Duration::from_secs(5),
            services_id: next_services_id(),
        }
    }

    /// A pipeline that allows every call unasked: for tests and benchmarks
    /// of tools that are not read-only. The name says what it does.
    pub fn allow_all_unsafe(pool: ToolPool) -> Self {
        Pipeline::new(pool).with_policy(Arc::new(AllowAllUnsafe))
    }

    /// This pipeline with `settings`' rule policy and hooks (added after
    /// its own).
    pub fn with_settings(self, settings: &Settings) -> Self {
        let mut hooks = self.hooks().clone();
        for hook in settings.hooks.iter() {
            hooks = hooks.with(hook.clone());
        }
        self.with_policy(settings.policy.clone()).with_hooks(hooks)
    }

    /// The same pipeline judging calls with `policy`.
    pub fn with_policy(mut self, policy: Arc<dyn PermissionPolicy>) -> Self {
        self.policy = policy;
        self.services_id = next_services_id();
        self
    }

    /// The same pipeline running `hooks` around every call.
    pub fn with_hooks(mut self, hooks: HookRegistry) -> Self {
        self.hooks = hooks;
        self.services_id = next_services_id();
        self
    }

    /// `base` with what this pipeline gives every call it runs: search
    /// tools ask the rules about every file they visit (a
    /// [`SearchFilter`](crate::permission::SearchFilter)), and the Agent
    /// tool fires SubagentStart/SubagentStop with the same hooks. A batch
    /// computes this once for all its calls; otherwise each call copies
    /// its services' map to add them.
    pub fn call_services(
        &self,
        base: &baton_tool::extensions::Extensions,
    ) -> baton_tool::extensions::Extensions {
        if self.has_call_services(base) {
            return base.clone();
        }
        let mut services = base.with(crate::permission::SearchFilter::new(self.policy.clone()));
        if !self.hooks.is_empty() {
            services = services.with(self.hooks.clone());
        }
        services.with(CallServices(self.services_id))
    }

    /// Whether `services` came from [`Self::call_services`] of this
    /// pipeline (or of a clone with the same policy and hooks).
    fn has_call_services(&self, services: &baton_tool::extensions::Extensions) -> bool {
        services
            .get::<CallServices>()
            .is_some_and(|m| m.0 == self.services_id)
    }

    /// The same pipeline, answering `ask` decisions with `approver` when the
    /// batch offers none of its own.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// How long a cancelled tool may take to wind down (and return what it
    /// has) before its future is dropped.
    pub fn with_cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// The same pipeline over another pool (a restricted subagent scope).
    pub fn with_pool(mut self, pool: ToolPool) -> Self {
        self.pool = pool;
        self
    }

    /// The tools calls are looked up in.
    pub fn pool(&self) -> &ToolPool {
        &self.pool
    }

    /// The policy that judges every call.
    pub fn policy(&self) -> &Arc<dyn PermissionPolicy> {
        &self.policy
    }

    /// The hooks run around every call.
    pub fn hooks(&self) -> &HookRegistry {
        &self.hooks
    }

    /// Looks the call up and parses its input. Cheap and synchronous: the
    /// coordinator calls it when the call is added, to decide scheduling.
    pub fn prepare(&self, call: ToolUse) -> PreparedCall {
        let tool = self.pool.get(&call.name).cloned();
        let parsed = tool.as_ref().map(|t| t.parse(&call.input));
        let (safe, read_only, label) = match (&tool, &parsed) {
            (Some(t), Some(Ok(input))) => (
                t.is_concurrency_safe(input),
                t.is_read_only(input),
                t.label(input),
            ),
            _ => (false, false, call.name.clone()),
        };
        PreparedCall {
            work: tool.as_ref().map_or(WorkKind::Process, |t| t.def().work()),
            interrupt: tool
                .as_ref()
                .map_or(InterruptBehavior::Block, |t| t.def().interrupt_behavior()),
            cancels_siblings: tool
                .as_ref()
                .is_some_and(|t| t.def().triggers_sibling_cancel()),
            call,
            tool,
            parsed,
            safe,
            read_only,
            label,
            rejected: None,
            prepared_at: std::time::Instant::now(),
            start_at: None,
            queued: crate::metrics::Queued::enter(),
        }
    }

    /// The result of a call that never started because its batch was
    /// cancelled (the coordinator uses this for queued calls).
    pub fn never_started(&self, call: &PreparedCall, reason: &CancelReason) -> CallResult {
        CallResult::error(
            &call.call,
            messages::cancelled(reason, false),
            Outcome::Cancelled { started: false },
        )
    }
}

/// A call looked up and parsed, ready to schedule.
pub struct PreparedCall {
    /// The call as the model sent it.
    pub call: ToolUse,
    tool: Option<Arc<Tool>>,
    parsed: Option<Result<ParsedInput, Vec<SchemaProblem>>>,
    /// May run beside other safe calls (false for unknown tools and bad input).
    pub safe: bool,
    /// Which concurrency pool the call counts against when safe (SPEC §5);
    /// `Process` for unknown tools.
    pub work: WorkKind,
    /// Whether the tool judged this input read-only.
    pub read_only: bool,
    /// What the call does when the user sends a new message.
    pub interrupt: InterruptBehavior,
    /// An error result of this call may cancel its siblings (SPEC §8).
    pub cancels_siblings: bool,
    /// How other results name this call, e.g. `Bash(make…)`.
    pub label: String,
    /// Why the call must not run at all (its id repeats an earlier call's).
    rejected: Option<String>,
    /// When it was added, for the `queue_ms` of its tracing span.
    prepared_at: std::time::Instant,
    /// When its pipeline starts, if the scheduler read the clock just
    /// before running it (see [`PreparedCall::starts_at`]).
    start_at: Option<std::time::Instant>,
    /// Counts the call in the queue-depth metric until it starts.
    queued: crate::metrics::Queued,
}

impl PreparedCall {
    /// A call past the message's call limit: not looked up, not parsed,
    /// never run; its result says why.
    pub fn over_limit(call: ToolUse, max: usize) -> PreparedCall {
        PreparedCall {
            rejected: Some(messages::over_call_limit(max)),
            interrupt: InterruptBehavior::Block,
            cancels_siblings: false,
            label: call.name.clone(),
            call,
            tool: None,
            parsed: None,
            safe: false,
            work: WorkKind::Process,
            read_only: false,
            prepared_at: std::time::Instant::now(),
            start_at: None,
            queued: crate::metrics::Queued::enter(),
        }
    }

    /// The scheduler read the clock as it starts this call, and runs it at
    /// once: [`Pipeline::run`] takes that as the call's start instead of
    /// reading the clock again (each read costs about as much as a small
    /// stage of a no-op call).
    pub fn starts_at(&mut self, at: std::time::Instant) {
        self.start_at = Some(at);
    }

    /// Marks the call as reusing the id of an earlier call of its message:
    /// it gets an error result and never runs (the model APIs reject a
    /// message with duplicate ids, and the two calls' files would collide).
    pub fn reject_duplicate_id(&mut self) {
        self.rejected = Some(messages::duplicate_id(&self.call.id));
        self.safe = false;
        self.read_only = false;
        self.cancels_siblings = false;
    }
}

baton_tool::debug_fields! { PreparedCall { call, safe } }

impl PreparedCall {
    /// The call's `tool_use` id.
    pub fn id(&self) -> &str {
        &self.call.id
    }

    /// The tool the call names; `None` when the pool has no such tool.
    pub fn tool(&self) -> Option<&Arc<Tool>> {
        self.tool.as_ref()
    }

    /// Lets go of the parsed input of a call that has to wait in the queue.
    /// Its classification (safe, read-only, label) is kept; the input is
    /// parsed again, from the same unchanged JSON, when the call starts. A
    /// 10,000-call message would otherwise hold a second (and for `Value`
    /// tools a third) copy of every input while it waits. Schema problems
    /// are kept: they are small and are the call's result.
    pub fn compact(&mut self) {
        if matches!(self.parsed, Some(Ok(_))) {
            self.parsed = None;
        }
    }
}

/// What the stages share while one call runs.
pub(crate) struct CallState {
    pub call: ToolUse,
    pub parsed: Option<ParsedInput>,
    pub ctx: ToolContext,
    /// Hook context to show the model with the result.
    pub extra_context: Vec<String>,
    pub diagnostics: Vec<String>,
    pub stop_turn: Option<String>,
    /// Hook `systemMessage`s, for the user.
    pub system_messages: Vec<String>,
    /// What PreToolUse hooks said about permission.
    pub hook_verdict: pre_hooks::HookVerdict,
    /// Classified at add time; classified again only if a hook rewrites the
    /// input (for Bash, classifying means parsing the command).
    pub read_only: bool,
}

impl CallState {
    /// The state of `call` before any stage ran.
    pub(crate) fn new(call: ToolUse, ctx: ToolContext, read_only: bool) -> CallState {
        CallState {
            call,
            parsed: None,
            ctx,
            extra_context: Vec::new(),
            diagnostics: Vec::new(),
            stop_turn: None,
            system_messages: Vec::new(),
            hook_verdict: Default::default(),
            read_only,
        }
    }

    /// The permission question for this call as `parsed` (the call's own
    /// input, or a view of it) touching `target`, in the call's context.
    pub(crate) fn permission_request<'a>(
        &'a self,
        tool: &'a Tool,
        parsed: &'a ParsedInput,
        target: &'a PermissionTarget,
    ) -> PermissionRequest<'a> {
        PermissionRequest {
            tool,
            input: parsed.raw(),
            target,
            read_only: self.read_only,
            context: &self.ctx.context,
            caller: self.call.caller.as_ref(),
        }
    }

    pub(crate) fn hook_input(&self, event: HookEvent) -> HookInput {
        let session = &self.ctx.session;
        HookInput {
            session_id: session.id().to_string(),
            transcript_path: session
                .transcript_path()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            cwd: self.ctx.cwd().display().to_string(),
            permission_mode: self.ctx.context.permission_mode.to_string(),
            hook_event_name: event,
            tool_name: self.call.name.clone(),
            tool_input: self
                .parsed
                .as_ref()
                .map_or_else(|| self.call.input.clone(), |p| p.raw().clone()),
            tool_use_id: self.call.id.clone(),
            tool_response: None,
            error: None,
            caller: self.call.caller.clone(),
            extra: Default::default(),
        }
        .in_agent(&crate::agent_chain::AgentChain::of(&self.ctx.context))
    }

    /// Attaches what the stages gathered on the way to the final result.
    fn finish(self, mut result: CallResult) -> CallResult {
        for text in self.extra_context {
            result
                .content
                .push(baton_tool::content::ContentBlock::text(text));
        }
        result.diagnostics.extend(self.diagnostics);
        let mut messages = self.system_messages;
        messages.append(&mut result.system_messages);
        result.system_messages = messages;
        result.stop_turn = result.stop_turn.or(self.stop_turn);
        result
    }
}
