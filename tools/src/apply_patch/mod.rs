//! The `apply_patch` tool: codex's patch language (see [`parse`]), applied
//! all or nothing (see [`apply`]).
//!
//! It serves three callers: the codex tool set (`apply_patch` as a freeform
//! grammar tool on Responses, or with a JSON `input` string on Chat
//! Completions), and OpenAI's native `apply_patch_call` items, whose V4A
//! diffs the wire layer turns into this language.
//!
//! For the permission rules a patch is an edit of the paths it names: a
//! patch of one file is judged as a write of that file (so `Edit(...)`
//! rules, protected paths and the workspace bounds apply as to Edit and
//! Write). A patch naming several files is judged on each
//! (`further_permission_targets`); the strictest decision stands.

pub(crate) mod apply;
pub(crate) mod parse;

use std::collections::HashMap;
use std::path::PathBuf;

use baton_engine::permission::FileAccess;
use baton_engine::schema::InvalidSchema;
use baton_engine::ToolKind;
use baton_engine::{
    async_trait, PermissionTarget, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::files::{atomic, open, paths, write_lock};
use parse::FileOp;

/// The tool's name in codex's set and on the wire.
pub const NAME: &str = "apply_patch";

/// The Lark grammar OpenAI constrains a freeform `apply_patch` call with.
pub use baton_engine::wire::codex::APPLY_PATCH_GRAMMAR as GRAMMAR;

/// The input of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchInput {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub input: String,
}

const DESCRIPTION: &str = "Edits files with a patch. The patch starts with `*** Begin Patch` and \
ends with `*** End Patch`. Between them, one section per file: `*** Add File: <path>` followed by \
the new file's lines, each prefixed with `+`; `*** Delete File: <path>`; or `*** Update File: \
<path>` (optionally followed by `*** Move to: <new path>`) and hunks. A hunk starts with `@@` \
(optionally `@@ <a line to find first>`, such as a function header), then lines prefixed with a \
space (unchanged context, about three lines before and after each change), `-` (removed) or `+` \
(added). `*** End of File` after a hunk anchors it at the end of the file. Paths are relative to \
the working directory or absolute. The patch applies entirely or not at all.";

/// The `apply_patch` tool: adds, deletes, moves and edits files from one
/// patch in the Codex format.
pub fn tool() -> Result<Tool, InvalidSchema> {
    let def = ToolDef::new(NAME, DESCRIPTION)
        .search_hint("patch edit add delete move files diff")
        // Hooks guarding Edit see an Edit of each file it writes.
        .tool_kind(ToolKind::Patch);
    Tool::typed::<ApplyPatchInput, _>(def, ApplyPatchTool)
}

struct ApplyPatchTool;

/// Every path argument of a patch, in order (a move names two).
fn raw_paths(ops: &[FileOp]) -> Vec<&str> {
    let mut out = Vec::new();
    for op in ops {
        out.push(op.path());
        if let FileOp::Update {
            move_to: Some(to), ..
        } = op
        {
            out.push(to.as_str());
        }
    }
    out
}

/// Every real path a patch touches, as judged in this call.
fn touched(ops: &[FileOp], ctx: &ToolContext) -> Vec<PathBuf> {
    raw_paths(ops)
        .into_iter()
        .map(|raw| paths::resolve(raw, ctx))
        .collect()
}

#[async_trait]
impl ToolLogic<ApplyPatchInput> for ApplyPatchTool {
    fn permission_target(&self, input: &ApplyPatchInput, ctx: &ToolContext) -> PermissionTarget {
        match parse::parse(&input.input) {
            Ok(ops) => match touched(&ops, ctx).into_iter().next() {
                Some(path) => PermissionTarget::Path {
                    path,
                    access: FileAccess::Write,
                },
                None => PermissionTarget::None,
            },
            // Unparsable patches never reach the permission stage
            // (validation refuses them); judge the working directory.
            Err(_) => PermissionTarget::Path {
                path: ctx.cwd().to_path_buf(),
                access: FileAccess::Write,
            },
        }
    }

    fn further_permission_targets(
        &self,
        input: &ApplyPatchInput,
        ctx: &ToolContext,
    ) -> Vec<PermissionTarget> {
        let Ok(ops) = parse::parse(&input.input) else {
            return Vec::new();
        };
        touched(&ops, ctx)
            .into_iter()
            .skip(1)
            .map(|path| PermissionTarget::Path {
                path,
                access: FileAccess::Write,
            })
            .collect()
    }

    fn label(&self, input: &ApplyPatchInput) -> Option<String> {
        let ops = parse::parse(&input.input).ok()?;
        let names: Vec<&str> = ops.iter().map(FileOp::path).collect();
        Some(format!("apply_patch({})", names.join(", ")))
    }

    async fn validate_input(
        &self,
        input: &ApplyPatchInput,
        ctx: &ToolContext,
    ) -> Result<(), String> {
        let ops = parse::parse(&input.input).map_err(|e| format!("The patch is not valid: {e}"))?;
        for raw in raw_paths(&ops) {
            paths::new_call(raw, ctx);
        }
        Ok(())
    }

    async fn call(
        &self,
        input: ApplyPatchInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let ops = parse::parse(&input.input)
            .map_err(|e| ToolError::new(format!("The patch is not valid: {e}")))?;
        let session = ctx.session.clone();
        // Each path as it was judged, taken once: the plan, the locks and
        // the writes all act on these.
        let judged: HashMap<String, PathBuf> = raw_paths(&ops)
            .into_iter()
            .map(|raw| (raw.to_string(), paths::acting_on(raw, &ctx)))
            .collect();
        tokio::task::spawn_blocking(move || {
            let resolve = |raw: &str| match judged.get(raw) {
                Some(path) => path.clone(),
                None => paths::resolve_now(&ctx.context.absolute(raw)),
            };
            let mut all: Vec<PathBuf> = judged.values().cloned().collect();
            // One order for every patch, so two patches never wait on each other.
            all.sort();
            all.dedup();
            let _locks: Vec<_> = all.iter().map(|p| write_lock::lock(p)).collect();
            let planned = apply::plan(&ops, &resolve).map_err(|e| {
                ToolError::new(format!("The patch was not applied (nothing changed): {e}"))
            })?;
            // Missing directories are made (and removed again on failure)
            // by the atomic write, each relative to its parent's handle.
            let write = |path: &std::path::Path, bytes: &[u8]| {
                let keep = open::metadata(path).ok().map(|m| m.permissions());
                atomic::write_atomic(path, bytes, keep)
            };
            apply::commit(&planned, &write).map_err(ToolError::new)?;
            let mut lines = vec!["Success. Updated the following files:".to_string()];
            let mut written = Vec::new();
            for p in &planned {
                if let Some(c) = &p.content {
                    crate::files::write::remember(&session, &p.path, c.as_bytes());
                    written.push(p.path.clone());
                }
                lines.push(format!("{} {}", p.verb, p.path.display()));
            }
            let mut output = ToolOutput::text(lines.join("\n"));
            // Facts for the host: the files given new content (not those
            // deleted or moved away).
            if !written.is_empty() {
                output.facts_mut().files_written = written;
            }
            Ok(output)
        })
        .await
        .map_err(|e| ToolError::new(format!("apply_patch stopped unexpectedly: {e}")))?
    }
}

#[cfg(test)]
mod tests;
