//! The file tools: `Read`, `Write`, `Edit`, `NotebookEdit` (SPEC §13).
//!
//! They share three ideas, each in its own module:
//! - [`paths`]: a path argument must be absolute and is judged, by the
//!   permission stage, at its resolved location (symlinks followed);
//! - [`read_state`]: the writing tools only replace what the model has read
//!   in this session and what has not changed since;
//! - [`atomic`]: a file is replaced whole or not at all, so a failed call
//!   leaves the disk as it was.

mod atomic;
mod edit;
mod edit_apply;
mod lines;
mod missing;
mod notebook;
pub mod notebook_cells;
pub mod paths;
mod read;
pub mod read_state;
mod sniff;
mod write;

#[cfg(test)]
mod tests;

use baton_engine::Tool;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

pub use edit::{edit_tool, EditInput};
pub use notebook::{notebook_edit_tool, NotebookEditInput};
pub use read::{read_tool, read_tool_with, ReadInput, ReadLimits};
pub use write::{write_tool, WriteInput};

/// All four file tools with default settings.
pub fn tools() -> Vec<Tool> {
    vec![read_tool(), write_tool(), edit_tool(), notebook_edit_tool()]
}

/// Builds a typed tool. The input types are fixed at compile time and their
/// schemas are covered by tests, so a failure here is a programming error,
/// not something input can cause.
fn build<I, L>(def: baton_engine::ToolDef, logic: L) -> Tool
where
    I: DeserializeOwned + JsonSchema + Send + Sync + 'static,
    L: baton_engine::ToolLogic<I>,
{
    match Tool::typed::<I, L>(def, logic) {
        Ok(tool) => tool,
        Err(e) => panic!("a built-in file tool has an invalid input schema: {e:?}"),
    }
}
