//! Every path a transfer touches, judged as a file tool's call of it.
//!
//! An upload or a delete of a path is allowed exactly where a `Write` of
//! that path would be, and a download or a `HEAD` where a `Read` would be:
//! the server's engine judges a `Write`/`Read` call of the path with
//! [`Pipeline::judge`] (its permission rules and mode, protected paths,
//! the workspace roots, the session's remembered rules; hooks are not run,
//! since no model made the call). A verdict of "ask" is a refusal: an HTTP
//! request has nobody to ask.
//!
//! The verdict comes with the target the engine judged: the path with `..`
//! folded and links followed. That resolved path is what the transfer then
//! opens, without following any link (`baton_tools::files::open`), so a link
//! swapped onto the path after the judgement makes the open fail instead of
//! redirecting it. The entries of a directory are created (or removed) by
//! handle at their lexical place below the judged directory, so each is
//! judged on exactly that place ([`Judge::write_at`]), not on where a link
//! of the tree being replaced would lead.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use baton_engine::permission::FileAccess;
use baton_engine::pipeline::judge::{Judgement, Verdict};
use baton_engine::{Context, PermissionTarget, Pipeline, Session, ToolContext, ToolUse};
use serde_json::json;

use super::TransferError;

/// Judges paths for one transfer. Its methods block (they are called from
/// the blocking code that walks directories and extracts archives).
pub(crate) trait Judge: Send + Sync {
    /// The path to act on for writing (or removing) `path` (absolute):
    /// `path` as the engine resolved it (links followed), or why not.
    fn write(&self, path: &Path) -> Result<PathBuf, TransferError>;
    /// The same for reading `path`.
    fn read(&self, path: &Path) -> Result<PathBuf, TransferError>;
    /// Whether `path` itself, the place an entry is created at (or
    /// removed from) by handle, without following anything, may be
    /// written: judged on that place as spelled (the rules also look at
    /// where links on it lead, which can only refuse more).
    fn write_at(&self, path: &Path) -> Result<(), TransferError>;
    /// Whether the link at `path` itself may be removed: a `Write` of its
    /// path (which the engine follows to the target) and of its own
    /// place.
    fn remove_link(&self, path: &Path) -> Result<(), TransferError> {
        self.write(path)?;
        self.write_at(path)
    }
    /// Whether `path` (resolved) is a workspace root, which a transfer
    /// never replaces or removes.
    fn is_root(&self, path: &Path) -> bool;
}

/// The engine's judgement, as it stands when the transfer starts.
pub(crate) struct EngineJudge {
    pipeline: Arc<Pipeline>,
    session: Arc<Session>,
    context: Context,
    handle: tokio::runtime::Handle,
    /// Names this transfer's judgements (call ids must be unique).
    id: u64,
    next: AtomicU64,
}

static TRANSFERS: AtomicU64 = AtomicU64::new(1);

impl EngineJudge {
    /// A judge for one transfer on `engine`; must be made on its runtime.
    pub(crate) fn new(engine: &crate::Engine) -> EngineJudge {
        let runtime = engine.runtime();
        EngineJudge {
            pipeline: runtime.pipeline(),
            session: runtime.session().clone(),
            context: runtime.context(),
            handle: tokio::runtime::Handle::current(),
            id: TRANSFERS.fetch_add(1, Ordering::Relaxed),
            next: AtomicU64::new(0),
        }
    }

    /// The absolute path `raw` (from a URL) names: relative paths start at
    /// the first workspace root (the worker's `--cwd`), which a `cd` in a
    /// tool call does not move.
    pub(crate) fn absolute(&self, raw: &str) -> Result<PathBuf, TransferError> {
        if raw.contains('\0') {
            return Err(TransferError::Invalid(
                "the path contains a NUL byte, which no path may contain".into(),
            ));
        }
        let base = self.context.roots.first().unwrap_or(&self.context.cwd);
        Ok(base.join(if raw.is_empty() { "." } else { raw }))
    }

    fn call_context(&self, id: &str) -> ToolContext {
        let mut ctx = ToolContext::standalone(id, self.context.clone(), self.session.clone());
        ctx.services = self.pipeline.call_services(&ctx.services);
        ctx
    }

    fn judge(
        &self,
        access: FileAccess,
        path: &Path,
        on_place: bool,
    ) -> Result<PathBuf, TransferError> {
        let (tool, verb) = match access {
            FileAccess::Write => ("Write", "writing"),
            FileAccess::Read => ("Read", "reading"),
        };
        if self.pipeline.pool().get(tool).is_none() {
            return Err(TransferError::Refused(format!(
                "this worker offers no `{tool}` tool, and a transfer is allowed only where a \
                 `{tool}` of its path would be"
            )));
        }
        let Some(text) = path.to_str() else {
            return Err(TransferError::Invalid(format!(
                "`{}` is not UTF-8, and a file tool's path must be",
                path.display()
            )));
        };
        let input = match access {
            FileAccess::Write => json!({"file_path": text, "content": ""}),
            FileAccess::Read => json!({"file_path": text}),
        };
        let id = format!(
            "transfer-{}-{}",
            self.id,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        let ctx = self.call_context(&id);
        let call = ToolUse::new(id, tool, input);
        let on = on_place.then(|| PermissionTarget::Path {
            path: path.to_path_buf(),
            access,
        });
        let judged = self
            .handle
            .block_on(self.pipeline.judge(call, ctx.clone(), on));
        // The tool never runs to take what the judgement kept for it.
        baton_tools::files::forget_judged(path, &ctx);
        let Judgement { verdict, target } = judged.map_err(|text| {
            TransferError::Invalid(
                text.trim_start_matches("<tool_use_error>")
                    .trim_end_matches("</tool_use_error>")
                    .to_string(),
            )
        })?;
        match verdict {
            Verdict::Allow => match target {
                PermissionTarget::Path { path, .. } => Ok(path),
                _ => Err(TransferError::Io(format!(
                    "the engine judged `{tool}` on something other than a path"
                ))),
            },
            Verdict::Ask { reason, suggestion } => Err(TransferError::Refused(format!(
                "{verb} `{}` would need approval ({reason}), and a file transfer has nobody \
                 to ask, so it is refused{}",
                path.display(),
                match suggestion {
                    Some(rule) => format!(
                        "; an allow rule such as `{rule}` in the worker's settings would allow it"
                    ),
                    None => String::new(),
                }
            ))),
            Verdict::Deny { reason } => Err(TransferError::Refused(format!(
                "{verb} `{}` is denied: {reason}",
                path.display()
            ))),
            other => Err(TransferError::Refused(format!(
                "{verb} `{}` is not allowed ({other:?})",
                path.display()
            ))),
        }
    }
}

impl Judge for EngineJudge {
    fn write(&self, path: &Path) -> Result<PathBuf, TransferError> {
        self.judge(FileAccess::Write, path, false)
    }

    fn read(&self, path: &Path) -> Result<PathBuf, TransferError> {
        self.judge(FileAccess::Read, path, false)
    }

    fn write_at(&self, path: &Path) -> Result<(), TransferError> {
        self.judge(FileAccess::Write, path, true).map(drop)
    }

    fn is_root(&self, path: &Path) -> bool {
        self.context
            .roots
            .iter()
            .any(|root| baton_engine::paths::resolve(root) == path)
    }
}

/// No judgement: the client side, placing what a worker sent where its
/// own caller asked. Entries of an archive are still kept inside it.
#[derive(Debug)]
pub(crate) struct Unjudged;

impl Judge for Unjudged {
    fn write(&self, path: &Path) -> Result<PathBuf, TransferError> {
        Ok(path.to_path_buf())
    }

    fn read(&self, path: &Path) -> Result<PathBuf, TransferError> {
        Ok(path.to_path_buf())
    }

    fn write_at(&self, _path: &Path) -> Result<(), TransferError> {
        Ok(())
    }

    fn is_root(&self, _path: &Path) -> bool {
        false
    }
}
