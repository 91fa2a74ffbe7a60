//! What keeps Baton's own git from running what a repository names.
//!
//! Git runs programs the repository configures: hooks (`post-checkout` on
//! `worktree add`, `reference-transaction` on any ref change), an
//! fsmonitor command (`git status`), clean and smudge filters (`status`
//! may run a clean filter on a racily clean file, a checkout runs smudge
//! filters), gpg for `log.showSignature`, submodule updates when
//! `submodule.recurse` is set. Each is switched off with configuration
//! given on git's command line (through `GIT_CONFIG_COUNT`, which outranks
//! every file and is passed on to the git processes git starts itself):
//! hooks point at `/dev/null`, fsmonitor is off, and every filter driver
//! the configuration defines (read first, with nothing else run) gets an
//! empty `clean`, `smudge` and `process` and is not required, so the
//! attributes that name it change nothing. No transport may run
//! (`protocol.allow=never`). Every `GIT_*` variable of Baton's own
//! environment is left out: they can point git at another repository,
//! index, executable directory or template with hooks.

use std::path::Path;

use super::run;

/// Configuration every sealed git gets, whatever the repository says.
const FIXED: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("log.showSignature", "false"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("protocol.allow", "never"),
];

/// The configuration a sealed git of one repository runs with.
#[derive(Clone, Debug, Default)]
pub(super) struct Seal {
    config: Vec<(String, String)>,
}

impl Seal {
    /// The fixed part only: enough for reading configuration, which runs
    /// no program.
    pub(super) fn fixed() -> Seal {
        Seal {
            config: FIXED
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// The seal for the repository holding `dir`: the fixed part plus
    /// every filter driver its configuration (and the user's) defines,
    /// emptied.
    pub(super) async fn for_repository(dir: &Path) -> Result<Seal, String> {
        let mut seal = Seal::fixed();
        let listed = run::output(
            dir,
            &[
                "config",
                "-z",
                "--name-only",
                "--get-regexp",
                r"^filter\..*\.(clean|smudge|process|required)$",
            ],
            &seal,
            &[],
        )
        .await?;
        // 1: no such key. Outside a repository the user's files are read
        // alone, which is as good (the next command says what is wrong).
        match listed.code {
            Some(0) | Some(1) => {}
            _ => return Err(listed.failure("config --get-regexp")),
        }
        for driver in drivers(&listed.stdout) {
            for (var, value) in [
                ("clean", ""),
                ("smudge", ""),
                ("process", ""),
                ("required", "false"),
            ] {
                seal.config
                    .push((format!("filter.{driver}.{var}"), value.to_string()));
            }
        }
        Ok(seal)
    }

    /// The variables that hand the configuration to git.
    pub(super) fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![(
            "GIT_CONFIG_COUNT".to_string(),
            self.config.len().to_string(),
        )];
        for (i, (key, value)) in self.config.iter().enumerate() {
            env.push((format!("GIT_CONFIG_KEY_{i}"), key.clone()));
            env.push((format!("GIT_CONFIG_VALUE_{i}"), value.clone()));
        }
        env
    }
}

/// The driver names in `config -z --name-only` output (`filter.NAME.VAR`,
/// NUL-terminated; NAME may itself contain dots), each once.
fn drivers(listed: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for key in listed.split('\0').filter(|k| !k.is_empty()) {
        let Some(rest) = key.strip_prefix("filter.") else {
            continue;
        };
        let Some((name, _var)) = rest.rsplit_once('.') else {
            continue;
        };
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// Names of Baton's own variables that must not reach git.
pub(super) fn inherited_git_vars() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .map(|(key, _)| key)
        .filter(|key| key.to_string_lossy().starts_with("GIT_"))
        .collect()
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn driver_names_keep_their_dots_and_come_once() {
        let listed = "filter.lfs.clean\0filter.lfs.smudge\0filter.a.b.c.process\0";
        assert_eq!(
            drivers(listed),
            vec!["lfs".to_string(), "a.b.c".to_string()]
        );
        assert!(drivers("").is_empty());
    }

    #[test]
    fn configuration_goes_through_numbered_variables() {
        let env = Seal::fixed().env();
        assert_eq!(env[0], ("GIT_CONFIG_COUNT".into(), FIXED.len().to_string()));
        assert_eq!(env[1], ("GIT_CONFIG_KEY_0".into(), "core.hooksPath".into()));
        assert_eq!(env[2], ("GIT_CONFIG_VALUE_0".into(), "/dev/null".into()));
    }
}
