//! The message for a path that does not exist.
//!
//! Models often get a file name almost right (wrong extension, wrong case, a
//! typo, a singular for a plural). Naming the close matches in the same
//! directory turns a dead end into a one-step fix.

use std::path::Path;

use similar::TextDiff;

use super::open::Dir;

/// Directory entries looked at; a huge directory is not listed in full.
const MAX_ENTRIES: usize = 5_000;
const MAX_SUGGESTIONS: usize = 3;

/// "does not exist" text for `real`, with suggestions when there are any.
pub(super) fn not_found(shown: &str, real: &Path, cwd: &Path) -> String {
    let mut text = format!("File does not exist: {shown}.");
    let Some(dir) = real.parent() else {
        return text;
    };
    // Listed through a handle opened without following links, like the
    // file itself: the names suggested are those of the judged directory.
    let Ok(handle) = Dir::open(dir) else {
        text.push_str(&format!(
            " Its directory {} does not exist either.",
            dir.display()
        ));
        text.push_str(&format!(" The working directory is {}.", cwd.display()));
        return text;
    };
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let close = close_names(&handle, &name);
    if close.is_empty() {
        text.push_str(&format!(
            " No similar name in {}. The working directory is {}; use Glob to search for the file.",
            dir.display(),
            cwd.display()
        ));
    } else {
        let list: Vec<String> = close
            .iter()
            .map(|n| dir.join(n).display().to_string())
            .collect();
        text.push_str(&format!(" Did you mean {}?", list.join(" or ")));
    }
    text
}

/// Names in `dir` that look like `name`, best first.
pub(super) fn close_names(dir: &Dir, name: &str) -> Vec<String> {
    let Ok(entries) = dir.names(MAX_ENTRIES) else {
        return Vec::new();
    };
    let wanted_lower = name.to_lowercase();
    let wanted_stem = stem(&wanted_lower);
    let mut scored: Vec<(f32, String)> = entries
        .into_iter()
        .filter_map(|name| name.into_string().ok())
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let score = if lower == wanted_lower {
                2.0
            } else if !wanted_stem.is_empty() && stem(&lower) == wanted_stem {
                1.5
            } else {
                TextDiff::from_chars(wanted_lower.as_str(), lower.as_str()).ratio()
            };
            (score >= 0.75).then_some((score, candidate))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, n)| n)
        .collect()
}

fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_case_extension_and_typo_matches() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = Dir::open(&root).unwrap();
        for n in ["README.md", "config.yaml", "main.rs", "unrelated.txt"] {
            std::fs::write(root.join(n), "x").unwrap();
        }
        assert_eq!(close_names(&dir, "readme.md"), vec!["README.md"]);
        assert_eq!(close_names(&dir, "config.yml"), vec!["config.yaml"]);
        assert_eq!(close_names(&dir, "mian.rs"), vec!["main.rs"]);
        assert!(close_names(&dir, "zzzz.go").is_empty());
        let text = not_found("/x/mian.rs", &root.join("mian.rs"), &root);
        assert!(
            text.contains("Did you mean") && text.contains("main.rs"),
            "{text}"
        );
    }
}
