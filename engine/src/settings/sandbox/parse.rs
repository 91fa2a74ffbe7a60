//! Reading one file's `sandbox` object into a [`SandboxSettings`] layer.
//!
//! A value of the wrong type is a problem (the settings do not load), as
//! everywhere in the loader and as in Claude Code, where one invalid value
//! rejects the settings. An entry that is well typed but unusable is read
//! so that it never widens the sandbox: an allow-side entry (a domain to
//! reach, a path to write, a command to exclude) is skipped with a warning;
//! a deny-side entry Baton cannot honour (a denied path under an unknown
//! home, a malformed denied domain) is a problem, because a deny that
//! quietly matches nothing is a hole. Unknown keys are warnings.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::paths::{resolve_sandbox_path, SandboxPath};
use super::{SandboxSettings, SettingsSource, Sourced};
use crate::permission::bash::CommandPattern;

/// What reading one block found.
pub(crate) struct Parsed {
    pub layer: SandboxSettings,
    pub problems: Vec<String>,
    pub warnings: Vec<String>,
}

/// Reads `value` (the `sandbox` key of `file`).
pub(crate) fn parse_block(
    file: &Path,
    source: SettingsSource,
    value: &Value,
    project: &Path,
    home: Option<&Path>,
) -> Parsed {
    // Relative paths: the project, or `~/.claude` for the user's file.
    let root = match (source, home) {
        (SettingsSource::User, Some(home)) => home.join(".claude"),
        _ => project.to_path_buf(),
    };
    let mut r = Reader {
        file: file.to_path_buf(),
        source,
        root,
        home: home.map(Path::to_path_buf),
        layer: SandboxSettings::default(),
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    match value {
        Value::Null => {}
        Value::Object(map) => {
            r.layer.configured = true;
            r.top(map);
        }
        _ => r.problems.push("`sandbox` must be an object".into()),
    }
    Parsed {
        layer: r.layer,
        problems: r.problems,
        warnings: r.warnings,
    }
}

struct Reader {
    file: PathBuf,
    source: SettingsSource,
    root: PathBuf,
    home: Option<PathBuf>,
    layer: SandboxSettings,
    problems: Vec<String>,
    warnings: Vec<String>,
}

/// Which way an entry points: only allow-side entries may be dropped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Allow,
    Deny,
}

impl Reader {
    fn sourced<T>(&self, value: T) -> Sourced<T> {
        Sourced {
            value,
            source: self.source,
            file: self.file.clone(),
        }
    }

    /// `map[key]` as `T`, or a problem naming `sandbox.<path>`.
    fn typed<T: DeserializeOwned>(&mut self, value: &Value, path: &str, what: &str) -> Option<T> {
        if value.is_null() {
            return None;
        }
        match serde_json::from_value(value.clone()) {
            Ok(v) => Some(v),
            Err(_) => {
                self.problems
                    .push(format!("sandbox.{path} must be {what}, found {value}"));
                None
            }
        }
    }

    fn flag(&mut self, value: &Value, path: &str) -> Option<Sourced<bool>> {
        let v: bool = self.typed(value, path, "true or false")?;
        Some(self.sourced(v))
    }

    fn list(&mut self, value: &Value, path: &str) -> Vec<String> {
        self.typed(value, path, "an array of strings")
            .unwrap_or_default()
    }

    fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    fn top(&mut self, map: &Map<String, Value>) {
        for (key, value) in map {
            match key.as_str() {
                "enabled" => self.layer.enabled = self.flag(value, key),
                "failIfUnavailable" => self.layer.fail_if_unavailable = self.flag(value, key),
                "autoAllowBashIfSandboxed" => {
                    self.layer.auto_allow_bash_if_sandboxed = self.flag(value, key)
                }
                "allowUnsandboxedCommands" => {
                    self.layer.allow_unsandboxed_commands = self.flag(value, key)
                }
                "excludedCommands" => {
                    for (i, text) in self.list(value, key).into_iter().enumerate() {
                        match CommandPattern::parse(&text) {
                            Ok(_) => {
                                let entry = self.sourced(text.trim().to_string());
                                self.layer.excluded_commands.push(entry);
                            }
                            Err(e) => self.warn(format!(
                                "sandbox.excludedCommands[{i}] `{text}` is ignored (the command stays sandboxed): {e}"
                            )),
                        }
                    }
                }
                "network" => {
                    if let Some(m) = self.typed::<Map<String, Value>>(value, key, "an object") {
                        self.network(&m)
                    }
                }
                "filesystem" => {
                    if let Some(m) = self.typed::<Map<String, Value>>(value, key, "an object") {
                        self.filesystem(&m)
                    }
                }
                "credentials" => {
                    if let Some(m) = self.typed::<Map<String, Value>>(value, key, "an object") {
                        self.credentials(&m)
                    }
                }
                "ignoreViolations" => {
                    let map: Option<std::collections::BTreeMap<String, Vec<String>>> = self
                        .typed(value, key, "an object of command patterns to arrays of paths");
                    for (pattern, paths) in map.unwrap_or_default() {
                        let entry = self.sourced((pattern, paths));
                        self.layer.ignore_violations.push(entry);
                    }
                }
                "enableWeakerNestedSandbox" => {
                    self.layer.enable_weaker_nested_sandbox = self.flag(value, key)
                }
                "enableWeakerNetworkIsolation" => {
                    self.layer.enable_weaker_network_isolation = self.flag(value, key)
                }
                "allowNestedUserNamespaces" => {
                    self.layer.allow_nested_user_namespaces = self.flag(value, key)
                }
                "allowAppleEvents" => {
                    if self.flag(value, key).is_some_and(|f| f.value) {
                        self.warn("sandbox.allowAppleEvents is macOS only; it has no effect in Baton".into());
                    }
                }
                "ripgrep" => self.warn(
                    "sandbox.ripgrep is ignored: Baton's sandbox does not run ripgrep".into(),
                ),
                "bwrapPath" | "socatPath" => self.warn(format!(
                    "sandbox.{key} is ignored: Claude Code takes it only from managed settings, which Baton does not read"
                )),
                other => self.warn(format!("sandbox.{other} is not a sandbox setting Baton knows; ignored")),
            }
        }
    }

    fn network(&mut self, map: &Map<String, Value>) {
        for (key, value) in map {
            let path = format!("network.{key}");
            match key.as_str() {
                "allowedDomains" | "deniedDomains" => {
                    let side = if key == "allowedDomains" { Side::Allow } else { Side::Deny };
                    for text in self.list(value, &path) {
                        match domain(&text, side) {
                            Ok(d) => {
                                let entry = self.sourced(d);
                                match side {
                                    Side::Allow => self.layer.network.allowed_domains.push(entry),
                                    Side::Deny => self.layer.network.denied_domains.push(entry),
                                }
                            }
                            Err(e) if side == Side::Allow => {
                                self.warn(format!("sandbox.{path}: `{text}` is ignored: {e}"))
                            }
                            Err(e) => self.problems.push(format!("sandbox.{path}: `{text}`: {e}")),
                        }
                    }
                }
                "strictAllowlist" => self.layer.network.strict_allowlist = self.flag(value, &path),
                "allowManagedDomainsOnly" => self.warn(format!(
                    "sandbox.{path} is ignored: Claude Code takes it only from managed settings, which Baton does not read"
                )),
                "allowUnixSockets" => {
                    for text in self.list(value, &path) {
                        if let Some(SandboxPath::Exact(p)) = self.path(&text, &path, Side::Allow) {
                            let entry = self.sourced(p);
                            self.layer.network.allow_unix_sockets.push(entry);
                        }
                    }
                }
                "allowAllUnixSockets" => {
                    self.layer.network.allow_all_unix_sockets = self.flag(value, &path)
                }
                "allowLocalBinding" => self.layer.network.allow_local_binding = self.flag(value, &path),
                "allowMachLookup" => {
                    self.list(value, &path);
                    self.warn(format!("sandbox.{path} is macOS only; it has no effect in Baton"));
                }
                "httpProxyPort" | "socksProxyPort" => {
                    let port = match self.typed::<u16>(value, &path, "a port number from 1 to 65535") {
                        Some(0) => {
                            self.problems
                                .push(format!("sandbox.{path} must be a port number from 1 to 65535, found 0"));
                            None
                        }
                        port => port.map(|p| self.sourced(p)),
                    };
                    if key == "httpProxyPort" {
                        self.layer.network.http_proxy_port = port;
                    } else {
                        self.layer.network.socks_proxy_port = port;
                    }
                }
                "tlsTerminate" => self.warn(format!(
                    "sandbox.{path} is ignored: Baton's proxy does not terminate TLS"
                )),
                other => self.warn(format!(
                    "sandbox.network.{other} is not a sandbox setting Baton knows; ignored"
                )),
            }
        }
    }

    fn filesystem(&mut self, map: &Map<String, Value>) {
        for (key, value) in map {
            let path = format!("filesystem.{key}");
            let side = match key.as_str() {
                "allowWrite" | "allowRead" => Side::Allow,
                "denyWrite" | "denyRead" => Side::Deny,
                "disabled" => {
                    self.layer.filesystem.disabled = self.flag(value, &path);
                    continue;
                }
                "allowManagedReadPathsOnly" => {
                    self.warn(format!(
                        "sandbox.{path} is ignored: Claude Code takes it only from managed settings, which Baton does not read"
                    ));
                    continue;
                }
                other => {
                    self.warn(format!(
                        "sandbox.filesystem.{other} is not a sandbox setting Baton knows; ignored"
                    ));
                    continue;
                }
            };
            for text in self.list(value, &path) {
                let Some(resolved) = self.path(&text, &path, side) else {
                    continue;
                };
                let entry = self.sourced(resolved);
                let fs = &mut self.layer.filesystem;
                match key.as_str() {
                    "allowWrite" => fs.allow_write.push(entry),
                    "allowRead" => fs.allow_read.push(entry),
                    "denyWrite" => fs.deny_write.push(entry),
                    _ => fs.deny_read.push(entry),
                }
            }
        }
    }

    /// `credentials`: Baton does not mask secrets; what it can honour it
    /// honours more strictly (a masked file becomes unreadable, a masked
    /// variable unset) and says so.
    fn credentials(&mut self, map: &Map<String, Value>) {
        #[derive(serde::Deserialize)]
        struct Entry {
            #[serde(alias = "name")]
            path: String,
            mode: Mode,
        }
        #[derive(serde::Deserialize, PartialEq)]
        #[serde(rename_all = "lowercase")]
        enum Mode {
            Deny,
            Mask,
        }
        for (key, value) in map {
            let path = format!("credentials.{key}");
            match key.as_str() {
                "files" | "envVars" => {
                    let what = if key == "files" {
                        "an array of objects with `path` and `mode` (\"deny\" or \"mask\")"
                    } else {
                        "an array of objects with `name` and `mode` (\"deny\" or \"mask\")"
                    };
                    let entries: Vec<Entry> = self.typed(value, &path, what).unwrap_or_default();
                    for e in entries {
                        if e.mode == Mode::Mask {
                            self.warn(format!(
                                "sandbox.{path}: `{}` is to be masked; Baton cannot mask, so sandboxed commands cannot {} it at all",
                                e.path,
                                if key == "files" { "read" } else { "see" }
                            ));
                        }
                        if key == "envVars" {
                            let entry = self.sourced(e.path);
                            self.layer.hidden_env.push(entry);
                        } else if let Some(p) = self.path(&e.path, &path, Side::Deny) {
                            let entry = self.sourced(p);
                            self.layer.filesystem.deny_read.push(entry);
                        }
                    }
                }
                "allowPlaintextInject" | "awsPairs" | "sigv4" => self.warn(format!(
                    "sandbox.{path} is ignored: Baton does not inject credentials"
                )),
                other => self.warn(format!(
                    "sandbox.credentials.{other} is not a sandbox setting Baton knows; ignored"
                )),
            }
        }
    }

    fn path(&mut self, text: &str, key: &str, side: Side) -> Option<SandboxPath> {
        match resolve_sandbox_path(text, &self.root, self.home.as_deref()) {
            Ok(p) => Some(p),
            Err(e) if side == Side::Allow => {
                self.warn(format!("sandbox.{key}: `{text}` is ignored: {e}"));
                None
            }
            Err(e) => {
                self.problems
                    .push(format!("sandbox.{key}: `{text}` cannot be honoured: {e}"));
                None
            }
        }
    }
}

/// A host pattern as the sandbox runtime accepts it: `example.com`,
/// `*.example.com` (at least two labels after the wildcard), `localhost`,
/// an IP literal (IPv6 in brackets), each with an optional `:port`; `*`
/// (every host) only in a deny list. Returned in lower case.
fn domain(text: &str, side: Side) -> Result<String, String> {
    let text = text.trim().to_ascii_lowercase();
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address needs its closing `]`")?;
        if inside.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("`{inside}` is not an IPv6 address"));
        }
        (format!("[{inside}]"), after.strip_prefix(':'))
    } else {
        if text.matches(':').count() > 1 {
            return Err("an IPv6 address must be written in brackets, as `[::1]`".into());
        }
        match text.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (text.clone(), None),
        }
    };
    if let Some(port) = port {
        if !matches!(port.parse::<u16>(), Ok(p) if p > 0) {
            return Err(format!("`{port}` is not a port from 1 to 65535"));
        }
    }
    let ok = if host.starts_with('[') || host == "localhost" {
        true
    } else if host == "*" {
        side == Side::Deny
    } else {
        let name = host.strip_prefix("*.").unwrap_or(&host);
        let labels: Vec<&str> = name.split('.').collect();
        labels.len() >= 2
            && labels
                .iter()
                .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    };
    if !ok {
        return Err(
            "not a host pattern (use `example.com` or `*.example.com`, optionally with `:port`; `*.com` and `*` are too broad)"
                .into(),
        );
    }
    Ok(text)
}
