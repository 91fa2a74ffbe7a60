//! `Glob`: find files by name pattern.
//!
//! The model uses this to orient itself in a repository, so it answers the way
//! a developer would expect there: files a `.gitignore` excludes are left out
//! (even outside a git repository: a `.gitignore` states intent wherever it
//! is), hidden files are included but `.git` is not, and the most recently
//! modified files come first because they are the likeliest to matter. The
//! list is capped so a careless `**/*` cannot flood the context.
//!
//! Pattern semantics are a shell's: `*` stays within one directory, `**`
//! crosses directories, `{a,b}` alternates. The pattern is matched against
//! paths relative to the search directory; a leading run of literal
//! directories (`src/**/*.rs`, or an absolute `/repo/src/*.rs`) narrows where
//! the walk starts.
//!
//! The walk (ripgrep's `ignore`) finds names; a name is listed only once it
//! is confirmed below a handle on the judged search directory: its
//! directory is opened from that handle with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS`, and the entry looked up there without following
//! it ([`Dir::dir_beneath`]). A directory swapped for a link after the walk
//! listed it fails that check, so no name from behind a link the search did
//! not judge is shown. (The walk may still spend time listing such a
//! directory, and read `.gitignore` files there, which only ever hides
//! names.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::Metadata;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use baton_engine::permission::{FileAccess, SearchFilter};
use baton_engine::{
    async_trait, paths, CancelScope, PermissionTarget, Tool, ToolContext, ToolDef, ToolError,
    ToolLogic, ToolOutput,
};
use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::files::open::Dir;
use crate::files::paths as judged_paths;
use crate::registry::BuiltinConfig;

/// The input of `Glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// Glob pattern, e.g. `**/*.rs` or `src/**/*.{ts,tsx}`.
    pub pattern: String,
    /// Directory to search in; defaults to the working directory.
    #[serde(default)]
    pub path: Option<String>,
}

struct Glob {
    max_results: usize,
}

/// The `Glob` tool: file paths matching a pattern, newest first.
pub fn tool(config: &BuiltinConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "Glob",
        "Finds files whose path matches a glob pattern such as `**/*.rs` or \
         `src/**/*.{ts,tsx}`. `*` matches within one directory and `**` across \
         directories. Searches `path` (default: the working directory), skips files \
         excluded by .gitignore, and lists absolute paths, most recently modified \
         first. Use Grep to search file contents.",
    )
    .search_hint("find files by name pattern wildcard");
    Tool::typed::<GlobInput, _>(
        def,
        Glob {
            max_results: config.glob_max_results,
        },
    )
}

/// Where the walk starts and what is matched below it.
struct Plan {
    base: PathBuf,
    matcher: GlobMatcher,
}

fn has_glob_meta(part: &str) -> bool {
    part.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// Splits the literal leading directories off `pattern` and compiles the rest.
fn plan(input: &GlobInput, ctx: &ToolContext) -> Result<Plan, String> {
    if input.pattern.trim().is_empty() {
        return Err("The pattern is empty; give a glob such as `**/*.rs`.".into());
    }
    let search_dir = search_dir(input, ctx);
    let pattern = Path::new(&input.pattern);
    let mut base = if pattern.is_absolute() {
        PathBuf::from("/")
    } else {
        search_dir
    };
    let parts: Vec<&str> = pattern
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            Component::ParentDir => Some(".."),
            _ => None,
        })
        .collect();
    let mut first_glob = 0;
    // Keep at least the last component as the pattern.
    while first_glob + 1 < parts.len() && !has_glob_meta(parts[first_glob]) {
        base.push(parts[first_glob]);
        first_glob += 1;
    }
    let rest = parts[first_glob..].join("/");
    let glob = GlobBuilder::new(&rest)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            format!(
                "`{}` is not a valid glob pattern: {}. Examples of valid patterns: \
                 `**/*.rs`, `src/*.{{js,ts}}`, `test_?.py`.",
                input.pattern,
                e.kind()
            )
        })?;
    Ok(Plan {
        base: paths::normalize(&base),
        matcher: glob.compile_matcher(),
    })
}

/// The directory the walk starts in (what is judged), also for a pattern
/// that does not compile.
fn walk_base(input: &GlobInput, ctx: &ToolContext) -> PathBuf {
    plan(input, ctx)
        .map(|p| p.base)
        .unwrap_or_else(|_| search_dir(input, ctx))
}

fn search_dir(input: &GlobInput, ctx: &ToolContext) -> PathBuf {
    match &input.path {
        Some(p) if !p.trim().is_empty() => paths::normalize(&ctx.context.absolute(p)),
        _ => ctx.cwd().to_path_buf(),
    }
}

fn check_search_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "{} is a file, not a directory; give its directory as `path` and the \
             file name as the pattern.",
            dir.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "The directory {} does not exist; check the path or search from the \
             working directory.",
            dir.display()
        )),
        Err(e) => Err(format!("Cannot read the directory {}: {e}.", dir.display())),
    }
}

/// Sort key: newer first, then by path. `Reverse` so that a larger key is
/// a file to show earlier.
type Key = (SystemTime, Reverse<PathBuf>);

/// The newest `max` matches and how many there were in all.
struct Matches {
    newest: BinaryHeap<Reverse<Key>>,
    total: usize,
    /// Matching files left out because a permission rule covers them.
    hidden: usize,
}

/// Walks `plan.base` (blocking), listing only what is confirmed below
/// `root`, the handle on the judged `plan.base`. Memory stays bounded by
/// `max` however many files match.
fn walk(
    plan: &Plan,
    root: &Dir,
    max: usize,
    cancel: &CancelScope,
    hide: &dyn Fn(&Path) -> bool,
) -> Matches {
    let mut found = Matches::none();
    let mut beneath = Beneath { root, last: None };
    let walker = ignore::WalkBuilder::new(&plan.base)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker {
        if cancel.is_cancelled() {
            break;
        }
        // Unreadable entries are skipped like a shell glob skips them.
        let Ok(entry) = entry else { continue };
        let is_file = entry.file_type().is_some_and(|t| t.is_file())
            || (entry.path_is_symlink() && entry.path().is_file());
        if !is_file {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(&plan.base) else {
            continue;
        };
        if !plan.matcher.is_match(relative) {
            continue;
        }
        // A read rule on the file holds however the pattern reached it
        // (dot-files and links included): its name is not shown.
        let judged = root.path().join(relative);
        if hide(entry.path()) || (judged != entry.path() && hide(&judged)) {
            found.hidden += 1;
            continue;
        }
        // Listed only if it is there, below the judged directory, with no
        // link on the way; a link itself is listed as the walk saw it.
        let Some(meta) = beneath.metadata(relative) else {
            continue;
        };
        let same_kind = meta.is_file() || (meta.is_symlink() && entry.path_is_symlink());
        if !same_kind {
            continue;
        }
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        found.add(entry.into_path(), modified, max);
    }
    found
}

/// Looks names up below the search root's handle, keeping the last
/// directory open (the walk lists a directory's files together).
struct Beneath<'a> {
    root: &'a Dir,
    /// The last directory below the root opened, by its relative path.
    last: Option<(PathBuf, Option<Dir>)>,
}

impl Beneath<'_> {
    /// The entry at `relative` itself (a link not followed), reached from
    /// the root without a link; `None` if it is not there that way.
    fn metadata(&mut self, relative: &Path) -> Option<Metadata> {
        let name = relative.file_name()?;
        let parent = relative.parent().unwrap_or(Path::new(""));
        if parent.as_os_str().is_empty() {
            return self.root.metadata(name).ok();
        }
        let stale = self.last.as_ref().is_none_or(|(p, _)| p != parent);
        if stale {
            self.last = Some((parent.to_path_buf(), self.root.dir_beneath(parent).ok()));
        }
        let (_, dir) = self.last.as_ref()?;
        dir.as_ref()?.metadata(name).ok()
    }
}

impl Matches {
    fn none() -> Matches {
        Matches {
            newest: BinaryHeap::new(),
            total: 0,
            hidden: 0,
        }
    }

    fn add(&mut self, path: PathBuf, modified: SystemTime, max: usize) {
        self.total += 1;
        self.newest.push(Reverse((modified, Reverse(path))));
        if self.newest.len() > max {
            self.newest.pop();
        }
    }

    /// The kept paths, newest first.
    fn into_paths(self) -> Vec<PathBuf> {
        // Ascending order of `Reverse<Key>` is descending order of `Key`.
        self.newest
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse((_, Reverse(path)))| path)
            .collect()
    }
}

/// The text the model reads, and the files listed (newest first) with
/// whether some were left out for the cap.
fn render(
    found: Matches,
    input: &GlobInput,
    plan: &Plan,
    max: usize,
) -> (String, Vec<String>, bool) {
    let hidden = match found.hidden {
        0 => None,
        1 => Some("(1 matching file is not shown: a permission rule covers it.)".to_string()),
        n => Some(format!(
            "({n} matching files are not shown: permission rules cover them.)"
        )),
    };
    if found.total == 0 {
        let none = format!(
            "No files found matching `{}` in {}.",
            input.pattern,
            plan.base.display()
        );
        let text = match hidden {
            Some(note) => format!("{none}\n{note}"),
            None => none,
        };
        return (text, Vec::new(), false);
    }
    let total = found.total;
    let listed: Vec<String> = found
        .into_paths()
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    let mut out = listed.clone();
    if total > max {
        out.push(format!(
            "(Showing the {max} most recently modified of {total} matching files; use a \
             more specific pattern or path to see the others.)"
        ));
    }
    out.extend(hidden);
    (out.join("\n"), listed, total > max)
}

#[async_trait]
impl ToolLogic<GlobInput> for Glob {
    fn is_concurrency_safe(&self, _input: &GlobInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &GlobInput) -> bool {
        true
    }

    fn permission_target(&self, input: &GlobInput, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: judged_paths::judged(&walk_base(input, ctx), ctx),
            access: FileAccess::Read,
        }
    }

    fn label(&self, input: &GlobInput) -> Option<String> {
        Some(format!("Glob({})", input.pattern))
    }

    async fn validate_input(&self, input: &GlobInput, ctx: &ToolContext) -> Result<(), String> {
        judged_paths::forget(&walk_base(input, ctx), ctx);
        plan(input, ctx)?;
        check_search_dir(&search_dir(input, ctx))
    }

    async fn call(&self, input: GlobInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let plan = plan(&input, &ctx).map_err(ToolError::new)?;
        let judged = judged_paths::take(&plan.base, &ctx);
        check_search_dir(&search_dir(&input, &ctx)).map_err(ToolError::new)?;
        let max = self.max_results;
        let cancel = ctx.cancel.clone();
        let started = std::time::Instant::now();
        let (text, filenames, truncated) = tokio::task::spawn_blocking(move || {
            let hide = |path: &Path| SearchFilter::hides(&ctx, "Glob", path);
            let found = match Dir::open(&judged) {
                Ok(root) => walk(&plan, &root, max, &cancel, &hide),
                // A base below the search directory that does not exist
                // (`nothing/**/*.rs`) matches nothing, as before.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Matches::none(),
                Err(e) => {
                    return Err(ToolError::new(format!(
                        "Cannot read the directory {}: {e}.",
                        plan.base.display()
                    )))
                }
            };
            Ok(render(found, &input, &plan, max))
        })
        .await
        .map_err(|e| ToolError::new(format!("The file search failed: {e}")))??;
        // Claude Code's `tool_response` for Glob (sdk-tools.d.ts `GlobOutput`).
        let response = serde_json::json!({
            "filenames": filenames,
            "numFiles": filenames.len(),
            "truncated": truncated,
            "durationMs": started.elapsed().as_millis() as u64,
        });
        Ok(ToolOutput::text(text).with_response(response))
    }
}

#[cfg(test)]
mod tests;
