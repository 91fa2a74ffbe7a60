//! Glob patterns of the sandbox lists as concrete paths: a kernel rule or a
//! mount needs an inode, not a pattern.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

/// How far one expansion walks, so that a pattern over a huge tree cannot
/// make every command slow to start.
const MAX_ENTRIES: usize = 20_000;
const MAX_DEPTH: usize = 12;

/// The existing paths matching any of `globs` (absolute patterns). A
/// matching directory is listed, not its contents. Patterns that do not
/// compile match nothing (the settings loader reported them).
pub(crate) fn expand(globs: &[String]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for pattern in globs {
        let Ok(glob) = GlobBuilder::new(pattern).literal_separator(true).build() else {
            continue;
        };
        let matcher = glob.compile_matcher();
        let base = fixed_prefix(pattern);
        let mut budget = MAX_ENTRIES;
        walk(&base, 0, &|p| matcher.is_match(p), &mut budget, &mut found);
    }
    found.sort();
    found.dedup();
    found
}

/// The directory part of `pattern` before its first glob character.
fn fixed_prefix(pattern: &str) -> PathBuf {
    let cut = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let head = &pattern[..cut];
    match head.rfind('/') {
        Some(0) | None => PathBuf::from("/"),
        Some(i) => PathBuf::from(&head[..i]),
    }
}

fn walk(
    dir: &Path,
    depth: usize,
    matches: &dyn Fn(&Path) -> bool,
    budget: &mut usize,
    found: &mut Vec<PathBuf>,
) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if matches(&path) {
            found.push(path);
        } else if kind.is_dir() {
            walk(&path, depth + 1, matches, budget, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_patterns_below_their_fixed_part() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/.env"), "").unwrap();
        std::fs::write(root.join("a/b/.env.local"), "").unwrap();
        std::fs::write(root.join("a/b/keep"), "").unwrap();
        let found = expand(&[format!("{}/**/.env*", root.display())]);
        assert_eq!(
            found,
            vec![root.join("a/.env"), root.join("a/b/.env.local")]
        );
        assert_eq!(fixed_prefix("/x/y*/z"), PathBuf::from("/x"));
        assert_eq!(fixed_prefix("/*.txt"), PathBuf::from("/"));
    }
}
