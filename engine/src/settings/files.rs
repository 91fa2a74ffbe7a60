//! Which settings files a session reads, in which order: the one list
//! every loader uses (the merged settings here, the MCP loader's enable
//! keys in `baton-mcp`), so they can never disagree on a file.

use std::path::{Path, PathBuf};

/// One settings file a session consults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsFile {
    /// Where it is (it may not exist).
    pub path: PathBuf,
    /// Whether its absence is an error: a file named explicitly
    /// (`--settings`) must exist; the standard ones need not.
    pub required: bool,
}

/// The settings files for a session in `project_dir`, lowest precedence
/// first: `~/.claude/settings.json` (user, when `home` is known),
/// `<project>/.claude/settings.json`, `<project>/.claude/settings.local.json`,
/// then `explicit`. When two entries are one file (the project is the home
/// directory), it is listed once.
pub fn settings_files(
    project_dir: &Path,
    home: Option<&Path>,
    explicit: Option<&Path>,
) -> Vec<SettingsFile> {
    let mut candidates: Vec<SettingsFile> = Vec::new();
    let mut add = |path: PathBuf, required: bool| candidates.push(SettingsFile { path, required });
    if let Some(home) = home {
        add(home.join(".claude/settings.json"), false);
    }
    add(project_dir.join(".claude/settings.json"), false);
    add(project_dir.join(".claude/settings.local.json"), false);
    if let Some(explicit) = explicit {
        add(explicit.to_path_buf(), true);
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    candidates.retain(|file| {
        let identity = file
            .path
            .canonicalize()
            .unwrap_or_else(|_| file.path.clone());
        let new = !seen.contains(&identity);
        seen.push(identity);
        new
    });
    candidates
}

/// Every file of [`settings_files`] that exists or is required, with its
/// text or why it could not be read.
pub(super) fn read_all(
    project_dir: &Path,
    home: Option<&Path>,
    explicit: Option<&Path>,
) -> Vec<(PathBuf, Result<String, String>)> {
    let mut out = Vec::new();
    for file in settings_files(project_dir, home, explicit) {
        match std::fs::read_to_string(&file.path) {
            Ok(text) => out.push((file.path, Ok(text))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !file.required => {}
            Err(e) => out.push((file.path, Err(format!("cannot read the file: {e}")))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_user_project_local_explicit() {
        let home = Path::new("/nonexistent-home");
        let project = Path::new("/nonexistent-project");
        let files = settings_files(project, Some(home), Some(Path::new("/x/extra.json")));
        let paths: Vec<_> = files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                PathBuf::from("/nonexistent-home/.claude/settings.json"),
                PathBuf::from("/nonexistent-project/.claude/settings.json"),
                PathBuf::from("/nonexistent-project/.claude/settings.local.json"),
                PathBuf::from("/x/extra.json"),
            ]
        );
        assert!(files[3].required && !files[0].required);
    }

    #[test]
    fn a_project_in_the_home_directory_reads_its_file_once() {
        let dir = std::env::temp_dir();
        let files = settings_files(&dir, Some(&dir), None);
        assert_eq!(files.len(), 2, "{files:?}");
    }
}
