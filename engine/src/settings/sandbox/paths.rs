//! Where the paths of a `sandbox.filesystem` list point.
//!
//! Sandbox paths are spelled differently from permission-rule paths, and
//! Claude Code documents the difference (sdk.d.ts, `credentials.files`:
//! "same resolution as sandbox.filesystem.* paths"):
//!
//! | written | sandbox list | permission rule (`Edit(…)`, `Read(…)`) |
//! |---|---|---|
//! | `/x` | absolute `/x` | `<project>/x` |
//! | `//x` | absolute `/x` (the older spelling) | absolute `/x` |
//! | `~/x` | `<home>/x` | `<home>/x` |
//! | `./x`, `x` | `<settings root>/x` | `x` below the working directory, at any depth when it has no inner `/` |
//!
//! The settings root is the project for project, local and `--settings`
//! files, and `~/.claude` for the user's file. Both forms end as a
//! [`SandboxPath`]: a concrete absolute path, or an absolute glob pattern
//! kept as a pattern (the sandbox decides how to apply it; expanding it
//! here would freeze the answer at load time).

use std::path::{Path, PathBuf};

use baton_tool::paths::normalize;

/// One resolved entry of a sandbox path list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SandboxPath {
    /// An absolute path, `..` folded, no glob characters. A directory
    /// stands for everything inside it (`dir/**` is written as `dir`).
    Exact(PathBuf),
    /// An absolute glob pattern (`*`, `?`, `[…]`, `{a,b}`, `**` across
    /// directories), as the user wrote it below its resolved base.
    Glob(String),
}

impl SandboxPath {
    /// The path, or the pattern's fixed part before its first glob
    /// character (a directory that holds every match).
    pub fn base(&self) -> PathBuf {
        match self {
            SandboxPath::Exact(p) => p.clone(),
            SandboxPath::Glob(g) => {
                let fixed = g.find(is_glob_char).map_or(g.as_str(), |i| &g[..i]);
                let dir = match fixed.rfind('/') {
                    Some(0) | None => "/",
                    Some(i) => &fixed[..i],
                };
                PathBuf::from(dir)
            }
        }
    }

    /// Whether `self` names `dir` or something inside it (for a glob: its
    /// fixed base does).
    pub fn is_within(&self, dir: &Path) -> bool {
        self.base().starts_with(dir)
    }
}

impl std::fmt::Display for SandboxPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SandboxPath::Exact(p) => write!(f, "{}", p.display()),
            SandboxPath::Glob(g) => f.write_str(g),
        }
    }
}

fn is_glob_char(c: char) -> bool {
    matches!(c, '*' | '?' | '[' | '{')
}

/// Resolves one entry of a `sandbox.filesystem` (or `credentials.files`)
/// list. `root` is the settings root of the file (see the module docs).
pub(crate) fn resolve_sandbox_path(
    text: &str,
    root: &Path,
    home: Option<&Path>,
) -> Result<SandboxPath, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty path".into());
    }
    let joined = if let Some(rest) = text.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if text.starts_with('/') {
        PathBuf::from(text)
    } else if text == "~" || text.starts_with("~/") {
        let home =
            home.ok_or_else(|| format!("`{text}` uses `~` but no home directory is known"))?;
        home.join(text.trim_start_matches('~').trim_start_matches('/'))
    } else if text.starts_with('~') {
        return Err(format!(
            "`{text}`: only `~/` (your own home) is supported, not `~user`"
        ));
    } else {
        root.join(text)
    };
    Ok(finish(&joined.to_string_lossy()))
}

/// Converts the path specifier of an `Edit(…)`/`Read(…)` rule (permission
/// spelling) to a sandbox path. `project` anchors `/x` and stands for the
/// working directory the rule's relative forms are judged against.
pub(crate) fn rule_path(spec: &str, project: &Path, home: Option<&Path>) -> Option<SandboxPath> {
    let spec = spec.trim();
    let joined = if let Some(rest) = spec.strip_prefix("//") {
        format!("/{rest}")
    } else if spec == "~" || spec.starts_with("~/") {
        let home = home?;
        home.join(spec.trim_start_matches('~').trim_start_matches('/'))
            .to_string_lossy()
            .into_owned()
    } else if let Some(rest) = spec.strip_prefix('/') {
        project.join(rest).to_string_lossy().into_owned()
    } else {
        let rest = spec.strip_prefix("./").unwrap_or(spec);
        if rest.is_empty() {
            return None;
        }
        // gitignore semantics: a name without an inner `/` matches at any
        // depth below the working directory.
        let inner = rest.trim_end_matches('/');
        if inner.contains('/') {
            project.join(rest).to_string_lossy().into_owned()
        } else {
            format!(
                "{}/**/{inner}",
                project.to_string_lossy().trim_end_matches('/')
            )
        }
    };
    Some(finish(&joined))
}

/// Folds `..` and `.`, drops a trailing `/**` or `/` (a directory means
/// everything in it), and sorts the result into exact path or pattern.
fn finish(joined: &str) -> SandboxPath {
    let mut text = joined.to_string();
    while let Some(stripped) = text.strip_suffix("/**").or_else(|| text.strip_suffix('/')) {
        if stripped.is_empty() {
            break;
        }
        text = stripped.to_string();
    }
    if text.is_empty() || text == "/**" {
        return SandboxPath::Exact(PathBuf::from("/"));
    }
    if text.contains(is_glob_char) {
        // Fold `..` only in the fixed part: inside a pattern it is text.
        let cut = text.find(is_glob_char).unwrap_or(text.len());
        let slash = text[..cut].rfind('/').unwrap_or(0);
        let base = normalize(Path::new(&text[..slash.max(1)]));
        let base = base.to_string_lossy();
        let sep = if base.ends_with('/') { "" } else { "/" };
        let rest = text[slash..].trim_start_matches('/');
        SandboxPath::Glob(format!("{base}{sep}{rest}"))
    } else {
        SandboxPath::Exact(normalize(Path::new(&text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(text: &str) -> Result<SandboxPath, String> {
        resolve_sandbox_path(text, Path::new("/proj"), Some(Path::new("/home/u")))
    }

    fn exact(p: &str) -> SandboxPath {
        SandboxPath::Exact(PathBuf::from(p))
    }

    #[test]
    fn sandbox_spellings() {
        assert_eq!(sandbox("/tmp/build"), Ok(exact("/tmp/build")));
        assert_eq!(sandbox("//tmp/build"), Ok(exact("/tmp/build")));
        assert_eq!(sandbox("~/.kube"), Ok(exact("/home/u/.kube")));
        assert_eq!(sandbox("~"), Ok(exact("/home/u")));
        assert_eq!(sandbox("./out"), Ok(exact("/proj/out")));
        assert_eq!(sandbox("out/"), Ok(exact("/proj/out")));
        assert_eq!(sandbox("out/**"), Ok(exact("/proj/out")));
        assert_eq!(sandbox("../shared"), Ok(exact("/shared")));
        assert_eq!(sandbox("/"), Ok(exact("/")));
        assert_eq!(
            sandbox("~/a/../*.pem"),
            Ok(SandboxPath::Glob("/home/u/*.pem".into()))
        );
        assert_eq!(
            sandbox("secrets/**/*.key"),
            Ok(SandboxPath::Glob("/proj/secrets/**/*.key".into()))
        );
        assert!(sandbox("").is_err());
        assert!(sandbox("~bob/x").is_err());
        assert!(resolve_sandbox_path("~/x", Path::new("/p"), None).is_err());
    }

    #[test]
    fn rule_spellings() {
        let rule = |s| rule_path(s, Path::new("/proj"), Some(Path::new("/home/u")));
        assert_eq!(rule("/src/**"), Some(exact("/proj/src")));
        assert_eq!(rule("//etc/hosts"), Some(exact("/etc/hosts")));
        assert_eq!(rule("~/.ssh/**"), Some(exact("/home/u/.ssh")));
        assert_eq!(rule("./build/out"), Some(exact("/proj/build/out")));
        assert_eq!(
            rule(".env"),
            Some(SandboxPath::Glob("/proj/**/.env".into()))
        );
        assert_eq!(
            rule("*.pem"),
            Some(SandboxPath::Glob("/proj/**/*.pem".into()))
        );
        assert_eq!(rule("~/x"), Some(exact("/home/u/x")));
        assert_eq!(rule_path("~/x", Path::new("/p"), None), None);
    }

    #[test]
    fn bases_of_patterns() {
        assert_eq!(
            SandboxPath::Glob("/proj/**/.env".into()).base(),
            PathBuf::from("/proj")
        );
        assert_eq!(
            SandboxPath::Glob("/*.pem".into()).base(),
            PathBuf::from("/")
        );
        assert!(SandboxPath::Glob("/home/u/.ssh/*".into()).is_within(Path::new("/home/u")));
        assert!(!exact("/home/uv").is_within(Path::new("/home/u")));
    }
}
