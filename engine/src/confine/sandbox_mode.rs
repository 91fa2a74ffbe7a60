//! Claude Code's `sandbox` settings, enforced: what a sandboxed Bash
//! command may touch, built from the merged [`SandboxConfig`].
//!
//! As in Claude Code, a sandboxed command reads everywhere but the
//! `denyRead` paths (`allowRead` re-opens parts of them), writes only in the
//! workspace roots, `allowWrite` and a temporary directory of the session,
//! never in the `denyWrite` and mandatory protected paths, and reaches the
//! network only through a proxy that decides by domain: Baton's own (in a
//! network namespace of the command's own, where nothing else exists), or
//! the user's (`httpProxyPort` / `socksProxyPort`).
//!
//! Repositories and protected files in the workspace are kept by the
//! kernel where they exist and checked for after the command where they do
//! not: see [`super::protect`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_sandbox::proxy::{DomainPattern, DomainRules};
use baton_sandbox::{Network, Policy};

use super::expand::expand;
use super::protect::{self, Guard};
use crate::settings::SandboxConfig;
use baton_tool::context::Context;

/// The port of Baton's HTTP proxy inside a command's own network namespace.
pub const HTTP_PORT: u16 = 3128;
/// The port of its SOCKS5 proxy there.
pub const SOCKS_PORT: u16 = 1080;

/// How a sandboxed command reaches the network.
#[derive(Clone, Debug)]
pub enum Egress {
    /// Not at all.
    None,
    /// Through Baton's proxy with these rules: the command's namespace
    /// holds listeners on [`HTTP_PORT`] and [`SOCKS_PORT`], in that order.
    Proxy(DomainRules),
    /// Through the user's own proxies on the host's loopback.
    UserProxies {
        /// The user's HTTP proxy port.
        http: Option<u16>,
        /// The user's SOCKS5 proxy port.
        socks: Option<u16>,
    },
}

/// Everything needed to start one sandboxed command.
#[derive(Clone, Debug)]
pub struct SandboxPlan {
    /// What the kernel lets the command touch.
    pub policy: Policy,
    /// How it reaches the network.
    pub egress: Egress,
    /// Variables to set (proxy addresses, `TMPDIR`).
    pub env: Vec<(String, String)>,
    /// Variables the command must not see (`credentials.envVars`).
    pub hidden_env: Vec<String>,
    /// The check to run once the command has ended (see
    /// [`super::protect`]): what it created that must not exist is moved
    /// aside. Dropping the last handle checks too.
    pub guard: Option<Arc<Guard>>,
    /// Held from the walk until the command's child has entered the
    /// sandbox (see `protect::Starting`): take it and drop it then.
    pub starting: Option<Arc<protect::Starting>>,
}

/// Whether this kernel can enforce `config`; the reason when not.
pub(crate) fn unavailable(config: &SandboxConfig) -> Option<String> {
    let support = baton_sandbox::support();
    if let Some(why) = support.missing() {
        return Some(why);
    }
    let needs_namespaces = !config.deny_write.is_empty()
        || !config.protected_names.is_empty()
        || !config.allowed_domains.is_empty();
    if needs_namespaces && !support.user_namespaces {
        return Some(
            "protected paths and per-domain network need user namespaces, which this system does not allow"
                .into(),
        );
    }
    None
}

/// The plan for one command in `context`; `tmp` is the session's
/// temporary directory (created here). An error when the workspace could
/// not be searched for what must be protected.
pub(crate) fn plan(
    config: &SandboxConfig,
    context: &Context,
    tmp: &Path,
    memory: &Arc<protect::Memory>,
) -> Result<SandboxPlan, String> {
    let mut env = Vec::new();
    let mut guard = None;
    let mut starting = None;
    let mut policy = Policy::read_only(Vec::new());
    if config.filesystem_disabled {
        policy.read.push(PathBuf::from("/"));
        policy.write.push(PathBuf::from("/"));
    } else {
        policy.read.push(PathBuf::from("/"));
        policy.deny_read = config.deny_read.paths.clone();
        policy.deny_read.extend(expand(&config.deny_read.globs));
        // `allowRead` re-opens parts of what `denyRead` closed.
        policy.read.extend(config.allow_read.paths.iter().cloned());
        policy.read.extend(expand(&config.allow_read.globs));
        policy.write = config.write_roots.clone();
        policy.write.extend(context.roots.iter().cloned());
        policy
            .write
            .extend(config.allow_write.paths.iter().cloned());
        if std::fs::create_dir_all(tmp).is_ok() {
            policy.write.push(tmp.to_path_buf());
            env.push(("TMPDIR".to_string(), tmp.display().to_string()));
        }
        policy.write = policy
            .write
            .iter()
            .map(|p| baton_tool::paths::resolve(p))
            .collect();
        policy.write.sort();
        policy.write.dedup();
        let mut named: Vec<PathBuf> = config.deny_write.paths.clone();
        named.extend(expand(&config.deny_write.globs));
        // Resolved like the write trees: a link's target is what the mount
        // protects; the link itself (its directory resolved) is what the
        // check after the command keeps. Only what lies in a writable tree
        // needs either.
        let in_writable = |p: &PathBuf| policy.write.iter().any(|w| p.starts_with(w));
        let mut protect: Vec<PathBuf> = named
            .iter()
            .map(|p| baton_tool::paths::resolve(p))
            .collect();
        protect.retain(in_writable);
        protect.sort();
        protect.dedup();
        let mut entries: Vec<PathBuf> = named
            .iter()
            .filter_map(|p| Some(baton_tool::paths::resolve(p.parent()?).join(p.file_name()?)))
            .collect();
        entries.retain(in_writable);
        let mut roots: Vec<PathBuf> = config
            .write_roots
            .iter()
            .chain(context.roots.iter())
            .map(|p| baton_tool::paths::resolve(p))
            .collect();
        roots.sort();
        roots.dedup();
        if let Some(found) = protect::prepare(config, &roots, &policy.write, &entries, memory)? {
            policy.pinned = found.pinned;
            guard = Some(found.guard);
            starting = Some(Arc::new(found.starting));
        }
        policy.deny_write = protect;
    }
    policy.unix_sockets = config.allow_all_unix_sockets;
    let egress = egress(config);
    policy.network = match &egress {
        Egress::None => Network::Denied,
        Egress::Proxy(_) => Network::Isolated {
            listen: vec![HTTP_PORT, SOCKS_PORT],
        },
        Egress::UserProxies { http, socks } => Network::ProxyPorts {
            ports: http.iter().chain(socks.iter()).copied().collect(),
            bind: config.allow_local_binding,
        },
    };
    let (http, socks) = match &egress {
        Egress::None => (None, None),
        Egress::Proxy(_) => (Some(HTTP_PORT), Some(SOCKS_PORT)),
        Egress::UserProxies { http, socks } => (*http, *socks),
    };
    if let Some(port) = http {
        for key in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
            env.push((key.to_string(), format!("http://127.0.0.1:{port}")));
        }
    }
    if let Some(port) = socks {
        for key in ["ALL_PROXY", "all_proxy"] {
            env.push((key.to_string(), format!("socks5h://127.0.0.1:{port}")));
        }
    }
    if http.is_some() || socks.is_some() {
        // Nothing may bypass the proxy.
        env.push(("NO_PROXY".to_string(), String::new()));
        env.push(("no_proxy".to_string(), String::new()));
    }
    Ok(SandboxPlan {
        policy,
        egress,
        env,
        hidden_env: config.hidden_env.clone(),
        guard,
        starting,
    })
}

fn egress(config: &SandboxConfig) -> Egress {
    if config.http_proxy_port.is_some() || config.socks_proxy_port.is_some() {
        return Egress::UserProxies {
            http: config.http_proxy_port,
            socks: config.socks_proxy_port,
        };
    }
    if config.allowed_domains.is_empty() {
        return Egress::None;
    }
    Egress::Proxy(domain_rules(
        &config.allowed_domains,
        &config.denied_domains,
    ))
}

/// The proxy's rules. A `:port` suffix is dropped (the proxy decides by
/// name); an allowed entry the proxy cannot read is left out, a denied one
/// (or `*`) denies everything: an unreadable deny must not open anything.
pub(crate) fn domain_rules(allowed: &[String], denied: &[String]) -> DomainRules {
    let name = |entry: &String| -> String {
        match entry.rsplit_once(':') {
            Some((host, port))
                if port.chars().all(|c| c.is_ascii_digit()) && !host.contains(']') =>
            {
                host.to_string()
            }
            _ => entry.clone(),
        }
    };
    let mut deny = Vec::new();
    for entry in denied {
        match DomainPattern::parse(&name(entry)) {
            Ok(pattern) => deny.push(pattern),
            Err(_) => return DomainRules::deny_all(),
        }
    }
    let allow = allowed
        .iter()
        .filter_map(|entry| DomainPattern::parse(&name(entry)).ok())
        .collect();
    DomainRules::from_patterns(allow, deny)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_lists_become_proxy_rules() {
        let rules = domain_rules(
            &[
                "github.com:443".into(),
                "*.npmjs.org".into(),
                "not a domain".into(),
            ],
            &["gist.github.com".into()],
        );
        assert!(rules.is_allowed("github.com"));
        assert!(rules.is_allowed("registry.npmjs.org"));
        assert!(!rules.is_allowed("gist.github.com"));
        assert!(!rules.is_allowed("example.com"));
        let all = domain_rules(&["github.com".into()], &["*".into()]);
        assert!(!all.is_allowed("github.com"));
    }
}
