//! The context a call runs in.
//!
//! [`Context`] is the part that calls may change for the calls after them
//! (SPEC §6): working directory, and whatever tools keep in its extensions.
//! It is a value: a call gets a snapshot, and a change comes back as a
//! [`ContextModifier`], applied by the coordinator when the call completes and
//! before any later call starts. Only calls that are not concurrency-safe may
//! change it; modifiers from safe calls are ignored, because two parallel
//! writers to the same context would race.
//!
//! [`ToolContext`] is what one call receives: the snapshot plus its identity,
//! the session, its cancellation scope and its progress sink.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cancel::CancelScope;
use crate::extensions::Extensions;
use crate::permission::PermissionMode;
use crate::progress::ProgressSink;
use crate::session::Session;

/// Shared, modifiable state that later calls see.
#[derive(Clone, Debug)]
pub struct Context {
    /// The working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Workspace roots: the original working directory plus any additional
    /// directories. Paths outside them need approval.
    pub roots: Arc<Vec<PathBuf>>,
    /// Directories readable without asking besides the roots: the session's
    /// state directory, where spilled results and shell logs are and where
    /// the model is told to read them. Not roots: writes there still ask.
    pub readable: Arc<Vec<PathBuf>>,
    /// The permission mode calls are judged in.
    pub permission_mode: PermissionMode,
    /// Tool-defined values carried from call to call.
    pub extensions: Extensions,
}

impl Context {
    /// A context whose only root is `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        Context {
            roots: Arc::new(vec![cwd.clone()]),
            readable: Arc::new(Vec::new()),
            cwd,
            permission_mode: PermissionMode::Default,
            extensions: Extensions::default(),
        }
    }

    /// The same context with `roots` as its workspace roots.
    pub fn with_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.roots = Arc::new(roots);
        self
    }

    /// Directories readable without asking (see [`Context::readable`]).
    pub fn with_readable(mut self, dirs: Vec<PathBuf>) -> Self {
        self.readable = Arc::new(dirs);
        self
    }

    /// Whether `path` lies inside one of the extra readable directories,
    /// after resolving `..` and symlinks.
    pub fn is_readable_extra(&self, path: impl AsRef<Path>) -> bool {
        let resolved = crate::paths::resolve(&self.absolute(path));
        self.readable
            .iter()
            .any(|dir| resolved.starts_with(crate::paths::resolve(dir)))
    }

    /// The same context in permission mode `mode`.
    pub fn with_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = mode;
        self
    }

    /// `path` made absolute against the working directory (no I/O).
    pub fn absolute(&self, path: impl AsRef<Path>) -> PathBuf {
        let path = path.as_ref();
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }

    /// Whether `path` lies inside a workspace root, after resolving `..` and
    /// symlinks (of the longest existing ancestor, so new files work too).
    pub fn is_inside_roots(&self, path: impl AsRef<Path>) -> bool {
        let resolved = crate::paths::resolve(&self.absolute(path));
        self.roots
            .iter()
            .any(|root| resolved.starts_with(crate::paths::resolve(root)))
    }
}

/// A pure change to the context, returned by a call that is not
/// concurrency-safe and applied after it completes.
pub struct ContextModifier(Box<dyn FnOnce(Context) -> Context + Send>);

impl ContextModifier {
    /// A change made by `f`, which gets the context and returns the next one.
    pub fn new(f: impl FnOnce(Context) -> Context + Send + 'static) -> Self {
        ContextModifier(Box::new(f))
    }

    /// The context after the change.
    pub fn apply(self, context: Context) -> Context {
        (self.0)(context)
    }
}

impl std::fmt::Debug for ContextModifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContextModifier(..)")
    }
}

/// Everything one call receives.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// The `tool_use` id.
    pub call_id: String,
    /// The context the call runs in: working directory, roots, mode.
    pub context: Context,
    /// The session: its slots hold what tools keep between calls.
    pub session: Arc<Session>,
    /// Fires when the call is cancelled; the reason says why.
    pub cancel: CancelScope,
    /// Where the tool reports progress while it runs.
    pub progress: ProgressSink,
    /// Services the runtime offers tools (for example a way to open a nested
    /// batch for a subagent); keyed by type so the engine names none of them.
    pub services: Extensions,
    /// How the call came to be allowed: decides whether its commands run
    /// under the read-only floor (see [`crate::confine`]).
    pub approval: crate::confine::Approval,
}

impl ToolContext {
    /// A context for running a call outside any batch (tests, examples).
    pub fn standalone(call_id: impl Into<String>, context: Context, session: Arc<Session>) -> Self {
        ToolContext {
            call_id: call_id.into(),
            context,
            session,
            cancel: CancelScope::new(),
            progress: ProgressSink::discard(),
            services: Extensions::default(),
            approval: crate::confine::Approval::Vouched,
        }
    }

    /// The call's working directory.
    pub fn cwd(&self) -> &Path {
        &self.context.cwd
    }
}
