//! `Grep`: search file contents with ripgrep's semantics.
//!
//! Built from ripgrep's own crates (`ignore` for the walk, `grep-regex` and
//! `grep-searcher` for matching) rather than by shelling out to `rg`, so it
//! works where `rg` is not installed, cannot be confused by shell quoting,
//! and stops as soon as the call is cancelled. Files a `.gitignore` excludes
//! are skipped even outside a git repository, because that is what a user
//! who wrote the `.gitignore` expects.
//!
//! - [`options`]: the input and how it maps to ripgrep's settings;
//! - [`search`]: the walk and the per-file search, bounded by the limit;
//! - [`output`]: how results read to the model;
//! - [`long_lines`], [`stream`], [`whole_line`]: lines too long to hold are
//!   searched whole by streaming them through the pattern's automaton.

pub(crate) mod long_lines;
pub(crate) mod options;
pub(crate) mod output;
pub(crate) mod search;
pub(crate) mod stream;
pub(crate) mod whole_line;

use std::path::Path;

use baton_engine::permission::{FileAccess, SearchFilter};
use baton_engine::{
    async_trait, PermissionTarget, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
};

pub use options::{GrepInput, OutputMode};

use crate::files::open::{self, Dir, Found};
use crate::files::paths;
use crate::registry::BuiltinConfig;

struct Grep {
    default_limit: usize,
}

/// The `Grep` tool (ripgrep's engine), with the limits of `config`.
pub fn tool(config: &BuiltinConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "Grep",
        "Searches file contents with a regular expression, like ripgrep (`rg`). \
         `output_mode`: `files_with_matches` (default, lists files), `content` \
         (matching lines; `-n` line numbers, on by default; `-A`/`-B`/`-C` context) \
         or `count` (matching lines per file). Filter files with `glob` (e.g. \
         `*.{ts,tsx}`) or `type` (e.g. `rust`, `py`). `-i` ignores case; \
         `multiline` lets a match span lines. Files excluded by .gitignore, hidden \
         files and binary files are skipped. Output is cut after `head_limit` \
         lines or entries (default 250; 0 for no limit). Use this instead of \
         running grep or rg in a shell.",
    )
    .search_hint("search file contents regex ripgrep");
    Tool::typed::<GrepInput, _>(
        def,
        Grep {
            default_limit: config.grep_default_head_limit,
        },
    )
}

impl Grep {
    /// Lines or entries to return. "No limit" still stops at
    /// [`output::MAX_ENTRIES`], so memory stays bounded on any tree.
    fn limit(&self, input: &GrepInput) -> usize {
        match input.head_limit.unwrap_or(self.default_limit) {
            0 => output::MAX_ENTRIES,
            n => n.min(output::MAX_ENTRIES),
        }
    }
}

#[async_trait]
impl ToolLogic<GrepInput> for Grep {
    fn is_concurrency_safe(&self, _input: &GrepInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &GrepInput) -> bool {
        true
    }

    fn permission_target(&self, input: &GrepInput, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: paths::judged(&input.search_path(ctx.cwd()), ctx),
            access: FileAccess::Read,
        }
    }

    fn label(&self, input: &GrepInput) -> Option<String> {
        Some(format!("Grep({})", input.pattern))
    }

    async fn validate_input(&self, input: &GrepInput, ctx: &ToolContext) -> Result<(), String> {
        paths::forget(&input.search_path(ctx.cwd()), ctx);
        options::compile(input, ctx.cwd()).map(|_| ())
    }

    async fn call(&self, input: GrepInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let compiled = options::compile(&input, ctx.cwd()).map_err(ToolError::new)?;
        let judged = paths::take(&compiled.root, &ctx);
        let limit = self.limit(&input);
        let cancel = ctx.cancel.clone();
        let output = tokio::task::spawn_blocking(move || {
            let root = open_root(&judged, &compiled.root)?;
            let hide = |path: &std::path::Path| SearchFilter::hides(&ctx, "Grep", path);
            let found = search::run(&input, &compiled, &root, limit, &cancel, &hide);
            let response = output::response(&input, &found);
            Ok::<_, ToolError>(
                ToolOutput::text(output::render(&input, &found, limit)).with_response(response),
            )
        })
        .await
        .map_err(|e| ToolError::new(format!("The search failed: {e}")))??;
        Ok(output)
    }
}

/// The judged search root, opened without following a link.
fn open_root(judged: &Path, shown: &Path) -> Result<search::Root, ToolError> {
    let failed =
        |e: std::io::Error| ToolError::new(format!("Cannot read {}: {e}.", shown.display()));
    match open::find(judged).map_err(failed)? {
        Found::File(file, _) => Ok(search::Root::File(file)),
        Found::Dir => Ok(search::Root::Dir(Dir::open(judged).map_err(failed)?)),
        Found::Missing => Err(ToolError::new(format!(
            "The path {} does not exist; check it, or omit `path` to search the working directory.",
            shown.display()
        ))),
        Found::Other => Err(ToolError::new(format!(
            "{} is not a regular file or a directory (a device, socket or pipe), so Grep will not read it.",
            shown.display()
        ))),
    }
}

#[cfg(test)]
mod tests;
