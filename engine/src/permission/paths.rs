//! Path rules for file tools: gitignore-style patterns with four anchors.
//!
//! - `//path`: absolute (`//etc/passwd` is `/etc/passwd`);
//! - `~/path`: under the home directory;
//! - `/path`: under the project root of the settings;
//! - `./path` or `path`: under the working directory.
//!
//! As in a `.gitignore`, a pattern without an inner `/` (`*.env`) matches a
//! name at any depth below its base, `*` stays within one path segment,
//! `**` crosses segments, a trailing `/` means "directory", and a pattern
//! that matches a directory covers everything inside it. An anchor other
//! than `./`/bare pins the pattern to its base, because that is what the
//! user wrote. Negation (`!`) and `..` have no meaning for a permission and
//! are rejected rather than guessed at.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// Where a pattern is rooted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// A fixed directory (filesystem root, home, project root).
    Fixed(PathBuf),
    /// The working directory of the call.
    WorkingDir,
}

/// A parsed path specifier.
#[derive(Clone, Debug)]
pub(crate) struct PathPattern {
    base: Base,
    /// `None` matches everything under the base (`//`, `~`, `/`, `**`).
    glob: Option<GlobMatcher>,
    /// For `dir/**`: `dir` itself, so a rule for a directory's contents also
    /// covers searching the directory (Grep, Glob).
    dir_glob: Option<GlobMatcher>,
    dir_only: bool,
    /// The specifier as written (trimmed), for the sandbox settings.
    spec: Box<str>,
}

impl PathPattern {
    /// `home` resolves `~/`; `project` resolves a leading single `/`.
    pub(crate) fn parse(
        spec: &str,
        home: Option<&Path>,
        project: &Path,
    ) -> Result<PathPattern, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("empty path pattern".into());
        }
        if spec.starts_with('!') {
            return Err("negated patterns (`!…`) are not supported in permission rules".into());
        }
        let home_base = || {
            home.map(|h| Base::Fixed(absolute(h)))
                .ok_or_else(|| format!("`{spec}` uses `~` but no home directory is known"))
        };
        let (base, rest, anchored) = if let Some(rest) = spec.strip_prefix("//") {
            (Base::Fixed(PathBuf::from("/")), rest, true)
        } else if spec == "~" {
            (home_base()?, "", true)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (home_base()?, rest, true)
        } else if spec.starts_with('~') {
            return Err(format!(
                "`{spec}`: only `~/` (your own home) is supported, not `~user`"
            ));
        } else if let Some(rest) = spec.strip_prefix('/') {
            (Base::Fixed(absolute(project)), rest, true)
        } else if let Some(rest) = spec.strip_prefix("./") {
            (Base::WorkingDir, rest, false)
        } else {
            (Base::WorkingDir, spec, false)
        };
        let dir_only = rest.ends_with('/');
        let rest = rest.trim_start_matches('/').trim_end_matches('/');
        if Path::new(rest)
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return Err(format!(
                "`{spec}`: `..` is not allowed in path rules; anchor the pattern with `//` (absolute) or `~/` instead"
            ));
        }
        let anchored = anchored || rest.contains('/');
        let compile = |text: &str| {
            GlobBuilder::new(text)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| format!("`{spec}` is not a valid glob: {e}"))
        };
        let (glob, dir_glob) = if rest.is_empty() || rest == "**" {
            (None, None)
        } else {
            let text = if anchored {
                rest.to_string()
            } else {
                format!("**/{rest}")
            };
            let dir_glob = match text.strip_suffix("/**") {
                Some(dir) if !dir.is_empty() => Some(compile(dir)?),
                _ => None,
            };
            (Some(compile(&text)?), dir_glob)
        };
        Ok(PathPattern {
            base,
            glob,
            dir_glob,
            dir_only,
            spec: spec.into(),
        })
    }

    /// The specifier as written in the rule.
    pub(crate) fn spec(&self) -> &str {
        &self.spec
    }

    pub(crate) fn base(&self) -> &Base {
        &self.base
    }

    /// Whether `path` (absolute) matches with the base placed at `base`.
    /// The caller decides which spelling of each (as written, or with
    /// symlinks resolved) to compare.
    pub(crate) fn matches_at(&self, path: &Path, base: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(base) else {
            return false;
        };
        let Some(glob) = &self.glob else {
            return !self.dir_only || rel.as_os_str().is_empty() || path.is_dir();
        };
        // The path itself, then each directory above it up to the base: a
        // pattern naming a directory covers its contents.
        let mut candidate = Some(rel);
        let mut is_dir = path.is_dir();
        while let Some(c) = candidate.filter(|c| !c.as_os_str().is_empty()) {
            let hit = glob.is_match(c) || self.dir_glob.as_ref().is_some_and(|d| d.is_match(c));
            if (is_dir || !self.dir_only) && hit {
                return true;
            }
            candidate = c.parent();
            is_dir = true;
        }
        false
    }
}

/// A relative base would never be a prefix of the absolute paths tools
/// report, and the rule would silently match nothing.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    baton_tool::paths::normalize(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(spec: &str, path: &str, cwd: &str) -> bool {
        let p = PathPattern::parse(spec, Some(Path::new("/home/u")), Path::new("/proj")).unwrap();
        let base = match p.base() {
            Base::Fixed(b) => b.clone(),
            Base::WorkingDir => PathBuf::from(cwd),
        };
        p.matches_at(Path::new(path), &base)
    }

    #[test]
    fn anchors_pick_the_base() {
        assert!(matches("//etc/passwd", "/etc/passwd", "/w"));
        assert!(matches("~/.ssh/**", "/home/u/.ssh/id_rsa", "/w"));
        assert!(!matches("~/.ssh/**", "/home/v/.ssh/id_rsa", "/w"));
        assert!(matches("/src/**", "/proj/src/a/b.rs", "/w"));
        assert!(!matches("/src/**", "/w/src/a.rs", "/w"));
        assert!(matches("./src/**", "/w/src/a.rs", "/w"));
        assert!(matches("src/*.rs", "/w/src/a.rs", "/w"));
        assert!(!matches("src/*.rs", "/w/src/x/a.rs", "/w"));
    }

    #[test]
    fn gitignore_semantics() {
        assert!(matches("*.env", "/w/deep/down/.env", "/w"));
        assert!(matches(".env", "/w/a/.env", "/w"));
        assert!(!matches(".env", "/elsewhere/.env", "/w"));
        assert!(matches("secrets", "/w/secrets/key.pem", "/w"));
        assert!(matches("~/.ssh", "/home/u/.ssh/id_rsa", "/w"));
        assert!(!matches("~/.ssh", "/home/u/x/.ssh/id_rsa", "/w"));
        assert!(matches("//", "/anything/at/all", "/w"));
        assert!(matches("**", "/w/x", "/w"));
        assert!(!matches("**", "/x", "/w"));
        assert!(matches("src/**", "/w/src", "/w"));
        assert!(!matches("src/**", "/w/srcx", "/w"));
    }

    #[test]
    fn bad_patterns_are_errors() {
        let parse = |s| PathPattern::parse(s, None, Path::new("/p"));
        assert!(parse("!src").is_err());
        assert!(parse("../x").is_err());
        assert!(parse("~/x").is_err());
        assert!(parse("~bob/x").is_err());
        assert!(parse("src/[a").is_err());
        assert!(parse("").is_err());
    }
}
