//! The `Edit` tool: replace an exact string in a file the model has read.
//!
//! Exact-string replacement (rather than line numbers or patches) is what
//! models do reliably: they copy the text they saw. The text must be unique,
//! or the model must say it means every occurrence, so an edit never lands
//! somewhere unintended. The same read-before-write rule as `Write` applies,
//! the file is replaced atomically, and the result is a short diff so the
//! model sees what it did without reading the file again.

use std::path::PathBuf;
use std::sync::Arc;

use baton_engine::permission::FileAccess;
use baton_engine::schema::InvalidSchema;
use baton_engine::{
    async_trait, PermissionTarget, Session, Tool, ToolContext, ToolDef, ToolError, ToolLogic,
    ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::edit_apply::{self, Failure};
use super::read_state::{self, Existing};
use super::{atomic, missing, paths, read, write, write_lock};

/// Diffs longer than this are cut.
const MAX_DIFF_CHARS: usize = 6_000;

/// The input of `Edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// Absolute path of the file to change.
    pub file_path: String,
    /// The exact text to replace, as it appears in the file (including
    /// indentation). Empty to create a new file.
    pub old_string: String,
    /// The text to put in its place (must differ from `old_string`).
    pub new_string: String,
    /// Replace every occurrence of `old_string` instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

const DESCRIPTION: &str =
    "Replaces exact text in a file. `file_path` must be absolute, and the file \
must have been read with Read in this session and not changed since. `old_string` must match the \
file exactly (copy it from Read's output without the line-number prefix) and occur exactly once, \
unless `replace_all` is true; include surrounding lines to make it unique. An empty `old_string` \
creates a file that does not exist yet. Returns a diff of the change.";

/// The `Edit` tool: replaces exact text in a file the model read.
///
/// # Panics
///
/// If its input schema is invalid, which is a bug; [`try_edit_tool`]
/// returns the error instead.
pub fn edit_tool() -> Tool {
    super::built(try_edit_tool())
}

/// The `Edit` tool, or why its input schema is invalid.
pub fn try_edit_tool() -> Result<Tool, InvalidSchema> {
    let def = ToolDef::new("Edit", DESCRIPTION).search_hint("edit replace text in file");
    Tool::typed::<EditInput, _>(def, EditTool)
}

struct EditTool;

#[async_trait]
impl ToolLogic<EditInput> for EditTool {
    fn permission_target(&self, input: &EditInput, ctx: &ToolContext) -> PermissionTarget {
        paths::target(&input.file_path, ctx, FileAccess::Write)
    }

    fn label(&self, input: &EditInput) -> Option<String> {
        Some(format!("Edit({})", input.file_path))
    }

    async fn validate_input(&self, input: &EditInput, ctx: &ToolContext) -> Result<(), String> {
        paths::check_absolute("file_path", &input.file_path, ctx)?;
        paths::new_call(&input.file_path, ctx);
        if input.old_string == input.new_string {
            return Err(
                "`old_string` and `new_string` are identical, so there is nothing to change."
                    .into(),
            );
        }
        if read::is_notebook(std::path::Path::new(&input.file_path)) {
            return Err(
                "this is a Jupyter notebook; change its cells with NotebookEdit instead.".into(),
            );
        }
        Ok(())
    }

    async fn call(&self, input: EditInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let real = paths::acting_on(&input.file_path, &ctx);
        let job = Job {
            shown: paths::shown(&input.file_path, &real),
            real,
            session: ctx.session.clone(),
            cwd: ctx.cwd().to_path_buf(),
            input,
        };
        tokio::task::spawn_blocking(move || job.run())
            .await
            .map_err(|e| ToolError::new(format!("Edit stopped unexpectedly: {e}")))?
    }
}

/// One Edit, run on a blocking thread.
struct Job {
    input: EditInput,
    real: PathBuf,
    shown: String,
    session: Arc<Session>,
    cwd: PathBuf,
}

impl Job {
    fn run(self) -> Result<ToolOutput, ToolError> {
        let output = self.apply()?;
        Ok(output
            .with_response(self.response())
            .with_file_written(&self.input.file_path))
    }

    /// Claude Code's `tool_response` for Edit (sdk-tools.d.ts
    /// `FileEditOutput`). Baton keeps no diff, so `structuredPatch` is
    /// empty and `originalFile` null.
    fn response(&self) -> serde_json::Value {
        serde_json::json!({
            "filePath": self.input.file_path,
            "oldString": self.input.old_string,
            "newString": self.input.new_string,
            "originalFile": null,
            "structuredPatch": [],
            "userModified": false,
            "replaceAll": self.input.replace_all,
        })
    }

    fn apply(&self) -> Result<ToolOutput, ToolError> {
        let _writer = write_lock::lock(&self.real);
        let shown = &self.shown;
        let existing = read_state::load_for_update(&self.session, &self.real, shown, "edit")?;
        let (before, keep) = match existing {
            Existing::Absent if self.input.old_string.is_empty() => return self.create(),
            Existing::Absent => {
                return Err(ToolError::new(format!(
                    "{} To create a new file, use Write, or Edit with an empty `old_string`.",
                    missing::not_found(shown, &self.real, &self.cwd)
                )))
            }
            Existing::Unchanged { bytes, meta } => (utf8(bytes, shown)?, meta.permissions()),
        };
        let input = &self.input;
        let after = if input.old_string.is_empty() {
            if !before.is_empty() {
                return Err(ToolError::new(format!(
                    "`old_string` is empty, but {shown} already has content. Give the exact \
                     text to replace, or use Write to replace the whole file; nothing was changed."
                )));
            }
            edit_apply::Applied {
                content: input.new_string.clone(),
                count: 1,
            }
        } else {
            let (old, new) = (&input.old_string, &input.new_string);
            edit_apply::replace(&before, old, new, input.replace_all)
                .map_err(|f| failure_text(f, shown, &before, old))?
        };
        atomic::write_atomic(&self.real, after.content.as_bytes(), Some(keep))
            .map_err(|e| read_state::io_error(&e, shown, "write"))?;
        write::remember(&self.session, &self.real, after.content.as_bytes());
        let diff =
            edit_apply::diff_snippet(&before, &after.content, &input.file_path, MAX_DIFF_CHARS);
        let what = if after.count == 1 {
            "1 replacement".to_string()
        } else {
            format!("{} replacements", after.count)
        };
        Ok(ToolOutput::text(format!(
            "Edited {shown} ({what}).\n{diff}"
        )))
    }

    /// An empty `old_string` on a missing file: the new file holds `new_string`.
    fn create(&self) -> Result<ToolOutput, ToolError> {
        let content = self.input.new_string.as_bytes();
        atomic::write_atomic(&self.real, content, None)
            .map_err(|e| read_state::io_error(&e, &self.shown, "create"))?;
        write::remember(&self.session, &self.real, content);
        Ok(ToolOutput::text(format!(
            "Created {} ({} lines).",
            self.shown,
            self.input.new_string.lines().count()
        )))
    }
}

/// Edit writes text back, so it only takes files that are text it can keep.
fn utf8(bytes: Vec<u8>, shown: &str) -> Result<String, ToolError> {
    String::from_utf8(bytes).map_err(|e| {
        ToolError::new(format!(
            "{shown} is not valid UTF-8 text (first bad byte at offset {}), and Edit only changes \
             UTF-8 files so it cannot corrupt other encodings. Nothing was changed; convert the \
             file (for example with iconv) or change it with Bash.",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn failure_text(failure: Failure, shown: &str, content: &str, old: &str) -> ToolError {
    ToolError::new(match failure {
        Failure::NotFound => {
            let mut text = format!(
                "`old_string` was not found in {shown}; nothing was changed. It must match the file \
                 exactly, including whitespace and indentation (without Read's line-number prefix)."
            );
            match edit_apply::near_miss(content, old) {
                Some(hint) => text.push_str(&format!(" {hint}")),
                None => text.push_str(" Read the file again and copy the text."),
            }
            text
        }
        Failure::NotUnique(n) => format!(
            "`old_string` occurs {n} times in {shown}, so it is not clear which to replace. Include \
             more surrounding lines to make it unique, or set `replace_all` to true to replace all \
             {n}; nothing was changed."
        ),
    })
}
