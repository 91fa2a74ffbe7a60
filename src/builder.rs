//! Assembling an engine: tools, working directory, state directory,
//! permission policy, hooks, runtime settings.
//!
//! Secure unless told otherwise: without a policy the engine applies the
//! SPEC §11 default (read-only calls inside the workspace run, anything else
//! asks, and with no approver an ask is a denial); allow-all takes a method
//! that says so. The workspace is never guessed: without `cwd` it is the
//! process's current directory, and if that cannot be read, building fails.

use std::path::PathBuf;
use std::sync::Arc;

use baton_actors::{Runtime, RuntimeConfig};
use baton_engine::deferred::{set_deferral, Deferral, ToolSearchSettings};
use baton_engine::extensions::Extensions;
use baton_engine::permission::{AllowAllUnsafe, RulePolicy};
use baton_engine::{
    Approver, Context, HookRegistry, PermissionMode, PermissionPolicy, Pipeline, Session, ToolPool,
};

use crate::Engine;

/// Configures an [`Engine`]: its tools, where it works, permissions,
/// hooks and runtime settings; made by [`Engine::builder`].
pub struct EngineBuilder {
    pool: ToolPool,
    pub(crate) cwd: Option<PathBuf>,
    roots: Vec<PathBuf>,
    state_dir: Option<PathBuf>,
    session_id: Option<String>,
    transcript: Option<PathBuf>,
    mode: PermissionMode,
    policy: Option<Arc<dyn PermissionPolicy>>,
    pub(crate) hooks: Option<HookRegistry>,
    approver: Option<Arc<dyn Approver>>,
    config: RuntimeConfig,
    pub(crate) services: Extensions,
    subagents: Option<baton_engine::subagent::SubagentService>,
    fault_hook: Option<baton_actors::FaultHook>,
    tool_search: Option<ToolSearchSettings>,
    mcp: Option<Arc<baton_mcp::McpClients>>,
    confinement: Option<baton_engine::confine::Confinement>,
    /// The settings' `env` block (see `crate::settings`).
    pub(crate) env: Vec<(String, String)>,
    /// A saved session to resume (see [`EngineBuilder::resume_from`]).
    resume: Option<crate::session_state::SessionState>,
}

// Not derived: the policy, approver and test hook are trait objects; whether
// they are set is what counts.
baton_engine::debug_fields! {
    EngineBuilder as this {
        pool, cwd, roots, state_dir, session_id, mode, policy: this.policy.is_some(),
        approver: this.approver.is_some(), config, tool_search, resume: this.resume.is_some(), ..
    }
}

impl EngineBuilder {
    pub(crate) fn new(pool: ToolPool) -> Self {
        EngineBuilder {
            pool,
            cwd: None,
            roots: Vec::new(),
            state_dir: None,
            session_id: None,
            transcript: None,
            mode: PermissionMode::Default,
            policy: None,
            hooks: None,
            approver: None,
            config: RuntimeConfig::from_env(),
            services: Extensions::default(),
            subagents: None,
            fault_hook: None,
            tool_search: None,
            mcp: None,
            confinement: None,
            env: Vec::new(),
            resume: None,
        }
    }

    /// The tools this engine will offer.
    pub fn pool(&self) -> &ToolPool {
        &self.pool
    }

    /// Working directory (default: the process's).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Extra workspace roots besides the working directory.
    pub fn additional_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.roots = roots;
        self
    }

    /// Where spilled results and shell output go (default: a per-process
    /// directory under the system temp dir).
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// The session id hooks and transcripts see (default: `baton-<pid>`).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// The host's transcript (Claude Code's JSONL), given to every hook
    /// as `transcript_path`; `baton agent` writes one in the state
    /// directory.
    pub fn transcript_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.transcript = Some(path.into());
        self
    }

    /// The permission mode the session starts in (default: `default`).
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    /// The permission policy (default: no rules, SPEC §11 mode defaults).
    pub fn policy(mut self, policy: Arc<dyn PermissionPolicy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Allows every call without asking: any command, any file anywhere.
    /// For tests, benchmarks and sandboxes the host controls entirely.
    pub fn allow_all_unsafe(mut self) -> Self {
        self.policy = Some(Arc::new(AllowAllUnsafe));
        self
    }

    /// The hooks to run around calls and batches (default: none).
    pub fn hooks(mut self, hooks: HookRegistry) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Answers `ask` decisions in-process (instead of permission events).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The runtime settings: concurrency, sibling cancellation, budgets.
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// The runtime settings the engine will be built with.
    pub fn runtime_config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Whether batches send each call's lifecycle events (queued, started,
    /// finished); on by default. A host that reads only results may turn
    /// them off to save three events per call.
    pub fn call_events(mut self, on: bool) -> Self {
        self.config = self.config.with_call_events(on);
        self
    }

    /// At most `n` safe calls of any kind run at once (see
    /// [`RuntimeConfig::with_max_concurrency`]).
    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.config = self.config.with_max_concurrency(n);
        self
    }

    /// Which failed calls cancel their running siblings (default: a failed
    /// Bash call).
    pub fn sibling_policy(mut self, policy: baton_actors::SiblingPolicy) -> Self {
        self.config = self.config.with_sibling_policy(policy);
        self
    }

    /// Send `ask` decisions to the host as [`crate::Event::PermissionRequest`].
    pub fn host_approvals(mut self, yes: bool) -> Self {
        self.config = self.config.with_host_approvals(yes);
        self
    }

    /// How commands are confined by the kernel (default: the read-only floor
    /// where this kernel allows it; see `baton_engine::confine`).
    pub fn confinement(mut self, confinement: baton_engine::confine::Confinement) -> Self {
        self.confinement = Some(confinement);
        self
    }

    /// Services offered to every call (e.g. a host's subagent runner).
    pub fn services(mut self, services: Extensions) -> Self {
        self.services = services;
        self
    }

    /// Runs subagents for the `Agent` tool with the host's model loop, with
    /// limits from the environment (SPEC §15; docs/host-api.md).
    pub fn subagents(self, runner: Arc<dyn baton_engine::subagent::SubagentRunner>) -> Self {
        self.subagent_service(baton_engine::subagent::SubagentService::new(runner))
    }

    /// The same with the limits given.
    pub fn subagent_service(mut self, service: baton_engine::subagent::SubagentService) -> Self {
        self.subagents = Some(service);
        self
    }

    /// Tool search (deferred tools, SPEC §10): mode, context window, the
    /// host's wire format and whether its API accepts tool references.
    /// Default: [`ToolSearchSettings::from_env`] (`ENABLE_TOOL_SEARCH`), or
    /// the defaults if that variable holds no valid mode.
    pub fn tool_search(mut self, settings: ToolSearchSettings) -> Self {
        self.tool_search = Some(settings);
        self
    }

    #[doc(hidden)]
    pub fn fault_hook(mut self, hook: baton_actors::FaultHook) -> Self {
        self.fault_hook = Some(hook);
        self
    }

    /// Gives the engine the MCP servers whose tools are in the pool: it
    /// refreshes their tools between messages ([`Engine::refresh_tools`])
    /// and stops them with itself ([`Engine::shutdown`]).
    pub fn mcp(mut self, clients: Arc<baton_mcp::McpClients>) -> Self {
        self.mcp = Some(clients);
        self
    }

    /// Resumes the session saved in `state_dir` (see
    /// [`crate::session_state`]): its id, working directory, files read,
    /// session rules, loaded deferred tools and task records. The state
    /// directory and, unless `cwd` was given, the workspace are the saved
    /// session's; a `cwd` other than its workspace fails the build.
    /// [`Engine::resumed`] then says which tasks were lost.
    pub fn resume_from(
        self,
        state_dir: impl Into<PathBuf>,
    ) -> Result<Self, crate::session_state::StateError> {
        let dir = state_dir.into();
        let state = crate::session_state::SessionState::load(&dir)?;
        state.check_not_running()?;
        self.resume_state(dir, state)
    }

    /// As [`Self::resume_from`] with a state already loaded from `state_dir`.
    pub fn resume_state(
        mut self,
        state_dir: PathBuf,
        state: crate::session_state::SessionState,
    ) -> Result<Self, crate::session_state::StateError> {
        if self.cwd.is_none() {
            self.cwd = Some(state.root.clone());
        }
        self.state_dir = Some(state_dir);
        self.session_id = Some(state.session_id.clone());
        self.resume = Some(state);
        Ok(self)
    }

    /// Builds the engine. Fails when no working directory was given and the
    /// process's own cannot be read, or when the mode is bypassPermissions
    /// and the policy disables it.
    pub fn build(self) -> Result<Engine, BuildError> {
        let cwd = match self.cwd {
            Some(dir) => dir,
            None => std::env::current_dir().map_err(|e| {
                BuildError(format!(
                    "no working directory was given and the current directory cannot be read ({e}); \
                     give one with `cwd`, it is the workspace the permission rules protect"
                ))
            })?,
        };
        let policy: Arc<dyn PermissionPolicy> =
            self.policy.unwrap_or_else(|| Arc::new(RulePolicy::new()));
        if self.mode == PermissionMode::BypassPermissions {
            if let Some(by) = policy.bypass_disabled() {
                return Err(BuildError(format!(
                    "bypassPermissions mode is disabled by {by}; choose another permission mode"
                )));
            }
        }
        let state_dir = self
            .state_dir
            .unwrap_or_else(|| std::env::temp_dir().join(format!("baton-{}", std::process::id())));
        let mut roots = vec![cwd.clone()];
        roots.extend(self.roots);
        if let Some(state) = &self.resume {
            crate::session_state::check_root(state, &cwd).map_err(|e| BuildError(e.to_string()))?;
        }
        let mut context = Context::new(cwd)
            .with_roots(roots)
            .with_readable(vec![state_dir.clone()])
            .with_mode(self.mode);
        let session_id = self
            .session_id
            .unwrap_or_else(|| format!("baton-{}", std::process::id()));
        let session = match self.transcript {
            Some(transcript) => Session::with_transcript(session_id, state_dir, transcript),
            None => Session::new(session_id, state_dir),
        };
        if let Some(state) = self.resume {
            crate::session_state::restore(&session, &mut context, state);
        }
        if let Some(mcp) = self.mcp {
            session.slots().insert(mcp);
        }
        let tool_search = self
            .tool_search
            .unwrap_or_else(|| ToolSearchSettings::from_env().unwrap_or_default());
        set_deferral(&session, Deferral::resolve(tool_search, &self.pool));
        baton_engine::env::SettingsEnv::install(&session, self.env);
        if let Some(set) = self.services.get::<baton_engine::wire::ToolSet>() {
            session.slots().insert(set);
        }
        let mut pipeline = Pipeline::new(self.pool).with_policy(policy);
        if let Some(hooks) = self.hooks {
            pipeline = pipeline.with_hooks(hooks);
        }
        if let Some(approver) = self.approver {
            pipeline = pipeline.with_approver(approver);
        }
        let services = match self.subagents {
            Some(service) => self.services.with(service),
            None => self.services,
        };
        let services = services.with(self.confinement.unwrap_or_default());
        let mut runtime = Runtime::builder(pipeline, session, context)
            .config(self.config)
            .services(services);
        if let Some(hook) = self.fault_hook {
            runtime = runtime.fault_hook(hook);
        }
        let engine = Engine::from_runtime(runtime.build());
        crate::mcp_elicit::install(&engine);
        Ok(engine)
    }
}

/// Why an engine could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}
