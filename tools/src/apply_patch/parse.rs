//! Codex's patch language, read into file operations.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (then every line starts with `+`)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional, right after Update File)
//! @@ optional anchor line   (starts a hunk; the first hunk may omit it)
//!  context / -removed / +added lines
//! *** End of File           (optional: the hunk ends at the file's end)
//! *** End Patch
//! ```
//!
//! Errors name the line (1-based, in the patch) and say what was expected,
//! because the reader is a model that has to write the patch again.

/// One file operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FileOp {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation names first (the source of a move).
    pub(crate) fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One `@@` hunk of an update: `old` lines (context and removals, in order)
/// are replaced by `new` lines (context and additions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// The text after `@@ `: a line to find before looking for `old`.
    pub anchor: Option<String>,
    pub old: Vec<String>,
    pub new: Vec<String>,
    /// `*** End of File` followed: `old` must end the file.
    pub at_end: bool,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

/// A patch that could not be read: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(line: usize, reason: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        reason: reason.into(),
    })
}

/// Reads a whole patch. Models often wrap it in a heredoc
/// (`apply_patch <<'EOF'` … `EOF`); that wrapping is taken off first.
pub(crate) fn parse(text: &str) -> Result<Vec<FileOp>, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = body_bounds(&lines)?;
    let mut ops = Vec::new();
    let mut i = start;
    while i < end {
        let line = lines[i];
        let n = i + 1;
        if let Some(path) = line.strip_prefix(ADD) {
            let path = path_of(path, n)?;
            i += 1;
            let mut content = String::new();
            while i < end && !lines[i].starts_with("*** ") {
                match lines[i].strip_prefix('+') {
                    Some(rest) => {
                        content.push_str(rest);
                        content.push('\n');
                    }
                    None => {
                        return err(
                            i + 1,
                            format!(
                                "every line of an added file starts with `+`; got {:?}",
                                lines[i]
                            ),
                        )
                    }
                }
                i += 1;
            }
            ops.push(FileOp::Add { path, content });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            ops.push(FileOp::Delete {
                path: path_of(path, n)?,
            });
            i += 1;
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            let path = path_of(path, n)?;
            i += 1;
            let mut move_to = None;
            if i < end {
                if let Some(to) = lines[i].strip_prefix(MOVE) {
                    move_to = Some(path_of(to, i + 1)?);
                    i += 1;
                }
            }
            let (hunks, next) = hunks(&lines, i, end)?;
            if hunks.is_empty() && move_to.is_none() {
                return err(n, format!("`{UPDATE}{path}` has no hunks"));
            }
            i = next;
            ops.push(FileOp::Update {
                path,
                move_to,
                hunks,
            });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return err(
                n,
                format!(
                    "expected `{ADD}`, `{DELETE}` or `{UPDATE}` followed by a path; got {line:?}"
                ),
            );
        }
    }
    if ops.is_empty() {
        return err(start, "the patch changes no file");
    }
    Ok(ops)
}

/// The lines between `*** Begin Patch` and `*** End Patch` (exclusive).
fn body_bounds(lines: &[&str]) -> Result<(usize, usize), ParseError> {
    let is = |l: &str, mark: &str| l.trim() == mark;
    let Some(begin) = lines.iter().position(|l| is(l, BEGIN)) else {
        return err(1, format!("the patch must start with `{BEGIN}`"));
    };
    // Only a heredoc opener may come before the marker.
    if let Some(extra) = lines[..begin]
        .iter()
        .position(|l| !l.trim().is_empty() && !l.contains("<<"))
    {
        return err(extra + 1, format!("text before `{BEGIN}`"));
    }
    let Some(end) = lines.iter().rposition(|l| is(l, END)) else {
        return err(lines.len(), format!("the patch must end with `{END}`"));
    };
    if end < begin {
        return err(end + 1, format!("`{END}` comes before `{BEGIN}`"));
    }
    Ok((begin + 1, end))
}

fn path_of(raw: &str, line: usize) -> Result<String, ParseError> {
    let path = raw.trim();
    if path.is_empty() {
        return err(line, "the path is empty");
    }
    if path.contains('\0') {
        return err(line, "the path contains a NUL byte");
    }
    Ok(path.to_string())
}

/// The hunks of one Update File section, from line `i`; returns them and
/// the index of the first line after the section.
fn hunks(lines: &[&str], mut i: usize, end: usize) -> Result<(Vec<Hunk>, usize), ParseError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<Hunk> = None;
    while i < end {
        let line = lines[i];
        if line == EOF_MARK || line.trim_end() == EOF_MARK {
            let Some(h) = current.as_mut() else {
                return err(i + 1, format!("`{EOF_MARK}` outside a hunk"));
            };
            h.at_end = true;
            i += 1;
            continue;
        }
        if line.starts_with("*** ") {
            break;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            if let Some(h) = current.take() {
                hunks.push(checked(h, i)?);
            }
            let anchor = rest.trim();
            current = Some(Hunk {
                anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                ..Hunk::default()
            });
            i += 1;
            continue;
        }
        let h = current.get_or_insert_with(Hunk::default);
        if h.at_end {
            return err(i + 1, format!("a line after `{EOF_MARK}` in the same hunk"));
        }
        match line.chars().next() {
            Some(' ') => {
                h.old.push(line[1..].to_string());
                h.new.push(line[1..].to_string());
            }
            Some('-') => h.old.push(line[1..].to_string()),
            Some('+') => h.new.push(line[1..].to_string()),
            // An empty line inside a hunk is an empty context line (models
            // drop the leading space of blank lines).
            None => {
                h.old.push(String::new());
                h.new.push(String::new());
            }
            Some(_) => {
                return err(
                    i + 1,
                    format!(
                        "a hunk line starts with ` ` (context), `-` (removed) or `+` (added); got {line:?}"
                    ),
                )
            }
        }
        i += 1;
    }
    if let Some(h) = current.take() {
        hunks.push(checked(h, i)?);
    }
    Ok((hunks, i))
}

fn checked(h: Hunk, line: usize) -> Result<Hunk, ParseError> {
    if h.old.is_empty() && h.new.is_empty() {
        return err(line, "an empty hunk (no context, removed or added lines)");
    }
    if h.old == h.new {
        return err(line, "a hunk that changes nothing (only context lines)");
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_operation() {
        let ops = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n\
             *** Update File: c.txt\n*** Move to: d.txt\n@@ fn main\n ctx\n-old\n+new\n\
             *** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(
            ops[0],
            FileOp::Add {
                path: "a.txt".into(),
                content: "one\ntwo\n".into()
            }
        );
        let FileOp::Update { move_to, hunks, .. } = &ops[2] else {
            panic!("{ops:?}")
        };
        assert_eq!(move_to.as_deref(), Some("d.txt"));
        assert_eq!(hunks[0].anchor.as_deref(), Some("fn main"));
        assert_eq!(hunks[0].old, ["ctx", "old"]);
        assert_eq!(hunks[0].new, ["ctx", "new"]);
        assert!(hunks[0].at_end);
    }

    #[test]
    fn bad_patches_name_the_line() {
        let cases = [
            ("*** Add File: a\n+x\n*** End Patch", 1, "must start"),
            ("*** Begin Patch\n*** Add File: a\n+x", 3, "must end"),
            (
                "*** Begin Patch\n*** Add File: a\nx\n*** End Patch",
                3,
                "starts with `+`",
            ),
            (
                "*** Begin Patch\n*** Frob File: a\n*** End Patch",
                2,
                "expected",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n*x\n*** End Patch",
                4,
                "hunk line",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n*** End Patch",
                2,
                "no hunks",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n same\n*** End Patch",
                4,
                "changes nothing",
            ),
            ("*** Begin Patch\n*** End Patch", 1, "no file"),
            (
                "*** Begin Patch\n*** Delete File:  \n*** End Patch",
                2,
                "empty",
            ),
        ];
        for (text, line, words) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.reason.contains(words), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_heredoc_wrapper_is_taken_off() {
        let ops =
            parse("apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n")
                .unwrap();
        assert_eq!(ops, [FileOp::Delete { path: "x".into() }]);
    }
}
