//! Claude Code's `sandbox` settings block, read as Claude Code reads it.
//!
//! The keys and their meaning come from the published schema
//! (`@anthropic-ai/claude-agent-sdk`, `sdk.d.ts`, `SandboxSettings`). This
//! module only reads and merges them; enforcing them is the sandbox's job
//! (the Bash tool), which consumes the plain [`SandboxConfig`] built by
//! [`SandboxSettings::effective`].
//!
//! Merging follows the rest of the settings loader (lists accumulate,
//! scalars: the last file wins) plus the precedence Claude Code documents
//! for this block, because a repository's own `.claude/settings.json` is
//! written by whoever wrote the repository:
//!
//! - some keys are never taken from project files (`.claude/settings.json`,
//!   `.claude/settings.local.json`): `network.strictAllowlist`,
//!   `filesystem.disabled`, `allowNestedUserNamespaces: true`;
//! - `allowUnsandboxedCommands: false` in the user's file or a `--settings`
//!   file holds whatever the project files say;
//! - `allowUnsandboxedCommands: false` in a `--settings` file (Claude Code:
//!   managed or `--settings`) locks the block: project files can then no
//!   longer widen it (extra domains, write paths, excluded commands,
//!   proxy ports, weaker isolation), nor turn `enabled` or
//!   `failIfUnavailable` off when a trusted file turned them on.
//!
//! Baton has no managed-settings layer, so the keys Claude Code takes only
//! from managed settings (`bwrapPath`, `socatPath`,
//! `network.allowManagedDomainsOnly`, `filesystem.allowManagedReadPathsOnly`)
//! are ignored with a warning.

mod config;
mod merge;
mod parse;
mod paths;
#[cfg(test)]
mod tests;

pub use config::{protected_names, PathSet, SandboxConfig, PROTECTED_IN_GIT_DIR};
pub use paths::SandboxPath;

pub(crate) use parse::parse_block;

use std::path::{Path, PathBuf};

/// Which kind of settings file a value came from: project files are the
/// least trusted (a cloned repository wrote them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SettingsSource {
    /// `~/.claude/settings.json`.
    User,
    /// `<project>/.claude/settings.json` or `settings.local.json`.
    Project,
    /// A file the host or user named (`--settings`, or any other name
    /// given to `Settings::from_layers`).
    Explicit,
}

impl SettingsSource {
    /// Classifies a settings file by where it lies.
    pub fn of(file: &Path, project: &Path, home: Option<&Path>) -> SettingsSource {
        let same = |a: &Path, b: &Path| {
            a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
        };
        let claude = project.join(".claude");
        if same(file, &claude.join("settings.json"))
            || same(file, &claude.join("settings.local.json"))
        {
            return SettingsSource::Project;
        }
        if home.is_some_and(|h| same(file, &h.join(".claude/settings.json"))) {
            return SettingsSource::User;
        }
        SettingsSource::Explicit
    }

    /// Not a project file.
    pub fn trusted(self) -> bool {
        self != SettingsSource::Project
    }
}

/// A value with the file that set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value as the file set it.
    pub value: T,
    /// Which kind of settings file set it (user, project, local, flag…).
    pub source: SettingsSource,
    /// The file itself, for messages.
    pub file: PathBuf,
}

/// The merged `sandbox` block. Scalars are `None` when no file set them
/// (the accessors give Claude Code's defaults); lists hold every file's
/// entries, paths resolved (see [`SandboxPath`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `enabled`: run Bash commands in the sandbox (default false).
    pub enabled: Option<Sourced<bool>>,
    /// `failIfUnavailable`: refuse to start when the sandbox cannot run
    /// (default false: warn and run unsandboxed).
    pub fail_if_unavailable: Option<Sourced<bool>>,
    /// `autoAllowBashIfSandboxed` (default false in the published schema).
    pub auto_allow_bash_if_sandboxed: Option<Sourced<bool>>,
    /// `allowUnsandboxedCommands`: honour the Bash input's
    /// `dangerouslyDisableSandbox` (default true).
    pub allow_unsandboxed_commands: Option<Sourced<bool>>,
    /// `excludedCommands`: Bash rule patterns for commands run outside the
    /// sandbox (each validated when read).
    pub excluded_commands: Vec<Sourced<String>>,
    /// `network`: which hosts sandboxed commands may reach, and how.
    pub network: NetworkSettings,
    /// `filesystem`: where sandboxed commands may read and write.
    pub filesystem: FilesystemSettings,
    /// `credentials.envVars` names (deny, and mask read as deny): unset for
    /// sandboxed commands.
    pub hidden_env: Vec<Sourced<String>>,
    /// `ignoreViolations`: command pattern → paths.
    pub ignore_violations: Vec<Sourced<(String, Vec<String>)>>,
    /// `enableWeakerNestedSandbox` (Linux: no fresh `/proc`).
    pub enable_weaker_nested_sandbox: Option<Sourced<bool>>,
    /// `enableWeakerNetworkIsolation` (macOS only in Claude Code).
    pub enable_weaker_network_isolation: Option<Sourced<bool>>,
    /// `allowNestedUserNamespaces` (Linux: sandboxed commands may create
    /// user namespaces).
    pub allow_nested_user_namespaces: Option<Sourced<bool>>,
    /// Whether some file had a `sandbox` object at all.
    pub configured: bool,
    /// A `--settings` file set `allowUnsandboxedCommands: false`: project
    /// files may not loosen the sandbox (set by [`SandboxSettings::merge`]).
    pub locked: bool,
}

/// `sandbox.network`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkSettings {
    /// Host patterns (`example.com`, `*.example.com`, optional `:port`),
    /// lower case.
    pub allowed_domains: Vec<Sourced<String>>,
    /// Same syntax, plus `*` (every host); always win over allowed ones.
    pub denied_domains: Vec<Sourced<String>>,
    /// `strictAllowlist`: hosts not allowed are refused, not asked about.
    pub strict_allowlist: Option<Sourced<bool>>,
    /// macOS only in Claude Code (seccomp cannot filter by path).
    pub allow_unix_sockets: Vec<Sourced<PathBuf>>,
    /// `allowAllUnixSockets`: sandboxed commands may create Unix sockets
    /// (to talk to local daemons).
    pub allow_all_unix_sockets: Option<Sourced<bool>>,
    /// macOS only in Claude Code.
    pub allow_local_binding: Option<Sourced<bool>>,
    /// The user's own HTTP proxy, instead of the one the sandbox runs.
    pub http_proxy_port: Option<Sourced<u16>>,
    /// The user's own SOCKS5 proxy.
    pub socks_proxy_port: Option<Sourced<u16>>,
}

/// `sandbox.filesystem`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilesystemSettings {
    /// `allowWrite`: trees writable besides the workspace.
    pub allow_write: Vec<Sourced<SandboxPath>>,
    /// `denyWrite`: paths kept unwritable inside writable trees.
    pub deny_write: Vec<Sourced<SandboxPath>>,
    /// Also `credentials.files` entries.
    pub deny_read: Vec<Sourced<SandboxPath>>,
    /// Re-allows reading inside `deny_read` regions.
    pub allow_read: Vec<Sourced<SandboxPath>>,
    /// `disabled`: no filesystem isolation, network isolation kept.
    pub disabled: Option<Sourced<bool>>,
}

fn flag(value: &Option<Sourced<bool>>, default: bool) -> bool {
    value.as_ref().map_or(default, |v| v.value)
}

impl SandboxSettings {
    /// `enabled`, or its default (false).
    pub fn enabled(&self) -> bool {
        flag(&self.enabled, false)
    }

    /// `failIfUnavailable`, or its default (false).
    pub fn fail_if_unavailable(&self) -> bool {
        flag(&self.fail_if_unavailable, false)
    }

    /// Default false: the published schema (sdk.d.ts, 0.3.332) says so;
    /// older Claude Code docs said true. The stricter value is also the
    /// safer one.
    pub fn auto_allow_bash_if_sandboxed(&self) -> bool {
        flag(&self.auto_allow_bash_if_sandboxed, false)
    }

    /// `allowUnsandboxedCommands`, or its default (true).
    pub fn allow_unsandboxed_commands(&self) -> bool {
        flag(&self.allow_unsandboxed_commands, true)
    }

    /// Merges per-file blocks (lowest precedence first); returns the
    /// warnings for what was left out.
    pub fn merge(layers: Vec<SandboxSettings>) -> (SandboxSettings, Vec<String>) {
        merge::merge(layers)
    }
}
