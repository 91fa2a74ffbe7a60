//! Applying parsed file operations: every new content is computed first,
//! then written; a failure while writing restores what was already written,
//! so a patch applies entirely or not at all.
//!
//! Paths here are judged ones; reads and removals go through
//! [`crate::files::open`], so no link that appeared on a path after it was
//! judged is followed.

use std::path::{Path, PathBuf};

use super::parse::{FileOp, Hunk};
use crate::files::open;

/// What the patch does to one real path.
#[derive(Debug)]
pub(crate) struct Planned {
    pub path: PathBuf,
    /// `None` removes the file.
    pub content: Option<String>,
    /// What the file held before (`None`: it did not exist), to undo.
    pub before: Option<Vec<u8>>,
    pub verb: &'static str,
}

/// Resolves a patch path to the real file (the caller's rule for relative
/// paths and symlinks).
pub(crate) type Resolve<'a> = &'a dyn Fn(&str) -> PathBuf;

/// Computes every change without touching the disk.
pub(crate) fn plan(ops: &[FileOp], resolve: Resolve<'_>) -> Result<Vec<Planned>, String> {
    let mut planned: Vec<Planned> = Vec::new();
    for op in ops {
        let path = resolve(op.path());
        if planned.iter().any(|p| p.path == path) {
            return Err(format!(
                "{} is named twice in the patch; put all its changes in one section",
                op.path()
            ));
        }
        let before = read(&path, op.path())?;
        match op {
            FileOp::Add { content, .. } => {
                if before.is_some() {
                    return Err(format!(
                        "cannot add {}: it already exists (use `*** Update File:`)",
                        op.path()
                    ));
                }
                planned.push(Planned {
                    path,
                    content: Some(content.clone()),
                    before,
                    verb: "added",
                });
            }
            FileOp::Delete { .. } => {
                if before.is_none() {
                    return Err(format!("cannot delete {}: it does not exist", op.path()));
                }
                planned.push(Planned {
                    path,
                    content: None,
                    before,
                    verb: "deleted",
                });
            }
            FileOp::Update { hunks, move_to, .. } => {
                let Some(bytes) = &before else {
                    return Err(format!("cannot update {}: it does not exist", op.path()));
                };
                let text = String::from_utf8(bytes.clone())
                    .map_err(|_| format!("cannot update {}: it is not UTF-8 text", op.path()))?;
                let new = apply_hunks(&text, hunks).map_err(|e| format!("{}: {e}", op.path()))?;
                match move_to {
                    None => planned.push(Planned {
                        path,
                        content: Some(new),
                        before,
                        verb: "updated",
                    }),
                    Some(to) => {
                        let dest = resolve(to);
                        if dest != path && read(&dest, to)?.is_some() {
                            return Err(format!("cannot move {} to {to}: it exists", op.path()));
                        }
                        if planned.iter().any(|p| p.path == dest) {
                            return Err(format!("{to} is named twice in the patch"));
                        }
                        planned.push(Planned {
                            path: path.clone(),
                            content: None,
                            before,
                            verb: "moved",
                        });
                        planned.push(Planned {
                            path: dest,
                            content: Some(new),
                            before: None,
                            verb: "written",
                        });
                    }
                }
            }
        }
    }
    Ok(planned)
}

fn read(path: &Path, shown: &str) -> Result<Option<Vec<u8>>, String> {
    open::read(path).map_err(|e| format!("cannot read {shown}: {e}"))
}

/// Writes the plan; on the first failure, restores every file already
/// changed and reports the failure.
pub(crate) fn commit(
    planned: &[Planned],
    write: &dyn Fn(&Path, &[u8]) -> std::io::Result<()>,
) -> Result<(), String> {
    for (done, p) in planned.iter().enumerate() {
        let outcome = match &p.content {
            Some(c) => write(&p.path, c.as_bytes()),
            None => open::remove_file(&p.path),
        };
        if let Err(e) = outcome {
            let undo = rollback(&planned[..done], write);
            return Err(format!(
                "cannot change {}: {e}; nothing was changed{undo}",
                p.path.display()
            ));
        }
    }
    Ok(())
}

fn rollback(done: &[Planned], write: &dyn Fn(&Path, &[u8]) -> std::io::Result<()>) -> String {
    let mut failed = Vec::new();
    for p in done.iter().rev() {
        let outcome = match &p.before {
            Some(bytes) => write(&p.path, bytes),
            None => open::remove_file(&p.path),
        };
        if outcome.is_err() {
            failed.push(p.path.display().to_string());
        }
    }
    if failed.is_empty() {
        String::new()
    } else {
        format!(" (except: could not restore {})", failed.join(", "))
    }
}

/// The file's new text after every hunk, in order. Lines are matched
/// exactly first, then ignoring trailing whitespace, then ignoring
/// surrounding whitespace (models get indentation of blank-ish lines wrong).
pub(crate) fn apply_hunks(text: &str, hunks: &[Hunk]) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut pos = 0;
    for (n, h) in hunks.iter().enumerate() {
        let which = || format!("hunk {}", n + 1);
        if let Some(anchor) = &h.anchor {
            let found = find(&lines, std::slice::from_ref(anchor), pos, false)
                .ok_or_else(|| format!("{}: the `@@ {anchor}` line was not found", which()))?;
            pos = found + 1;
        }
        let at = if h.old.is_empty() {
            // Pure insertion: at the anchor, or at the end of the file.
            if h.anchor.is_some() {
                pos
            } else {
                lines.len()
            }
        } else {
            find(&lines, &h.old, pos, h.at_end).ok_or_else(|| {
                format!(
                    "{}: these lines were not found{}:\n{}",
                    which(),
                    if pos > 0 {
                        " after the previous hunk"
                    } else {
                        ""
                    },
                    h.old.join("\n")
                )
            })?
        };
        lines.splice(at..at + h.old.len(), h.new.iter().cloned());
        pos = at + h.new.len();
    }
    let mut out = lines.join("\n");
    if !lines.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

fn find(lines: &[String], want: &[String], from: usize, at_end: bool) -> Option<usize> {
    let norms: [fn(&str) -> &str; 3] = [|s| s, str::trim_end, str::trim];
    for norm in norms {
        if at_end {
            let start = lines.len().checked_sub(want.len())?;
            if start >= from && matches(&lines[start..], want, norm) {
                return Some(start);
            }
            continue;
        }
        let last = lines.len().checked_sub(want.len())?;
        if let Some(i) = (from..=last).find(|&i| matches(&lines[i..i + want.len()], want, norm)) {
            return Some(i);
        }
    }
    None
}

fn matches(have: &[String], want: &[String], norm: fn(&str) -> &str) -> bool {
    have.iter().zip(want).all(|(a, b)| norm(a) == norm(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply_patch::parse::parse;

    fn hunks_of(patch: &str) -> Vec<Hunk> {
        match parse(patch).unwrap().remove(0) {
            FileOp::Update { hunks, .. } => hunks,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hunks_apply_in_order_with_anchors_and_loose_whitespace() {
        let text = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        let hunks = hunks_of(
            "*** Begin Patch\n*** Update File: f\n@@ fn b() {\n-    x();  \n+    y();\n*** End Patch",
        );
        assert_eq!(
            apply_hunks(text, &hunks).unwrap(),
            "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n"
        );
    }

    #[test]
    fn a_missing_context_is_an_error_naming_the_hunk() {
        let hunks = hunks_of(
            "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n@@\n-zzz\n+c\n*** End Patch",
        );
        let e = apply_hunks("a\nq\n", &hunks).unwrap_err();
        assert!(e.contains("hunk 2") && e.contains("zzz"), "{e}");
    }

    #[test]
    fn end_of_file_hunks_match_only_the_end() {
        let hunks = hunks_of(
            "*** Begin Patch\n*** Update File: f\n@@\n-x\n+y\n*** End of File\n*** End Patch",
        );
        assert_eq!(apply_hunks("x\nm\nx\n", &hunks).unwrap(), "x\nm\ny\n");
        assert!(apply_hunks("x\nm\n", &hunks).is_err());
    }
}
