//! The sandbox's own input: the merged settings plus what the permission
//! rules add, as plain data.
//!
//! Claude Code feeds its permission rules into the sandbox (sdk.d.ts):
//! `Edit(…)` allow rules widen `allowWrite`, `Edit(…)` deny rules join
//! `denyWrite`, `Read(…)` deny rules join `denyRead`, `WebFetch(domain:…)`
//! allow and deny rules join the domain lists. On top, a fixed set of files
//! stays write-protected in every write root whatever the settings say
//! (the sandbox runtime's "dangerous files", widened to Baton's own list of
//! protected paths, see `permission::protected`).

use std::path::{Path, PathBuf};

use super::paths::{rule_path, SandboxPath};
use super::{SandboxSettings, SettingsSource, Sourced};
use crate::permission::bash::{CommandParts, CommandPattern};
use crate::permission::protected::{PROTECTED_DIRS, PROTECTED_FILES};
use crate::permission::rules::{Rule, RuleKind, Specifier};
use crate::permission::web::DomainPattern;
use crate::permission::RulePolicy;

/// The parts of a git directory that must not be written or created (the
/// rest of it must stay writable for git to work): `hooks` run programs;
/// `config` and `config.worktree` name programs (`core.fsmonitor`,
/// pagers, aliases, filters); `info` holds `attributes` (which apply
/// filters) and `exclude`; `commondir` and `gitdir` send git to another
/// directory's configuration; `objects/info/alternates` (and its HTTP
/// twin) to another object store.
pub const PROTECTED_IN_GIT_DIR: &[&str] = &[
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "gitdir",
    "objects/info/alternates",
    "objects/info/http-alternates",
];

/// The names a sandbox keeps write-protected in its write trees: a
/// single name (`.mcp.json`, `.claude`; a directory name covers
/// everything in it) wherever an entry has it, and `.git/<part>` (see
/// [`PROTECTED_IN_GIT_DIR`]) in every git directory, which is itself kept
/// in place but stays writable. How they are enforced: the engine's
/// `confine::protect`.
pub fn protected_names() -> Vec<String> {
    let dirs = PROTECTED_DIRS
        .iter()
        .filter(|d| **d != ".git")
        .map(|d| d.to_string());
    let git = PROTECTED_IN_GIT_DIR.iter().map(|p| format!(".git/{p}"));
    dirs.chain(git)
        .chain(PROTECTED_FILES.iter().map(|f| f.to_string()))
        .collect()
}

/// Paths and patterns of one sandbox list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathSet {
    /// Absolute, `..` folded; a directory covers everything inside it.
    pub paths: Vec<PathBuf>,
    /// Absolute glob patterns, kept as written (see
    /// [`SandboxPath::Glob`]); the sandbox decides how to apply them.
    pub globs: Vec<String>,
}

impl PathSet {
    fn push(&mut self, path: &SandboxPath) {
        match path {
            SandboxPath::Exact(p) if !self.paths.contains(p) => self.paths.push(p.clone()),
            SandboxPath::Glob(g) if !self.globs.contains(g) => self.globs.push(g.clone()),
            _ => {}
        }
    }

    /// Whether the set holds neither paths nor patterns.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.globs.is_empty()
    }
}

/// What the sandbox must enforce for Bash commands. Built by
/// [`SandboxSettings::effective`]; `Default` is "sandbox off, nothing
/// allowed beyond the write roots".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Run Bash commands in the sandbox.
    pub enabled: bool,
    /// Refuse to start when the sandbox cannot run (else: warn, run
    /// unsandboxed).
    pub fail_if_unavailable: bool,
    /// A command that runs sandboxed needs no approval, unless a deny or
    /// ask rule, a protected path or a hook says otherwise.
    pub auto_allow_bash_if_sandboxed: bool,
    /// The Bash input's `dangerouslyDisableSandbox` may take a command out
    /// (never silently; the permission flow still applies).
    pub allow_unsandboxed_commands: bool,
    /// Bash rule patterns of commands to run outside the sandbox; see
    /// [`SandboxConfig::is_excluded`].
    pub excluded_commands: Vec<String>,
    /// Where sandboxed commands may write without any setting: the
    /// workspace roots (the working directory and the additional
    /// directories).
    pub write_roots: Vec<PathBuf>,
    /// `filesystem.allowWrite` and `Edit(…)` allow rules.
    pub allow_write: PathSet,
    /// `filesystem.denyWrite`, `Edit(…)` deny rules, and the mandatory
    /// protected paths of every write root, the home directory and the
    /// settings files themselves. Wins over every allow.
    pub deny_write: PathSet,
    /// Names (see [`protected_names`]) kept write-protected, and not
    /// created, at any depth of the workspace roots. Empty: nothing is
    /// looked for below the roots (only `deny_write` applies).
    pub protected_names: Vec<String>,
    /// `filesystem.denyRead`, `credentials.files` and `Read(…)` deny rules.
    pub deny_read: PathSet,
    /// `filesystem.allowRead`: re-allowed inside `deny_read`.
    pub allow_read: PathSet,
    /// `filesystem.disabled`: no filesystem isolation (trusted files only).
    pub filesystem_disabled: bool,
    /// `network.allowedDomains` and `WebFetch(domain:…)` allow rules:
    /// `example.com`, `*.example.com`, optionally `:port`.
    pub allowed_domains: Vec<String>,
    /// `network.deniedDomains` and `WebFetch(domain:…)` deny rules; `*` is
    /// every host. Wins over `allowed_domains`.
    pub denied_domains: Vec<String>,
    /// Hosts not allowed are refused rather than asked about.
    pub strict_allowlist: bool,
    /// `network.allowUnixSockets`: socket paths commands may connect to
    /// (macOS only in Claude Code; kept for the settings' sake).
    pub allow_unix_sockets: Vec<PathBuf>,
    /// `network.allowAllUnixSockets`: commands may create Unix sockets.
    pub allow_all_unix_sockets: bool,
    /// `network.allowLocalBinding`: commands may listen on local ports.
    pub allow_local_binding: bool,
    /// The user's own HTTP proxy, used instead of Baton's.
    pub http_proxy_port: Option<u16>,
    /// The user's own SOCKS5 proxy, used instead of Baton's.
    pub socks_proxy_port: Option<u16>,
    /// Environment variables sandboxed commands must not see
    /// (`credentials.envVars`).
    pub hidden_env: Vec<String>,
    /// `enableWeakerNestedSandbox`: no fresh `/proc` (for running inside
    /// a container that forbids mounting one).
    pub enable_weaker_nested_sandbox: bool,
    /// `allowNestedUserNamespaces`: sandboxed commands may create user
    /// namespaces of their own.
    pub allow_nested_user_namespaces: bool,
    /// What the merge with the rules left out, one line each, for the
    /// host to show.
    pub notes: Vec<String>,
}

impl SandboxSettings {
    /// The configuration for a session in `project_dir` (its only write
    /// root); see [`SandboxSettings::effective_in`].
    pub fn effective(
        &self,
        policy: &RulePolicy,
        project_dir: &Path,
        home: Option<&Path>,
    ) -> SandboxConfig {
        self.effective_in(policy, project_dir, &[project_dir.to_path_buf()], home)
    }

    /// Merges these settings with `policy`'s rules, as Claude Code does.
    /// `project_dir` anchors the rules' relative paths; `roots` are the
    /// workspace roots (writable, and each gets the protected paths).
    pub fn effective_in(
        &self,
        policy: &RulePolicy,
        project_dir: &Path,
        roots: &[PathBuf],
        home: Option<&Path>,
    ) -> SandboxConfig {
        let mut c = SandboxConfig {
            enabled: self.enabled(),
            fail_if_unavailable: self.fail_if_unavailable(),
            auto_allow_bash_if_sandboxed: self.auto_allow_bash_if_sandboxed(),
            allow_unsandboxed_commands: self.allow_unsandboxed_commands(),
            write_roots: roots.to_vec(),
            protected_names: protected_names(),
            filesystem_disabled: self.filesystem.disabled.as_ref().is_some_and(|d| d.value),
            strict_allowlist: self
                .network
                .strict_allowlist
                .as_ref()
                .is_some_and(|s| s.value),
            allow_all_unix_sockets: flag(&self.network.allow_all_unix_sockets),
            allow_local_binding: flag(&self.network.allow_local_binding),
            enable_weaker_nested_sandbox: flag(&self.enable_weaker_nested_sandbox),
            allow_nested_user_namespaces: flag(&self.allow_nested_user_namespaces),
            ..SandboxConfig::default()
        };
        let source = |rule: &Rule| {
            rule.source().map_or(SettingsSource::Explicit, |f| {
                SettingsSource::of(f, project_dir, home)
            })
        };
        let rules = |kind: RuleKind, tools: &'static [&'static str]| {
            policy
                .rules(kind)
                .iter()
                .filter(move |r| r.tool.exact().is_some_and(|t| tools.contains(&t)))
        };
        let sourced = |value: SandboxPath, rule: &Rule| Sourced {
            value,
            source: source(rule),
            file: rule.source().map(Path::to_path_buf).unwrap_or_default(),
        };
        // Each with the rule's text, for notes.
        let rule_paths = |kind, tools| -> Vec<(Sourced<SandboxPath>, String)> {
            rules(kind, tools)
                .filter_map(|r| match &r.spec {
                    Some(Specifier::Path(p)) => rule_path(p.spec(), project_dir, home)
                        .map(|v| (sourced(v, r), r.text().to_string())),
                    _ => None,
                })
                .collect()
        };
        const WRITERS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

        // Reads: denies first, so that allow-side entries from project
        // files can be checked against the trusted ones.
        let mut deny_read = self.filesystem.deny_read.clone();
        deny_read.extend(
            rule_paths(RuleKind::Deny, &["Read"])
                .into_iter()
                .map(|(d, _)| d),
        );
        let trusted_denies: Vec<&SandboxPath> = deny_read
            .iter()
            .filter(|d| d.source.trusted())
            .map(|d| &d.value)
            .collect();
        let reopens = |p: &SandboxPath| {
            !trusted_denies.is_empty()
                && (matches!(p, SandboxPath::Glob(_))
                    || trusted_denies.iter().any(|d| p.is_within(&d.base())))
        };
        for d in &deny_read {
            c.deny_read.push(&d.value);
        }
        for a in &self.filesystem.allow_read {
            if a.source == SettingsSource::Project && reopens(&a.value) {
                c.notes.push(left_out(a, "filesystem.allowRead", REOPENS));
            } else {
                c.allow_read.push(&a.value);
            }
        }

        // Writes.
        let mut allow_write = self.filesystem.allow_write.clone();
        for (a, text) in rule_paths(RuleKind::Allow, &["Edit"]) {
            if a.source == SettingsSource::Project && self.locked {
                c.notes.push(left_out(
                    &a,
                    &format!("the Edit allow rule `{text}`, path"),
                    LOCKED,
                ));
            } else {
                allow_write.push(a);
            }
        }
        for a in &allow_write {
            if a.source == SettingsSource::Project && reopens(&a.value) {
                c.notes.push(left_out(a, "filesystem.allowWrite", REOPENS));
            } else {
                c.allow_write.push(&a.value);
            }
        }
        for d in &self.filesystem.deny_write {
            c.deny_write.push(&d.value);
        }
        for (d, _) in rule_paths(RuleKind::Deny, WRITERS) {
            c.deny_write.push(&d.value);
        }
        let names = c.protected_names.clone();
        for root in roots.iter().map(PathBuf::as_path).chain(home) {
            for name in &names {
                c.deny_write.push(&SandboxPath::Exact(root.join(name)));
            }
        }

        // Network.
        c.allowed_domains = strings(&self.network.allowed_domains);
        c.denied_domains = strings(&self.network.denied_domains);
        for r in rules(RuleKind::Allow, &["WebFetch"]) {
            let Some(domain) = rule_domain(r) else {
                continue;
            };
            if source(r) == SettingsSource::Project && (self.locked || c.strict_allowlist) {
                c.notes.push(format!(
                    "{}: the WebFetch allow rule `{}` does not open `{domain}` to sandboxed commands: {}",
                    r.source().map(|f| f.display().to_string()).unwrap_or_default(),
                    r.text(),
                    if self.locked { LOCKED } else { "network.strictAllowlist leaves project rules out" }
                ));
            } else if !c.allowed_domains.contains(&domain) {
                c.allowed_domains.push(domain);
            }
        }
        let denied_by_rule = rules(RuleKind::Deny, &["WebFetch"]).filter_map(rule_domain);
        for domain in denied_by_rule {
            if !c.denied_domains.contains(&domain) {
                c.denied_domains.push(domain);
            }
        }
        let has_fetch_deny = rules(RuleKind::Deny, &["WebFetch"]).next().is_some();
        for (slot, port, key) in [
            (
                &mut c.http_proxy_port,
                &self.network.http_proxy_port,
                "httpProxyPort",
            ),
            (
                &mut c.socks_proxy_port,
                &self.network.socks_proxy_port,
                "socksProxyPort",
            ),
        ] {
            match port {
                Some(p) if p.source == SettingsSource::Project && has_fetch_deny => {
                    c.notes.push(format!(
                        "{}: sandbox.network.{key} is ignored: a WebFetch deny rule is set, and traffic through your own proxy is not checked against it",
                        p.file.display()
                    ));
                }
                Some(p) => *slot = Some(p.value),
                None => {}
            }
        }
        c.allow_unix_sockets = self
            .network
            .allow_unix_sockets
            .iter()
            .map(|s| s.value.clone())
            .collect();
        c.excluded_commands = strings(&self.excluded_commands);
        c.hidden_env = strings(&self.hidden_env);
        c
    }
}

const REOPENS: &str =
    "a project file cannot re-open (or write into) a path that the user's settings, a --settings file or their Read deny rules keep unreadable";
const LOCKED: &str =
    "a --settings file set allowUnsandboxedCommands: false, so project files cannot loosen the sandbox";

fn left_out(entry: &Sourced<SandboxPath>, what: &str, why: &str) -> String {
    format!(
        "{}: {what} `{}` is left out of the sandbox: {why}",
        entry.file.display(),
        entry.value
    )
}

fn flag(value: &Option<Sourced<bool>>) -> bool {
    value.as_ref().is_some_and(|v| v.value)
}

fn strings(list: &[Sourced<String>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in list {
        if !out.contains(&s.value) {
            out.push(s.value.clone());
        }
    }
    out
}

fn rule_domain(rule: &Rule) -> Option<String> {
    match &rule.spec {
        Some(Specifier::Domain(DomainPattern::Exact(d))) => Some(d.clone()),
        Some(Specifier::Domain(DomainPattern::Subdomains(d))) => Some(format!("*.{d}")),
        _ => None,
    }
}

impl SandboxConfig {
    /// Whether `command` runs outside the sandbox because of
    /// `excludedCommands`, as Claude Code decides it: every simple command
    /// of the line (each part of a pipe or a chain, and every command a
    /// wrapper runs) must match an entry on its own, and a line with a
    /// `cd`, a command substitution, any redirection other than a
    /// descriptor duplication (`2>&1`), a here-document, a function
    /// definition, a variable assignment, or anything the parser does not
    /// fully understand stays sandboxed. Exclusion is a convenience, not a
    /// permission: the command still goes through the permission flow.
    pub fn is_excluded(&self, command: &str) -> bool {
        let patterns: Vec<CommandPattern> = self
            .excluded_commands
            .iter()
            .filter_map(|p| CommandPattern::parse(p).ok())
            .collect();
        if patterns.is_empty() {
            return false;
        }
        let Ok(script) = baton_shell::parse(command) else {
            return false;
        };
        let plain = script.constructs().is_empty()
            && script.redirects().iter().all(is_descriptor_duplication)
            && script.commands().iter().all(|c| {
                c.placement() == baton_shell::Placement::Direct
                    && !baton_shell::is_directory_change(c)
                    && c.redirects().iter().all(is_descriptor_duplication)
            });
        if !plain {
            return false;
        }
        let Some(parts) = CommandParts::new(command).parsed else {
            return false;
        };
        !parts.is_empty()
            && parts.iter().flat_map(|p| p.all()).all(|part| {
                !part.opaque
                    && patterns.iter().any(|p| {
                        (!part.has_assignments && p.allows(&part.line)) || p.allows(&part.text)
                    })
            })
    }
}

/// `2>&1`, `>&2`, `<&0`, `3>&-`: moving descriptors opens no file.
fn is_descriptor_duplication(r: &baton_shell::Redirect) -> bool {
    matches!(r.op.as_str(), ">&" | "<&")
        && r.target
            .as_ref()
            .and_then(|t| t.fixed())
            .is_some_and(|t| t == "-" || (!t.is_empty() && t.chars().all(|c| c.is_ascii_digit())))
}
