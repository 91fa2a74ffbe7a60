//! Reading single blocks: types, unknown keys, domains, what is never
//! widened. Merging and the effective configuration are tested with real
//! files in `engine/tests/sandbox_settings.rs`.

use std::path::Path;

use serde_json::json;

use super::parse::parse_block;
use super::{SandboxPath, SettingsSource};

fn read(value: serde_json::Value) -> super::parse::Parsed {
    parse_block(
        Path::new("/p/.claude/settings.json"),
        SettingsSource::Project,
        &value,
        Path::new("/p"),
        Some(Path::new("/home/u")),
    )
}

#[test]
fn every_published_key_is_read() {
    let parsed = read(json!({
        "enabled": true, "failIfUnavailable": true, "autoAllowBashIfSandboxed": true,
        "allowUnsandboxedCommands": false, "excludedCommands": ["docker:*", "git status"],
        "network": {"allowedDomains": ["GitHub.com", "*.npmjs.org", "[::1]:8080", "localhost:3000"],
                    "deniedDomains": ["*", "evil.example.com:443"],
                    "allowUnixSockets": ["/var/run/docker.sock"], "allowAllUnixSockets": false,
                    "allowLocalBinding": true, "httpProxyPort": 8080, "socksProxyPort": 1080},
        "filesystem": {"allowWrite": ["/tmp/build", "~/.kube"], "denyWrite": ["./dist"],
                       "denyRead": ["~/.aws/credentials", "secrets/**/*.key"], "allowRead": ["."]},
        "ignoreViolations": {"*": ["/usr/bin"]},
        "enableWeakerNestedSandbox": false, "allowNestedUserNamespaces": false,
    }));
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    let l = parsed.layer;
    assert!(l.enabled() && l.fail_if_unavailable() && l.auto_allow_bash_if_sandboxed());
    assert!(!l.allow_unsandboxed_commands());
    let domains: Vec<&str> = l
        .network
        .allowed_domains
        .iter()
        .map(|d| d.value.as_str())
        .collect();
    assert_eq!(
        domains,
        ["github.com", "*.npmjs.org", "[::1]:8080", "localhost:3000"]
    );
    assert_eq!(l.network.denied_domains.len(), 2);
    assert_eq!(
        l.network.http_proxy_port.as_ref().map(|p| p.value),
        Some(8080)
    );
    let fs = &l.filesystem;
    assert_eq!(
        fs.allow_write[0].value,
        SandboxPath::Exact("/tmp/build".into())
    );
    assert_eq!(
        fs.allow_write[1].value,
        SandboxPath::Exact("/home/u/.kube".into())
    );
    assert_eq!(fs.deny_write[0].value, SandboxPath::Exact("/p/dist".into()));
    assert_eq!(
        fs.deny_read[1].value,
        SandboxPath::Glob("/p/secrets/**/*.key".into())
    );
    assert_eq!(fs.allow_read[0].value, SandboxPath::Exact("/p".into()));
    assert_eq!(l.ignore_violations.len(), 1);
}

#[test]
fn wrong_types_are_problems_naming_the_key() {
    for (value, key) in [
        (json!("yes"), "sandbox"),
        (json!({"enabled": "yes"}), "sandbox.enabled"),
        (
            json!({"excludedCommands": "docker"}),
            "sandbox.excludedCommands",
        ),
        (json!({"network": []}), "sandbox.network"),
        (
            json!({"network": {"httpProxyPort": 70000}}),
            "sandbox.network.httpProxyPort",
        ),
        (
            json!({"network": {"socksProxyPort": 0}}),
            "sandbox.network.socksProxyPort",
        ),
        (
            json!({"filesystem": {"denyRead": [1]}}),
            "sandbox.filesystem.denyRead",
        ),
        (
            json!({"credentials": {"files": [{"path": "x"}]}}),
            "sandbox.credentials.files",
        ),
    ] {
        let parsed = read(value.clone());
        assert!(
            parsed.problems.iter().any(|p| p.contains(key)),
            "{value}: {:?}",
            parsed.problems
        );
    }
}

#[test]
fn unknown_and_unused_keys_are_warnings() {
    let parsed = read(json!({
        "additionalAllowWritePaths": ["x"], "bwrapPath": "/usr/bin/bwrap", "ripgrep": {"command": "rg"},
        "network": {"allowMachLookup": ["com.apple.x"], "tlsTerminate": {}, "proxy": 1,
                    "allowManagedDomainsOnly": true},
        "filesystem": {"allowManagedReadPathsOnly": true, "allowExecute": []},
        "credentials": {"sigv4": {}},
        "allowAppleEvents": true,
    }));
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    for key in [
        "additionalAllowWritePaths",
        "bwrapPath",
        "ripgrep",
        "allowMachLookup",
        "tlsTerminate",
        "network.proxy",
        "allowManagedDomainsOnly",
        "allowManagedReadPathsOnly",
        "allowExecute",
        "sigv4",
        "allowAppleEvents",
    ] {
        assert!(
            parsed.warnings.iter().any(|w| w.contains(key)),
            "{key}: {:?}",
            parsed.warnings
        );
    }
}

#[test]
fn unusable_allow_entries_are_skipped_unusable_denies_are_problems() {
    let parsed = read(json!({
        "excludedCommands": ["npm:* run"],
        "network": {"allowedDomains": ["*.com", "*", "https://x.example.com", "a..b", "example.com"]},
        "filesystem": {"allowWrite": ["~bob/x", ""]},
    }));
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(parsed.warnings.len(), 7, "{:?}", parsed.warnings);
    let l = parsed.layer;
    assert!(l.excluded_commands.is_empty());
    assert_eq!(l.network.allowed_domains.len(), 1);
    assert!(l.filesystem.allow_write.is_empty());
    for deny in [
        json!({"network": {"deniedDomains": ["https://evil.com/x"]}}),
        json!({"filesystem": {"denyRead": ["~bob/.ssh"]}}),
    ] {
        let parsed = read(deny.clone());
        assert_eq!(parsed.problems.len(), 1, "{deny}: {:?}", parsed.problems);
    }
    // No home: a `~` deny cannot be honoured, so it stops the load.
    let parsed = parse_block(
        Path::new("/p/s.json"),
        SettingsSource::Explicit,
        &json!({"filesystem": {"denyRead": ["~/.ssh"]}}),
        Path::new("/p"),
        None,
    );
    assert_eq!(parsed.problems.len(), 1);
}

#[test]
fn credentials_become_denied_reads_and_hidden_variables() {
    let parsed = read(json!({"credentials": {
        "files": [{"path": "~/.aws/credentials", "mode": "deny"},
                  {"path": "./.env", "mode": "mask", "extract": "KEY=(.*)"}],
        "envVars": [{"name": "GITHUB_TOKEN", "mode": "deny"}, {"name": "NPM_TOKEN", "mode": "mask"}],
    }}));
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(parsed.warnings.len(), 2, "{:?}", parsed.warnings);
    let l = parsed.layer;
    let denied: Vec<String> = l
        .filesystem
        .deny_read
        .iter()
        .map(|d| d.value.to_string())
        .collect();
    assert_eq!(denied, ["/home/u/.aws/credentials", "/p/.env"]);
    let hidden: Vec<&str> = l.hidden_env.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(hidden, ["GITHUB_TOKEN", "NPM_TOKEN"]);
}

#[test]
fn relative_paths_in_the_users_file_start_at_its_claude_directory() {
    let parsed = parse_block(
        Path::new("/home/u/.claude/settings.json"),
        SettingsSource::User,
        &json!({"filesystem": {"allowWrite": ["cache", "/abs", "//old/abs"]}}),
        Path::new("/p"),
        Some(Path::new("/home/u")),
    );
    let paths: Vec<String> = parsed
        .layer
        .filesystem
        .allow_write
        .iter()
        .map(|p| p.value.to_string())
        .collect();
    assert_eq!(paths, ["/home/u/.claude/cache", "/abs", "/old/abs"]);
}
