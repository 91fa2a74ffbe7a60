//! The file tools: `Read`, `Write`, `Edit`, `NotebookEdit` (SPEC §13).
//!
//! They share four ideas, each in its own module:
//! - [`paths`]: a path argument must be absolute and is judged, by the
//!   permission stage, at its resolved location (symlinks followed), once
//!   per call ([`judged`]);
//! - [`open`]: the tools open that judged object and nothing else: no link
//!   on the path is followed, and writes happen relative to a handle on the
//!   judged directory;
//! - [`read_state`]: the writing tools only replace what the model has read
//!   in this session and what has not changed since;
//! - [`atomic`]: a file is replaced whole or not at all, so a failed call
//!   leaves the disk as it was.

pub(crate) mod atomic;
mod edit;
mod edit_apply;
pub(crate) mod judged;
mod lines;
mod missing;
mod notebook;
pub(crate) mod notebook_cells;
pub mod open;
pub(crate) mod paths;
mod read;
pub mod read_state;
mod sniff;
pub(crate) mod write;
pub(crate) mod write_lock;

#[cfg(test)]
mod tests;

use baton_engine::schema::InvalidSchema;
use baton_engine::Tool;

pub use edit::{edit_tool, try_edit_tool, EditInput};
pub use notebook::{notebook_edit_tool, try_notebook_edit_tool, NotebookEditInput};
pub use read::{read_tool, read_tool_with, try_read_tool, ReadInput, ReadLimits};
pub use write::{try_write_tool, write_tool, WriteInput};

/// Forgets what judging `path` (absolute) for the call `ctx` kept in the
/// session (see [`judged`]): for a caller that judged a file tool's call
/// with [`baton_engine::Pipeline::judge`] and acts on the judged target
/// itself, so the tool never runs to take it.
pub fn forget_judged(path: &std::path::Path, ctx: &baton_engine::ToolContext) {
    judged::forget(path, ctx);
}

/// All four file tools with default settings.
///
/// # Panics
/// Only if a derived input schema does not compile: a programming error in
/// this crate, never caused by input (see [`try_tools`]; tests build them all).
pub fn tools() -> Vec<Tool> {
    match try_tools(ReadLimits::default()) {
        Ok(tools) => tools,
        Err(e) => panic!("a built-in file tool has an invalid input schema: {}", e.0),
    }
}

/// All four file tools, `Read` bounded by `limits`.
pub fn try_tools(limits: ReadLimits) -> Result<Vec<Tool>, InvalidSchema> {
    Ok(vec![
        read::try_read_tool(limits)?,
        write::try_write_tool()?,
        edit::try_edit_tool()?,
        notebook::try_notebook_edit_tool()?,
    ])
}

/// Unwraps a constructor of a built-in tool (see [`tools`] for why a
/// failure is a programming error).
fn built(tool: Result<Tool, InvalidSchema>) -> Tool {
    match tool {
        Ok(tool) => tool,
        Err(e) => panic!("a built-in file tool has an invalid input schema: {}", e.0),
    }
}
