//! The `Write` tool: create a file, or replace one the model has read.
//!
//! Replacing a file the model never saw, or one that changed after it looked,
//! would destroy content it does not know about; [`read_state`] enforces the
//! rule. The write itself is atomic and keeps the old file's permissions
//! ([`atomic`]). Symlinks are written through: the link stays a link and its
//! target (the judged path) gets the new content.

use baton_engine::permission::FileAccess;
use baton_engine::schema::InvalidSchema;
use baton_engine::{
    async_trait, PermissionTarget, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::read_state::{self, Existing, FileSnapshot, ReadState};
use super::{atomic, paths, write_lock};

/// The input of `Write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// Absolute path of the file to write.
    pub file_path: String,
    /// The complete new content of the file.
    pub content: String,
}

const DESCRIPTION: &str = "Writes a file to the local file system, replacing it if it exists. \
`file_path` must be absolute; missing parent directories are created. An existing file must have \
been read with Read in this session, and must not have changed since, or the write is refused. \
Prefer Edit for changing part of an existing file: it sends only the change.";

/// The `Write` tool: creates or replaces a whole file.
///
/// # Panics
///
/// If its input schema is invalid, which is a bug; [`try_write_tool`]
/// returns the error instead.
pub fn write_tool() -> Tool {
    super::built(try_write_tool())
}

/// The `Write` tool, or why its input schema is invalid.
pub fn try_write_tool() -> Result<Tool, InvalidSchema> {
    let def = ToolDef::new("Write", DESCRIPTION).search_hint("write create overwrite file");
    Tool::typed::<WriteInput, _>(def, WriteTool)
}

struct WriteTool;

#[async_trait]
impl ToolLogic<WriteInput> for WriteTool {
    fn permission_target(&self, input: &WriteInput, ctx: &ToolContext) -> PermissionTarget {
        paths::target(&input.file_path, ctx, FileAccess::Write)
    }

    fn label(&self, input: &WriteInput) -> Option<String> {
        Some(format!("Write({})", input.file_path))
    }

    async fn validate_input(&self, input: &WriteInput, ctx: &ToolContext) -> Result<(), String> {
        paths::check_absolute("file_path", &input.file_path, ctx)?;
        paths::new_call(&input.file_path, ctx);
        Ok(())
    }

    async fn call(&self, input: WriteInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let real = paths::acting_on(&input.file_path, &ctx);
        let shown = paths::shown(&input.file_path, &real);
        let session = ctx.session.clone();
        let written = tokio::task::spawn_blocking(move || {
            let _writer = write_lock::lock(&real);
            let existing = read_state::load_for_update(&session, &real, &shown, "write")?;
            let (keep, verb) = match &existing {
                Existing::Absent => (None, "Created"),
                Existing::Unchanged { meta, .. } => (Some(meta.permissions()), "Overwrote"),
            };
            let response = |kind: &str| response(kind, &input.file_path, &input.content);
            if let Existing::Unchanged { bytes, .. } = &existing {
                if bytes == input.content.as_bytes() {
                    return Ok(ToolOutput::text(format!(
                        "{shown} already has exactly this content; nothing was written."
                    ))
                    .with_response(response("update")));
                }
            }
            atomic::write_atomic(&real, input.content.as_bytes(), keep)
                .map_err(|e| read_state::io_error(&e, &shown, "write"))?;
            remember(&session, &real, input.content.as_bytes());
            let lines = input.content.lines().count();
            let kind = match existing {
                Existing::Absent => "create",
                Existing::Unchanged { .. } => "update",
            };
            Ok(ToolOutput::text(format!(
                "{verb} {shown} ({lines} lines, {} bytes).",
                input.content.len()
            ))
            .with_response(response(kind))
            .with_file_written(&input.file_path))
        })
        .await;
        written.map_err(|e| ToolError::new(format!("Write stopped unexpectedly: {e}")))?
    }
}

/// Claude Code's `tool_response` for Write (sdk-tools.d.ts `FileWriteOutput`):
/// `type` is `create` for a new file, `update` otherwise. Baton keeps no
/// diff, so `structuredPatch` is empty and `originalFile` null.
fn response(kind: &str, file_path: &str, content: &str) -> serde_json::Value {
    serde_json::json!({
        "type": kind,
        "filePath": file_path,
        "content": content,
        "structuredPatch": [],
        "originalFile": null,
    })
}

/// After a successful write the model knows the file's content: record it so
/// the next Edit or Write needs no fresh Read.
pub(crate) fn remember(session: &baton_engine::Session, real: &std::path::Path, bytes: &[u8]) {
    // Without metadata there is no snapshot; the next write then asks for a
    // Read, which is the safe side.
    if let Ok(meta) = super::open::metadata(real) {
        ReadState::of(session).record(real.to_path_buf(), FileSnapshot::of(bytes, &meta));
    }
}
