//! The `NotebookEdit` tool: replace, insert or delete one Jupyter cell.
//!
//! Editing a notebook's JSON with `Edit` is error-prone (escaped newlines,
//! source split into lists, outputs in the way), so cells are addressed by id
//! (or index, for notebooks without ids) and the JSON is rebuilt by
//! [`notebook_cells`]. Read-before-write and atomic replacement work as for
//! `Write`.

use baton_engine::permission::FileAccess;
use baton_engine::schema::InvalidSchema;
use baton_engine::{
    async_trait, PermissionTarget, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::notebook_cells::{self, CellEdit, CellType, EditMode};
use super::read_state::{self, Existing};
use super::{atomic, missing, paths, write, write_lock};

/// The input of `NotebookEdit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// Absolute path of the `.ipynb` file.
    pub notebook_path: String,
    /// Id of the cell to change (as shown by Read), or its 0-based index for
    /// notebooks without ids. For `insert`, the new cell goes after this one
    /// (at the start when left out).
    #[serde(default)]
    pub cell_id: Option<String>,
    /// The new source of the cell (ignored for `delete`).
    #[serde(default)]
    pub new_source: String,
    /// `code` or `markdown`; required for `insert`, changes the type for `replace`.
    #[serde(default)]
    pub cell_type: Option<CellType>,
    /// `replace` (default), `insert` or `delete`.
    #[serde(default)]
    pub edit_mode: Option<EditMode>,
}

const DESCRIPTION: &str = "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb). \
`notebook_path` must be absolute, and the notebook must have been read with Read in this session \
and not changed since. Address cells by the id Read shows (or a 0-based index). `edit_mode` is \
`replace` (default), `insert` (after `cell_id`, or first; needs `cell_type`) or `delete`. \
Replacing a code cell clears its outputs.";

/// The `NotebookEdit` tool: replaces, inserts or deletes one cell of a
/// Jupyter notebook.
///
/// # Panics
///
/// If its input schema is invalid, which is a bug;
/// [`try_notebook_edit_tool`] returns the error instead.
pub fn notebook_edit_tool() -> Tool {
    super::built(try_notebook_edit_tool())
}

/// The `NotebookEdit` tool, or why its input schema is invalid.
pub fn try_notebook_edit_tool() -> Result<Tool, InvalidSchema> {
    let def = ToolDef::new("NotebookEdit", DESCRIPTION)
        .search_hint("jupyter notebook ipynb cell edit insert delete")
        .should_defer(true);
    Tool::typed::<NotebookEditInput, _>(def, NotebookEditTool)
}

struct NotebookEditTool;

#[async_trait]
impl ToolLogic<NotebookEditInput> for NotebookEditTool {
    fn permission_target(&self, input: &NotebookEditInput, ctx: &ToolContext) -> PermissionTarget {
        paths::target(&input.notebook_path, ctx, FileAccess::Write)
    }

    fn label(&self, input: &NotebookEditInput) -> Option<String> {
        Some(format!("NotebookEdit({})", input.notebook_path))
    }

    async fn validate_input(
        &self,
        input: &NotebookEditInput,
        ctx: &ToolContext,
    ) -> Result<(), String> {
        paths::check_absolute("notebook_path", &input.notebook_path, ctx)?;
        paths::new_call(&input.notebook_path, ctx);
        if !super::read::is_notebook(std::path::Path::new(&input.notebook_path)) {
            return Err(
                "`notebook_path` must name a .ipynb file; use Edit or Write for other files."
                    .into(),
            );
        }
        let mode = input.edit_mode.unwrap_or_default();
        if mode == EditMode::Insert && input.cell_type.is_none() {
            return Err("`edit_mode` insert needs `cell_type` (code or markdown).".into());
        }
        if mode != EditMode::Insert && input.cell_id.is_none() {
            return Err("`cell_id` is required to replace or delete a cell.".into());
        }
        Ok(())
    }

    async fn call(
        &self,
        input: NotebookEditInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let real = paths::acting_on(&input.notebook_path, &ctx);
        let shown = paths::shown(&input.notebook_path, &real);
        let session = ctx.session.clone();
        let cwd = ctx.cwd().to_path_buf();
        tokio::task::spawn_blocking(move || {
            let _writer = write_lock::lock(&real);
            let (bytes, meta) = match read_state::load_for_update(&session, &real, &shown, "edit")?
            {
                Existing::Absent => {
                    return Err(ToolError::new(format!(
                        "{} NotebookEdit changes existing notebooks; create one with Write first.",
                        missing::not_found(&shown, &real, &cwd)
                    )))
                }
                Existing::Unchanged { bytes, meta } => (bytes, meta),
            };
            let mut notebook = notebook_cells::parse(&bytes).map_err(|e| {
                ToolError::new(format!("Cannot edit {shown}: {e}. Nothing was changed."))
            })?;
            let edit = CellEdit {
                cell_id: input.cell_id.as_deref(),
                new_source: &input.new_source,
                cell_type: input.cell_type,
                mode: input.edit_mode.unwrap_or_default(),
            };
            let summary = notebook.apply(&edit).map_err(|e| {
                ToolError::new(format!("Cannot edit {shown}: {e}. Nothing was changed."))
            })?;
            let out = notebook.to_bytes().map_err(|e| {
                ToolError::new(format!("Cannot write {shown}: {e}. Nothing was changed."))
            })?;
            atomic::write_atomic(&real, &out, Some(meta.permissions()))
                .map_err(|e| read_state::io_error(&e, &shown, "write"))?;
            write::remember(&session, &real, &out);
            Ok(ToolOutput::text(format!("{summary} ({shown})"))
                .with_response(response(&input))
                .with_file_written(&input.notebook_path))
        })
        .await
        .map_err(|e| ToolError::new(format!("NotebookEdit stopped unexpectedly: {e}")))?
    }
}

/// Claude Code's `tool_response` for NotebookEdit (sdk-tools.d.ts
/// `NotebookEditOutput`).
fn response(input: &NotebookEditInput) -> serde_json::Value {
    serde_json::json!({
        "new_source": input.new_source,
        "cell_id": input.cell_id.as_deref().unwrap_or_default(),
        "cell_type": input.cell_type.unwrap_or(CellType::Code),
        "language": "python",
        "edit_mode": input.edit_mode.unwrap_or_default(),
        "notebook_path": input.notebook_path,
    })
}
