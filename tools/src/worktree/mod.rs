//! `EnterWorktree` and `ExitWorktree`: the session moves into a git
//! worktree and back.
//!
//! EnterWorktree with a `name` (or none: one is made up) runs a real
//! `git worktree add` under `<repo>/.claude/worktrees/<name>` on branch
//! `worktree-<name>` from the current HEAD, as Claude Code does ("/" in a
//! name becomes "+"); a worktree of that name that already exists is
//! resumed. With `path` it switches into an existing worktree, which must
//! be one `git worktree list` gives for this repository. Either way the
//! working directory and the write access of the root the session worked
//! in move there, through a context modifier of a call that runs alone:
//! later calls of the same message, permission path checks and hook
//! inputs (`cwd`) all see the new directory, in call order.
//!
//! ExitWorktree goes back. `remove` deletes a worktree EnterWorktree made
//! (and its branch), but refuses, listing them, while it has uncommitted
//! files or commits the original branch lacks, unless `discard_changes`.
//! Schemas are Claude Code's (`sdk-tools.d.ts`).

mod name;
pub(crate) mod state;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use baton_engine::{
    async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput, ToolPermission,
    WorkKind,
};
use serde_json::{json, Value};

use state::Entered;

use crate::git::{self, Writes};

const ENTER_DESCRIPTION: &str = "Creates an isolated git worktree (a separate working copy on \
a new branch, under .claude/worktrees/) and switches the session into it, or, with `path`, \
switches into an existing worktree of this repository. Use it only when the user or the \
project's instructions ask for work in a worktree. Afterwards relative paths, commands and \
file permissions apply to the worktree. Use ExitWorktree to return to the original directory \
(keeping or removing the worktree).";

const EXIT_DESCRIPTION: &str = "Leaves the worktree session started by EnterWorktree and \
returns the session to its original working directory. `action: \"keep\"` leaves the worktree \
and its branch on disk; `action: \"remove\"` deletes a worktree that EnterWorktree created, and \
its branch. Removal is refused, listing what would be lost, while the worktree has uncommitted \
files or commits that are not on the original branch, unless `discard_changes` is true: confirm \
with the user before setting it. A worktree entered with `path` is never removed.";

/// `EnterWorktree` and `ExitWorktree`: moving the session into a new git
/// worktree, and leaving it (kept or removed).
pub fn tools() -> Result<Vec<Tool>, baton_engine::schema::InvalidSchema> {
    let enter = ToolDef::new("EnterWorktree", ENTER_DESCRIPTION)
        .search_hint("isolated git worktree switch into it")
        .should_defer(true)
        .work_kind(WorkKind::Wait);
    let exit = ToolDef::new("ExitWorktree", EXIT_DESCRIPTION)
        .search_hint("leave the worktree session keep or remove")
        .should_defer(true)
        .work_kind(WorkKind::Wait);
    Ok(vec![
        Tool::raw(enter, enter_schema(), EnterWorktree)?,
        Tool::raw(exit, exit_schema(), ExitWorktree)?,
    ])
}

/// `EnterWorktreeInput`.
fn enter_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Optional name for a new worktree. Each \"/\"-separated segment may contain only letters, digits, dots, underscores, and dashes; max 64 chars total. A random name is generated if not provided. Mutually exclusive with `path`."},
            "path": {"type": "string", "description": "Path to an existing worktree to switch into instead of creating a new one. Must appear in `git worktree list` for the current repo. Mutually exclusive with `name`."}
        },
        "additionalProperties": false
    })
}

/// `ExitWorktreeInput`.
fn exit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["keep", "remove"], "description": "\"keep\" leaves the worktree and branch on disk; \"remove\" deletes the worktree and, unless git refuses, its branch."},
            "discard_changes": {"type": "boolean", "description": "Required true when action is \"remove\" and the worktree has uncommitted files or unmerged commits. The tool will refuse and list them otherwise, so set it only after the user has confirmed."}
        },
        "required": ["action"],
        "additionalProperties": false
    })
}

fn text<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

struct EnterWorktree;

/// An existing worktree `path` names, checked against the repository's
/// list: `(worktree, branch, managed)`, where `managed` means it lies
/// under the main worktree's `.claude/worktrees/`.
async fn listed_worktree(
    cwd: &Path,
    path: &str,
) -> Result<(PathBuf, Option<String>, bool), String> {
    let wanted = cwd.join(path);
    let real = std::fs::canonicalize(&wanted)
        .map_err(|e| format!("{} cannot be entered: {e}", wanted.display()))?;
    let listed = git::worktrees(cwd).await?;
    let managed_dir = listed
        .first()
        .and_then(|main| std::fs::canonicalize(&main.path).ok())
        .map(|main| main.join(".claude").join("worktrees"));
    for entry in listed.iter().filter(|e| !e.bare) {
        if std::fs::canonicalize(&entry.path).ok().as_deref() == Some(real.as_path()) {
            let managed = managed_dir
                .as_deref()
                .is_some_and(|dir| real.starts_with(dir) && real != dir);
            return Ok((real, entry.branch.clone(), managed));
        }
    }
    Err(format!(
        "{} is not a worktree of this repository (see `git worktree list`); EnterWorktree \
         with `path` only switches into one of those",
        wanted.display()
    ))
}

/// `refs/heads/<branch>` of the checkout at `dir`, or its commit.
async fn base_of(dir: &Path) -> Result<String, String> {
    match git::query(dir, &["symbolic-ref", "-q", "HEAD"]).await {
        Ok(r) if r.trim().starts_with("refs/heads/") => Ok(r.trim().to_string()),
        _ => git::query(dir, &["rev-parse", "--verify", "HEAD^{commit}"])
            .await
            .map(|c| c.trim().to_string())
            .map_err(|e| format!("the repository has no commit to start a worktree from ({e})")),
    }
}

/// Refuses `.claude`, `.claude/worktrees` or the worktree's directory
/// when one is a symlink: a committed link there could send the worktree
/// (and the session's write access) anywhere.
fn refuse_links(top: &Path, slug: &str) -> Result<(), String> {
    let claude = top.join(".claude");
    let worktrees = claude.join("worktrees");
    for dir in [&claude, &worktrees, &worktrees.join(slug)] {
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "no worktree was made: {} is a symlink, which could lead the worktree outside \
                 the repository; remove it and try again",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// Makes (or resumes) the worktree `name` of the repository at `cwd`.
async fn create(cwd: &Path, name: &str) -> Result<(PathBuf, Option<String>, bool), String> {
    let slug = name::slug(name)?;
    let top = git::toplevel(cwd).await?;
    refuse_links(&top, &slug)?;
    let dir = top.join(".claude").join("worktrees").join(&slug);
    let branch = format!("worktree-{slug}");
    if dir.exists() {
        let target = dir.to_string_lossy().to_string();
        let (real, listed_branch, _) = listed_worktree(cwd, &target).await.map_err(|_| {
            format!(
                "{} exists but is not a worktree of this repository; pick another name",
                dir.display()
            )
        })?;
        return Ok((real, listed_branch, true));
    }
    let base = base_of(&top).await?;
    let target = dir.to_string_lossy().to_string();
    let exists = git::query(
        &top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .await
    .is_ok();
    if exists {
        git::git(
            &top,
            &["worktree", "add", "--quiet", &target, &branch],
            Writes::GitDirAnd(&dir),
        )
        .await?;
    } else {
        git::git(
            &top,
            &["worktree", "add", "--quiet", "-b", &branch, &target, &base],
            Writes::GitDirAnd(&dir),
        )
        .await?;
    }
    let real = std::fs::canonicalize(&dir)
        .map_err(|e| format!("the new worktree {} cannot be resolved: {e}", dir.display()))?;
    Ok((real, Some(branch), false))
}

#[async_trait]
impl ToolLogic<Value> for EnterWorktree {
    // Not concurrency-safe (the default): it changes the working
    // directory, and only a call that runs alone may.

    fn label(&self, input: &Value) -> Option<String> {
        let what = text(input, "path").or(text(input, "name")).unwrap_or("");
        Some(format!("EnterWorktree({what})"))
    }

    async fn validate_input(&self, input: &Value, ctx: &ToolContext) -> Result<(), String> {
        match (text(input, "name"), text(input, "path")) {
            (Some(_), Some(_)) => Err("Provide at most one of `name` or `path`, not both.".into()),
            (Some(name), None) => name::slug(name).map(|_| ()),
            (None, Some(path)) if path.trim().is_empty() => Err("`path` is empty".into()),
            (None, Some(_)) => Ok(()),
            (None, None) => Ok(()),
        }?;
        if text(input, "path").is_none() && state::current(&ctx.context).is_some() {
            return Err(
                "Already in a worktree session. Pass `path` to switch into another \
                        existing worktree, or use ExitWorktree to leave this one before \
                        creating a new worktree."
                    .into(),
            );
        }
        Ok(())
    }

    /// A new worktree of the repository is allowed (as in Claude Code);
    /// switching into an existing one outside `.claude/worktrees/` moves
    /// write access somewhere the user did not pick, so it asks.
    async fn check_permissions(&self, input: &Value, ctx: &ToolContext) -> ToolPermission {
        let Some(path) = text(input, "path") else {
            return ToolPermission::Allow;
        };
        match listed_worktree(ctx.cwd(), path).await {
            Ok((_, _, true)) => ToolPermission::Allow,
            Ok((real, _, false)) => ToolPermission::Ask(format!(
                "enter the worktree at {}? This moves the session's working directory and \
                 write access there",
                real.display()
            )),
            // The call itself reports why; nothing is allowed meanwhile.
            Err(e) => ToolPermission::Deny(e),
        }
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let previous = state::current(&ctx.context);
        let (path, branch, created, verb) = match text(&input, "path") {
            Some(path) => match listed_worktree(ctx.cwd(), path).await {
                Ok((real, branch, _)) => (real, branch, false, "Entered"),
                Err(e) => return Ok(ToolOutput::error(e)),
            },
            None => {
                let name = text(&input, "name").map_or_else(name::generated, str::to_string);
                match create(ctx.cwd(), &name).await {
                    Ok((real, branch, resumed)) => (
                        real,
                        branch,
                        true,
                        if resumed { "Resumed" } else { "Created" },
                    ),
                    Err(e) => return Ok(ToolOutput::error(e)),
                }
            }
        };
        let (original_cwd, original_roots, base) = match &previous {
            Some(p) => (
                p.original_cwd.clone(),
                p.original_roots.clone(),
                p.base.clone(),
            ),
            None => match base_of(ctx.cwd()).await {
                Ok(base) => (ctx.cwd().to_path_buf(), ctx.context.roots.clone(), base),
                Err(e) => return Ok(ToolOutput::error(e)),
            },
        };
        let on_branch = branch
            .as_deref()
            .map(|b| format!(" on branch {b}"))
            .unwrap_or_default();
        let message = format!(
            "{verb} worktree at {}{on_branch}. The session is now working in the worktree. Use \
             ExitWorktree to leave mid-session.",
            path.display()
        );
        let entered = Entered {
            original_cwd,
            original_roots,
            path: path.clone(),
            branch: branch.clone(),
            created,
            base,
        };
        Ok(ToolOutput::text(message.clone())
            .with_response(json!({
                "worktreePath": path.display().to_string(),
                "worktreeBranch": branch,
                "message": message,
            }))
            .with_modifier(state::enter(entered)))
    }
}

struct ExitWorktree;

#[async_trait]
impl ToolLogic<Value> for ExitWorktree {
    fn label(&self, input: &Value) -> Option<String> {
        Some(format!(
            "ExitWorktree({})",
            text(input, "action").unwrap_or("")
        ))
    }

    async fn validate_input(&self, _input: &Value, ctx: &ToolContext) -> Result<(), String> {
        match state::current(&ctx.context) {
            Some(_) => Ok(()),
            None => Err(
                "Not in a worktree session: ExitWorktree only leaves a worktree that \
                         EnterWorktree entered in this session."
                    .into(),
            ),
        }
    }

    /// Keeping, or removing work that is safe to remove, only undoes what
    /// EnterWorktree did; discarding changes deletes work, so the rules
    /// (and the user) decide.
    async fn check_permissions(&self, input: &Value, _ctx: &ToolContext) -> ToolPermission {
        if input.get("discard_changes") == Some(&Value::Bool(true))
            && text(input, "action") == Some("remove")
        {
            ToolPermission::Defer
        } else {
            ToolPermission::Allow
        }
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(entered) = state::current(&ctx.context) else {
            return Ok(ToolOutput::error("Not in a worktree session."));
        };
        let remove = text(&input, "action") == Some("remove");
        let discard = input.get("discard_changes") == Some(&Value::Bool(true));
        let mut response = json!({
            "action": if remove { "remove" } else { "keep" },
            "originalCwd": entered.original_cwd.display().to_string(),
            "worktreePath": entered.path.display().to_string(),
            "worktreeBranch": entered.branch,
        });
        let message = if remove {
            match remove_worktree(&entered, discard).await {
                Ok((files, commits)) => {
                    if discard {
                        response["discardedFiles"] = json!(files);
                        response["discardedCommits"] = json!(commits);
                    }
                    format!(
                        "Removed the worktree at {}{} and returned to {}.",
                        entered.path.display(),
                        entered
                            .branch
                            .as_deref()
                            .map(|b| format!(" and its branch {b}"))
                            .unwrap_or_default(),
                        entered.original_cwd.display()
                    )
                }
                Err(refusal) => return Ok(ToolOutput::error(refusal)),
            }
        } else {
            format!(
                "Left the worktree at {}{} on disk and returned to {}.",
                entered.path.display(),
                entered
                    .branch
                    .as_deref()
                    .map(|b| format!(" (branch {b})"))
                    .unwrap_or_default(),
                entered.original_cwd.display()
            )
        };
        response["message"] = json!(message);
        Ok(ToolOutput::text(message)
            .with_response(response)
            .with_modifier(state::leave(&entered)))
    }
}

/// Removes the worktree (and its branch), unless it holds work that would
/// be lost and `discard` is not set. Returns how many uncommitted files and
/// unmerged commits went with it.
async fn remove_worktree(entered: &Entered, discard: bool) -> Result<(usize, usize), String> {
    if !entered.created {
        return Err(format!(
            "{} was entered with `path`, so ExitWorktree will not remove it; use \
             `action: \"keep\"` to return to the original directory",
            entered.path.display()
        ));
    }
    let files = git::uncommitted(&entered.path).await;
    let commits = git::commits_not_on(&entered.path, &entered.base).await;
    let (files, commits) = match (files, commits) {
        (Ok(f), Ok(c)) => (f, c),
        // What would be lost cannot be told: fail closed.
        (Err(e), _) | (_, Err(e)) if !discard => {
            return Err(format!(
                "The worktree was not removed: its state cannot be told ({e}). Set \
                 discard_changes: true only after the user confirms."
            ))
        }
        (f, c) => (f.unwrap_or_default(), c.unwrap_or_default()),
    };
    if !discard && (!files.is_empty() || !commits.is_empty()) {
        let mut lines = vec![format!(
            "The worktree at {} was not removed, because it holds work that would be lost:",
            entered.path.display()
        )];
        if !files.is_empty() {
            lines.push(format!("{} uncommitted file(s):", files.len()));
            lines.extend(files.iter().take(50).map(|f| format!("  {f}")));
        }
        if !commits.is_empty() {
            let base = entered.base.trim_start_matches("refs/heads/");
            lines.push(format!("{} commit(s) not on {base}:", commits.len()));
            lines.extend(commits.iter().take(50).map(|c| format!("  {c}")));
        }
        lines.push(
            "Confirm with the user, then call ExitWorktree again with discard_changes: true \
             (or use action: \"keep\")."
                .into(),
        );
        return Err(lines.join("\n"));
    }
    let main = git::worktrees(&entered.path)
        .await?
        .into_iter()
        .next()
        .map(|w| w.path)
        .ok_or("git lists no main worktree")?;
    let target = entered.path.to_string_lossy().to_string();
    git::git(
        &main,
        &["worktree", "remove", "--force", &target],
        Writes::GitDirAnd(&entered.path),
    )
    .await?;
    if let Some(branch) = &entered.branch {
        // Git refuses to delete a branch checked out elsewhere; the
        // worktree is gone either way.
        let _ = git::git(&main, &["branch", "-D", branch], Writes::GitDir).await;
    }
    Ok((files.len(), commits.len()))
}
