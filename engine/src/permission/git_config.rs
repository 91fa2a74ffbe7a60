//! Does a repository's own config make git run programs?
//!
//! `core.fsmonitor`, `core.pager`, `diff.external`, `diff.<driver>.textconv`,
//! `filter.<name>.clean`, `log.showSignature` with `gpg.program`,
//! `include.path`... turn `git status` or `git log` into code execution,
//! and a model that can write the repository's `.git/config` chooses that
//! code. Read-only git is auto-approved only when every key in the
//! repository's configs (its own, its worktree's, its submodules') is on a
//! list of keys known to run nothing. The user's global config is theirs
//! and is not checked.

use std::path::{Path, PathBuf};

/// Keys (`section.key`, lower case) that name no program.
const INERT: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.sharedrepository",
    "core.quotepath",
    "core.abbrev",
    "core.checkstat",
    "core.trustctime",
    "core.untrackedcache",
    "core.splitindex",
    "core.commitgraph",
    "core.multipackindex",
    "core.compression",
    "core.loosecompression",
    "core.bigfilethreshold",
    "core.preloadindex",
    "core.warnambiguousrefs",
    "core.longpaths",
    "core.protecthfs",
    "core.protectntfs",
    "user.name",
    "user.email",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "fetch.prune",
    "log.decorate",
    "log.date",
    "log.abbrevcommit",
    "status.showuntrackedfiles",
    "diff.renames",
    "diff.algorithm",
    "diff.colormoved",
    "diff.mnemonicprefix",
    "diff.noprefix",
    "merge.conflictstyle",
    "merge.ff",
    "rerere.enabled",
    "index.version",
    "gc.auto",
    "lfs.repositoryformatversion",
    "extensions.objectformat",
    "extensions.worktreeconfig",
    "extensions.refstorage",
    "extensions.preciousobjects",
    "extensions.partialclone",
];

/// Keys of sections with a name (`remote "origin"`), as `section.*.key`.
const INERT_NAMED: &[&str] = &[
    "remote.*.url",
    "remote.*.fetch",
    "remote.*.pushurl",
    "remote.*.push",
    "remote.*.tagopt",
    "remote.*.prune",
    "remote.*.mirror",
    "remote.*.promisor",
    "remote.*.partialclonefilter",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.pushremote",
    "branch.*.description",
    "submodule.*.url",
    "submodule.*.active",
    "submodule.*.branch",
    "submodule.*.ignore",
    "submodule.*.shallow",
    "submodule.*.fetchrecursesubmodules",
];

/// Why git in `dir` may run a program the repository configured, or `None`.
pub(crate) fn programs_configured(dir: &Path) -> Option<String> {
    let gitdir = find_gitdir(dir)?;
    let mut configs = vec![gitdir.join("config"), gitdir.join("config.worktree")];
    if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
        configs.push(gitdir.join(common.trim()).join("config"));
    }
    submodule_configs(&gitdir.join("modules"), 0, &mut configs);
    for config in configs {
        let Ok(text) = std::fs::read_to_string(&config) else {
            continue;
        };
        if let Some(key) = first_active_key(&text) {
            return Some(format!(
                "the repository config `{}` sets `{key}`, which git may use to run a program; read-only git is not auto-approved there",
                config.display()
            ));
        }
    }
    None
}

/// Where git run in `dir` finds its repository: the top of the work tree
/// (the directory holding `.git`, or the git directory itself when bare)
/// and the git directory. `None` when `dir` is in no repository.
pub(crate) fn repository(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let gitdir = find_gitdir(dir)?;
    let top = if gitdir.file_name().is_some_and(|n| n == ".git") || gitdir.join("HEAD").is_file() {
        dir.ancestors()
            .find(|a| a.join(".git").exists())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| gitdir.clone())
    } else {
        gitdir.clone()
    };
    Some((top, gitdir))
}

/// The git directory used from `dir`: `.git` (a directory, or a file
/// saying `gitdir: path`) in `dir` or an ancestor, or `dir` itself if it is
/// one.
fn find_gitdir(dir: &Path) -> Option<PathBuf> {
    for ancestor in dir.ancestors() {
        let dotgit = ancestor.join(".git");
        if dotgit.is_dir() {
            return Some(dotgit);
        }
        if dotgit.is_file() {
            let text = std::fs::read_to_string(&dotgit).ok()?;
            let path = text.trim().strip_prefix("gitdir:")?.trim();
            return Some(ancestor.join(path));
        }
        if ancestor.join("HEAD").is_file()
            && ancestor.join("objects").is_dir()
            && ancestor.join("config").is_file()
        {
            return Some(ancestor.to_path_buf());
        }
    }
    None
}

fn submodule_configs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 || out.len() > 64 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.join("config").is_file() {
            out.push(path.join("config"));
            submodule_configs(&path.join("modules"), depth + 1, out);
        } else if path.is_dir() {
            // Submodule names may contain slashes.
            submodule_configs(&path, depth + 1, out);
        }
    }
}

/// The first key in `text` not known to be inert.
fn first_active_key(text: &str) -> Option<String> {
    let mut section = String::new();
    let mut named = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let line = if let Some(rest) = line.strip_prefix('[') {
            let Some((header, after)) = rest.split_once(']') else {
                return Some(format!("a malformed section `{line}`"));
            };
            let header = header.trim();
            named = header.contains(['"', '.', ' ']);
            section = header
                .split(|c: char| c == '"' || c == '.' || c.is_whitespace())
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            let after = after.trim();
            if after.is_empty() || after.starts_with(['#', ';']) {
                continue;
            }
            after
        } else {
            line
        };
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim().trim_matches('"')),
            None => (line.to_ascii_lowercase(), "true"),
        };
        let full = if named {
            format!("{section}.*.{key}")
        } else {
            format!("{section}.{key}")
        };
        let inert = if named {
            INERT_NAMED.contains(&full.as_str())
        } else if full == "core.fsmonitor" {
            matches!(
                value.to_ascii_lowercase().as_str(),
                "false" | "0" | "no" | "off" | ""
            )
        } else {
            INERT.contains(&full.as_str())
        };
        if !inert {
            return Some(full);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inert_keys_pass() {
        let clean = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = x\n\tfetch = +refs/*\n[branch \"main\"]\n\tremote = origin\n";
        assert_eq!(first_active_key(clean), None);
        for bad in [
            "[core]\n\tfsmonitor = touch F",
            "[core]\n\tpager = less",
            "[CORE]\n\tPager = x",
            "[diff \"x\"]\n\ttextconv = sh",
            "[diff]\n\texternal = sh",
            "[filter \"lfs\"]\n\tclean = git-lfs clean",
            "[include]\n\tpath = other",
            "[alias]\n\tst = !sh",
            "[log]\n\tshowSignature = true",
            "[core] fsmonitor = x",
            "[core.x]\n\tpager = y",
        ] {
            assert!(first_active_key(bad).is_some(), "{bad}");
        }
        assert_eq!(first_active_key("[core]\n\tfsmonitor = false"), None);
    }
}
