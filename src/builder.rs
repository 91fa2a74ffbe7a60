//! Assembling an engine: tools, working directory, state directory,
//! permission policy, hooks, runtime settings.

use std::path::PathBuf;
use std::sync::Arc;

use baton_actors::{Runtime, RuntimeConfig};
use baton_engine::extensions::Extensions;
use baton_engine::{
    Approver, Context, HookRegistry, PermissionMode, PermissionPolicy, Pipeline, Session, ToolPool,
};

use crate::Engine;

pub struct EngineBuilder {
    pool: ToolPool,
    cwd: Option<PathBuf>,
    roots: Vec<PathBuf>,
    state_dir: Option<PathBuf>,
    session_id: Option<String>,
    mode: PermissionMode,
    policy: Option<Arc<dyn PermissionPolicy>>,
    pub(crate) hooks: Option<HookRegistry>,
    approver: Option<Arc<dyn Approver>>,
    config: RuntimeConfig,
    services: Extensions,
    fault_hook: Option<baton_actors::runtime::FaultHook>,
    /// The settings' `env` block (see `crate::settings`).
    pub(crate) env: Vec<(String, String)>,
}

impl EngineBuilder {
    pub(crate) fn new(pool: ToolPool) -> Self {
        EngineBuilder {
            pool,
            cwd: None,
            roots: Vec::new(),
            state_dir: None,
            session_id: None,
            mode: PermissionMode::Default,
            policy: None,
            hooks: None,
            approver: None,
            config: RuntimeConfig::from_env(),
            services: Extensions::default(),
            fault_hook: None,
            env: Vec::new(),
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

    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    pub fn policy(mut self, policy: Arc<dyn PermissionPolicy>) -> Self {
        self.policy = Some(policy);
        self
    }

    pub fn hooks(mut self, hooks: HookRegistry) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Answers `ask` decisions in-process (instead of permission events).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.config = self.config.with_max_concurrency(n);
        self
    }

    pub fn sibling_policy(mut self, policy: baton_actors::SiblingPolicy) -> Self {
        self.config = self.config.with_sibling_policy(policy);
        self
    }

    /// Send `ask` decisions to the host as [`crate::Event::PermissionRequest`].
    pub fn host_approvals(mut self, yes: bool) -> Self {
        self.config = self.config.with_host_approvals(yes);
        self
    }

    /// Services offered to every call (e.g. a host's subagent runner).
    pub fn services(mut self, services: Extensions) -> Self {
        self.services = services;
        self
    }

    #[doc(hidden)]
    pub fn fault_hook(mut self, hook: baton_actors::runtime::FaultHook) -> Self {
        self.fault_hook = Some(hook);
        self
    }

    pub fn build(self) -> Engine {
        let cwd = self
            .cwd
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut roots = vec![cwd.clone()];
        roots.extend(self.roots);
        let context = Context::new(cwd).with_roots(roots).with_mode(self.mode);
        let state_dir = self
            .state_dir
            .unwrap_or_else(|| std::env::temp_dir().join(format!("baton-{}", std::process::id())));
        let session_id = self
            .session_id
            .unwrap_or_else(|| format!("baton-{}", std::process::id()));
        let session = Session::new(session_id, state_dir);
        baton_engine::env::SettingsEnv::install(&session, self.env);
        let mut pipeline = Pipeline::new(self.pool);
        if let Some(policy) = self.policy {
            pipeline = pipeline.with_policy(policy);
        }
        if let Some(hooks) = self.hooks {
            pipeline = pipeline.with_hooks(hooks);
        }
        if let Some(approver) = self.approver {
            pipeline = pipeline.with_approver(approver);
        }
        let mut runtime = Runtime::builder(pipeline, session, context)
            .config(self.config)
            .services(self.services);
        if let Some(hook) = self.fault_hook {
            runtime = runtime.fault_hook(hook);
        }
        Engine::from_runtime(runtime.build())
    }
}
