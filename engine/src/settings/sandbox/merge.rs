//! Merging the per-file `sandbox` blocks (see the module docs of
//! [`super`] for the precedence and why project files get less say).
//!
//! What depends on the permission rules (a project path re-opened under a
//! trusted deny, proxy ports beside a `WebFetch` deny rule) is settled
//! later, in [`super::SandboxSettings::effective`].

use super::{SandboxSettings, SettingsSource, Sourced};

type Flag = Option<Sourced<bool>>;

/// Facts about all layers that decide what project values may do.
struct Facts {
    /// A `--settings` file set `allowUnsandboxedCommands: false`.
    lockdown: bool,
    /// A trusted file set `network.strictAllowlist: true`.
    strict: bool,
    /// Some file denies a domain (own proxies would bypass the list).
    denies_domains: bool,
}

pub(super) fn merge(layers: Vec<SandboxSettings>) -> (SandboxSettings, Vec<String>) {
    let trusted_says = |get: fn(&SandboxSettings) -> &Flag, want: bool| {
        layers.iter().any(|l| {
            get(l)
                .as_ref()
                .is_some_and(|v| v.source.trusted() && v.value == want)
        })
    };
    let facts = Facts {
        lockdown: layers.iter().any(|l| {
            l.allow_unsandboxed_commands
                .as_ref()
                .is_some_and(|v| v.source == SettingsSource::Explicit && !v.value)
        }),
        strict: trusted_says(|l| &l.network.strict_allowlist, true),
        denies_domains: layers.iter().any(|l| !l.network.denied_domains.is_empty()),
    };
    let enabled_by_trusted = trusted_says(|l| &l.enabled, true);
    let fail_by_trusted = trusted_says(|l| &l.fail_if_unavailable, true);
    let unsandboxed_refused = trusted_says(|l| &l.allow_unsandboxed_commands, false);

    let mut out = SandboxSettings {
        locked: facts.lockdown,
        ..SandboxSettings::default()
    };
    let mut warnings = Vec::new();
    let mut m = Merger {
        warnings: &mut warnings,
        facts: &facts,
    };
    for layer in layers {
        out.configured |= layer.configured;
        let lock = facts.lockdown;
        m.scalar(&mut out.enabled, layer.enabled, "enabled", |v| {
            (lock && enabled_by_trusted && !v).then_some(LOCKED)
        });
        m.scalar(
            &mut out.fail_if_unavailable,
            layer.fail_if_unavailable,
            "failIfUnavailable",
            |v| (lock && fail_by_trusted && !v).then_some(LOCKED),
        );
        m.scalar(
            &mut out.auto_allow_bash_if_sandboxed,
            layer.auto_allow_bash_if_sandboxed,
            "autoAllowBashIfSandboxed",
            |_| None,
        );
        m.scalar(
            &mut out.allow_unsandboxed_commands,
            layer.allow_unsandboxed_commands,
            "allowUnsandboxedCommands",
            |v| {
                (v && unsandboxed_refused).then_some(
                    "the user's settings or a --settings file set it to false, which a project file cannot undo",
                )
            },
        );
        let widening = |v: bool| (v && lock).then_some(LOCKED);
        m.scalar(
            &mut out.enable_weaker_nested_sandbox,
            layer.enable_weaker_nested_sandbox,
            "enableWeakerNestedSandbox",
            widening,
        );
        m.scalar(
            &mut out.enable_weaker_network_isolation,
            layer.enable_weaker_network_isolation,
            "enableWeakerNetworkIsolation",
            widening,
        );
        m.scalar(
            &mut out.allow_nested_user_namespaces,
            layer.allow_nested_user_namespaces,
            "allowNestedUserNamespaces",
            |v| v.then_some(NEVER),
        );
        m.scalar(
            &mut out.filesystem.disabled,
            layer.filesystem.disabled,
            "filesystem.disabled",
            |_| Some(NEVER),
        );
        let net = layer.network;
        m.scalar(
            &mut out.network.strict_allowlist,
            net.strict_allowlist,
            "network.strictAllowlist",
            |_| Some(NEVER),
        );
        m.scalar(
            &mut out.network.allow_all_unix_sockets,
            net.allow_all_unix_sockets,
            "network.allowAllUnixSockets",
            widening,
        );
        m.scalar(
            &mut out.network.allow_local_binding,
            net.allow_local_binding,
            "network.allowLocalBinding",
            widening,
        );
        let port_rule = |_: u16| {
            if facts.lockdown {
                Some(LOCKED)
            } else if facts.strict {
                Some("a trusted file set network.strictAllowlist, and traffic through your own proxy is not checked against it")
            } else if facts.denies_domains {
                Some("network.deniedDomains is set, and traffic through your own proxy is not checked against it")
            } else {
                None
            }
        };
        m.scalar(
            &mut out.network.http_proxy_port,
            net.http_proxy_port,
            "network.httpProxyPort",
            port_rule,
        );
        m.scalar(
            &mut out.network.socks_proxy_port,
            net.socks_proxy_port,
            "network.socksProxyPort",
            port_rule,
        );

        // Lists: every file's entries, except what a locked (or strict)
        // configuration keeps project files from adding.
        let strict = facts.strict;
        m.list(
            &mut out.network.allowed_domains,
            net.allowed_domains,
            "network.allowedDomains",
            strict,
        );
        out.network.denied_domains.extend(net.denied_domains);
        m.list(
            &mut out.network.allow_unix_sockets,
            net.allow_unix_sockets,
            "network.allowUnixSockets",
            false,
        );
        m.list(
            &mut out.excluded_commands,
            layer.excluded_commands,
            "excludedCommands",
            false,
        );
        m.list(
            &mut out.ignore_violations,
            layer.ignore_violations,
            "ignoreViolations",
            false,
        );
        m.list(
            &mut out.filesystem.allow_write,
            layer.filesystem.allow_write,
            "filesystem.allowWrite",
            false,
        );
        out.filesystem
            .allow_read
            .extend(layer.filesystem.allow_read);
        out.filesystem
            .deny_write
            .extend(layer.filesystem.deny_write);
        out.filesystem.deny_read.extend(layer.filesystem.deny_read);
        out.hidden_env.extend(layer.hidden_env);
    }
    (out, warnings)
}

const LOCKED: &str =
    "a --settings file set allowUnsandboxedCommands: false, so project files cannot loosen the sandbox";
const NEVER: &str = "Claude Code never takes it from project files";

struct Merger<'a> {
    warnings: &'a mut Vec<String>,
    facts: &'a Facts,
}

impl Merger<'_> {
    /// Last file wins, except that `refuse` may reject a project file's
    /// value (with the reason, given as a warning).
    fn scalar<T: Copy + std::fmt::Debug>(
        &mut self,
        slot: &mut Option<Sourced<T>>,
        new: Option<Sourced<T>>,
        key: &str,
        refuse: impl Fn(T) -> Option<&'static str>,
    ) {
        let Some(new) = new else { return };
        if new.source == SettingsSource::Project {
            if let Some(why) = refuse(new.value) {
                self.warnings.push(format!(
                    "{}: sandbox.{key}: {:?} is ignored: {why}",
                    new.file.display(),
                    new.value
                ));
                return;
            }
        }
        *slot = Some(new);
    }

    /// Appends, dropping a project file's entries under lockdown (or when
    /// `also_refuse` holds), with one warning per file.
    fn list<T>(
        &mut self,
        slot: &mut Vec<Sourced<T>>,
        new: Vec<Sourced<T>>,
        key: &str,
        also_refuse: bool,
    ) {
        let refuse = self.facts.lockdown || also_refuse;
        let mut dropped: Option<std::path::PathBuf> = None;
        for entry in new {
            if refuse && entry.source == SettingsSource::Project {
                dropped.get_or_insert(entry.file.clone());
                continue;
            }
            slot.push(entry);
        }
        if let Some(file) = dropped {
            let why = if self.facts.lockdown {
                LOCKED
            } else {
                "a trusted file set network.strictAllowlist, which leaves project domains out"
            };
            self.warnings.push(format!(
                "{}: sandbox.{key} is ignored: {why}",
                file.display()
            ));
        }
    }
}
