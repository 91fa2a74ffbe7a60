//! The files `Read(…)` deny rules cover, as concrete paths for the OS
//! sandbox: a kernel rule needs an inode, not a pattern.

use std::path::{Path, PathBuf};

use super::paths::PathPattern;
use super::policy::RulePolicy;
use super::rules::{RuleKind, Specifier};

/// How far a search for covered files goes, so that a huge workspace
/// cannot make every command slow to start. Past it, nothing more is
/// carved out (the classifier's own check of Bash reads still applies).
const MAX_ENTRIES: usize = 20_000;
const MAX_DEPTH: usize = 12;

impl RulePolicy {
    /// Whether any `Read(…)` deny rule names paths.
    pub fn has_read_denies(&self) -> bool {
        !self.read_deny_patterns().is_empty()
    }

    fn read_deny_patterns(&self) -> Vec<&PathPattern> {
        self.rules(RuleKind::Deny)
            .iter()
            .filter(|rule| rule.tool.exact() == Some("Read"))
            .filter_map(|rule| match &rule.spec {
                Some(Specifier::Path(p)) => Some(p),
                _ => None,
            })
            .collect()
    }

    /// The existing files and directories inside `trees` that a `Read(…)`
    /// deny rule covers (a covered directory is listed, not its contents).
    /// `working_dir` anchors relative patterns, as for the rules
    /// themselves.
    pub fn read_denied_paths(&self, trees: &[PathBuf], working_dir: &Path) -> Vec<PathBuf> {
        let patterns = self.read_deny_patterns();
        if patterns.is_empty() {
            return Vec::new();
        }
        let covered = |path: &Path| {
            patterns.iter().any(|p| {
                let base = match p.base() {
                    super::paths::Base::Fixed(dir) => dir.as_path(),
                    super::paths::Base::WorkingDir => working_dir,
                };
                p.matches_at(path, base)
            })
        };
        let mut found = Vec::new();
        let mut budget = MAX_ENTRIES;
        for tree in trees {
            if covered(tree) {
                found.push(tree.clone());
                continue;
            }
            walk(tree, 0, &covered, &mut budget, &mut found);
        }
        found
    }
}

fn walk(
    dir: &Path,
    depth: usize,
    covered: &dyn Fn(&Path) -> bool,
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
        if covered(&path) {
            found.push(path);
        } else if kind.is_dir() {
            walk(&path, depth + 1, covered, budget, found);
        }
    }
}
