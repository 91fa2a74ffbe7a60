//! The `sandbox` settings block, loaded from real files: published
//! settings, merging across files, Claude Code's precedence for project
//! files, warnings, and the effective configuration with the rules.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::{Path, PathBuf};

use baton_engine::settings::sandbox::{protected_names, SandboxConfig};
use baton_engine::settings::{SandboxSettings, Settings};

struct Tree {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    Tree {
        _dir: dir,
        home,
        project,
    }
}

impl Tree {
    fn user(&self, text: &str) -> &Self {
        write(&self.home.join(".claude/settings.json"), text);
        self
    }
    fn project(&self, text: &str) -> &Self {
        write(&self.project.join(".claude/settings.json"), text);
        self
    }
    fn local(&self, text: &str) -> &Self {
        write(&self.project.join(".claude/settings.local.json"), text);
        self
    }
    fn load(&self, explicit: Option<&str>) -> Settings {
        let path = self.project.join("cli-settings.json");
        if let Some(text) = explicit {
            write(&path, text);
        }
        Settings::load_with_home(
            &self.project,
            Some(&self.home),
            explicit.map(|_| path.as_path()),
        )
        .unwrap()
    }
    fn config(&self, explicit: Option<&str>) -> (Settings, SandboxConfig) {
        let settings = self.load(explicit);
        let config = settings.sandbox_config(&self.project);
        (settings, config)
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sandbox_settings")
        .join(name);
    std::fs::read_to_string(&path).unwrap()
}

fn sandbox_warnings(settings: &Settings) -> Vec<&String> {
    settings
        .warnings
        .iter()
        .filter(|w| w.contains("sandbox"))
        .collect()
}

#[test]
fn a_published_strict_file_denies_unsandboxed_commands_and_merges_its_read_denies() {
    let t = tree();
    t.project(&fixture("glass_claude/settings.json"));
    let (settings, c) = t.config(None);
    assert!(
        sandbox_warnings(&settings).is_empty(),
        "{:?}",
        settings.warnings
    );
    assert!(c.enabled);
    assert!(!c.auto_allow_bash_if_sandboxed);
    assert!(!c.allow_unsandboxed_commands);
    assert!(c.excluded_commands.is_empty());
    let p = t.project.display();
    for glob in [
        format!("{p}/**/.env"),
        format!("{p}/**/*.pem"),
        format!("{p}/**/secrets"),
    ] {
        assert!(
            c.deny_read.globs.contains(&glob),
            "{glob}: {:?}",
            c.deny_read
        );
    }
    for path in [".ssh", ".aws", ".kube", ".docker/config.json"] {
        assert!(
            c.deny_read.paths.contains(&t.home.join(path)),
            "{path}: {:?}",
            c.deny_read
        );
    }
    assert!(c.allow_write.is_empty());
}

#[test]
fn a_published_file_with_edit_rules_widens_writes_as_claude_code_reads_them() {
    let t = tree();
    t.project(&fixture("ai_marketplace/settings.json"));
    let (settings, c) = t.config(None);
    assert!(
        sandbox_warnings(&settings).is_empty(),
        "{:?}",
        settings.warnings
    );
    assert!(c.enabled && c.auto_allow_bash_if_sandboxed && c.allow_unsandboxed_commands);
    // `Edit(./**)` is the project; `Edit(/tmp/**)` is a permission rule, so
    // `/tmp` is below the project, not the system's /tmp.
    assert!(
        c.allow_write.paths.contains(&t.project),
        "{:?}",
        c.allow_write
    );
    assert!(c.allow_write.paths.contains(&t.project.join("tmp")));
    assert!(!c.allow_write.paths.contains(&PathBuf::from("/tmp")));
    let env = format!("{}/**/.env*", t.project.display());
    assert!(c.deny_read.globs.contains(&env), "{:?}", c.deny_read);
}

#[test]
fn a_published_local_file_with_an_unknown_key_loads_with_a_warning() {
    let t = tree();
    t.local(&fixture("autospec/settings.local.json"));
    let (settings, c) = t.config(None);
    let warnings = sandbox_warnings(&settings);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("additionalAllowWritePaths"));
    assert!(warnings[0].contains("settings.local.json"));
    assert!(c.enabled && c.auto_allow_bash_if_sandboxed);
    for domain in [
        "github.com",
        "www.npmjs.com",
        "raw.githubusercontent.com",
        "proxy.golang.org",
        "sum.golang.org",
    ] {
        assert!(
            c.allowed_domains.iter().any(|d| d == domain),
            "{domain}: {:?}",
            c.allowed_domains
        );
    }
    // The unknown key adds nothing; the Edit allow rules do.
    assert!(c.allow_write.paths.contains(&t.project.join(".autospec")));
    assert!(c.allow_write.paths.contains(&t.project.join("specs")));
    assert!(!c
        .allow_write
        .paths
        .iter()
        .any(|p| p.ends_with(".cache/go-build")));
}

#[test]
fn lists_accumulate_and_the_last_file_sets_scalars() {
    let t = tree();
    t.user(
        r#"{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true,
                "network": {"allowedDomains": ["github.com"], "httpProxyPort": 3128},
                "filesystem": {"denyRead": ["~/.ssh"]}}}"#,
    )
    .project(
        r#"{"sandbox": {"autoAllowBashIfSandboxed": false,
                "network": {"allowedDomains": ["pypi.org"]},
                "filesystem": {"allowWrite": ["build"], "denyRead": ["./secrets"]}}}"#,
    )
    .local(r#"{"sandbox": {"excludedCommands": ["docker:*"], "failIfUnavailable": true}}"#);
    let (settings, c) = t.config(Some(
        r#"{"sandbox": {"enabled": false, "network": {"allowedDomains": ["crates.io"]}}}"#,
    ));
    assert!(
        sandbox_warnings(&settings).is_empty(),
        "{:?}",
        settings.warnings
    );
    assert!(!c.enabled, "the --settings file came last");
    assert!(!c.auto_allow_bash_if_sandboxed);
    assert!(c.fail_if_unavailable);
    assert_eq!(c.allowed_domains, ["github.com", "pypi.org", "crates.io"]);
    assert_eq!(c.http_proxy_port, Some(3128));
    assert_eq!(c.excluded_commands, ["docker:*"]);
    assert!(c.allow_write.paths.contains(&t.project.join("build")));
    assert!(c.deny_read.paths.contains(&t.home.join(".ssh")));
    assert!(c.deny_read.paths.contains(&t.project.join("secrets")));
    let s: &SandboxSettings = &settings.sandbox;
    assert_eq!(
        s.enabled.as_ref().map(|e| e.file.clone()),
        Some(t.project.join("cli-settings.json"))
    );
}

#[test]
fn a_project_file_cannot_turn_unsandboxed_commands_back_on() {
    let t = tree();
    t.user(r#"{"sandbox": {"allowUnsandboxedCommands": false}}"#)
        .project(r#"{"sandbox": {"allowUnsandboxedCommands": true}}"#);
    let (settings, c) = t.config(None);
    assert!(!c.allow_unsandboxed_commands);
    let warnings = sandbox_warnings(&settings);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(".claude/settings.json")
            && warnings[0].contains("allowUnsandboxedCommands")
    );
    // The user's own --settings file may.
    let (_, c) = t.config(Some(r#"{"sandbox": {"allowUnsandboxedCommands": true}}"#));
    assert!(c.allow_unsandboxed_commands);
}

#[test]
fn a_locked_configuration_keeps_project_files_from_loosening_it() {
    let t = tree();
    t.user(r#"{"sandbox": {"enabled": true, "filesystem": {"allowWrite": ["~/.cache"]}}}"#)
        .project(
            r#"{"permissions": {"allow": ["Edit(//etc/**)", "WebFetch(domain:evil.example.com)"]},
             "sandbox": {"enabled": false, "excludedCommands": ["bash:*"],
                "enableWeakerNestedSandbox": true,
                "network": {"allowedDomains": ["evil.example.com"], "allowAllUnixSockets": true,
                            "httpProxyPort": 9999, "strictAllowlist": false},
                "filesystem": {"allowWrite": ["/"], "disabled": true}}}"#,
        );
    let (settings, c) = t.config(Some(r#"{"sandbox": {"allowUnsandboxedCommands": false}}"#));
    assert!(
        c.enabled,
        "a project file cannot switch a locked sandbox off"
    );
    assert!(c.excluded_commands.is_empty());
    assert!(!c.enable_weaker_nested_sandbox && !c.allow_all_unix_sockets);
    assert!(!c.filesystem_disabled);
    assert_eq!(c.http_proxy_port, None);
    assert!(c.allowed_domains.is_empty(), "{:?}", c.allowed_domains);
    assert_eq!(c.allow_write.paths, [t.home.join(".cache")]);
    let warnings = sandbox_warnings(&settings);
    for key in [
        "enabled",
        "excludedCommands",
        "enableWeakerNestedSandbox",
        "allowAllUnixSockets",
        "httpProxyPort",
        "allowedDomains",
        "filesystem.allowWrite",
        "filesystem.disabled",
        "strictAllowlist",
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(key)),
            "{key}: {warnings:?}"
        );
    }
    for rule in ["Edit(//etc/**)", "WebFetch(domain:evil.example.com)"] {
        assert!(
            c.notes.iter().any(|n| n.contains(rule)),
            "{rule}: {:?}",
            c.notes
        );
    }
    // Without the lock the same project file widens the sandbox (but still
    // never takes `filesystem.disabled` or `strictAllowlist` from it).
    let (settings, c) = t.config(None);
    assert!(!c.enabled && c.enable_weaker_nested_sandbox && !c.filesystem_disabled);
    assert!(c.allowed_domains.iter().any(|d| d == "evil.example.com"));
    assert!(c.allow_write.paths.contains(&PathBuf::from("/etc")));
    assert_eq!(
        sandbox_warnings(&settings).len(),
        2,
        "{:?}",
        settings.warnings
    );
}

#[test]
fn a_project_file_cannot_reopen_what_the_user_denies_reading() {
    let t = tree();
    t.user(
        r#"{"permissions": {"deny": ["Read(~/.aws/**)"]},
               "sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}}"#,
    )
    .project(
        r#"{"sandbox": {"filesystem": {
                "allowRead": ["~/.ssh/id_rsa", "~/.aws", "~/*", "./docs"],
                "denyRead": ["./private"], "allowWrite": ["~/.ssh/authorized_keys"]}}}"#,
    );
    let (_, c) = t.config(None);
    assert_eq!(c.allow_read.paths, [t.project.join("docs")]);
    assert!(c.allow_read.globs.is_empty());
    assert!(c.allow_write.is_empty(), "{:?}", c.allow_write);
    assert_eq!(c.notes.len(), 4, "{:?}", c.notes);
    // The project may still carve out of its own denies.
    t.user("{}");
    let (_, c) = t.config(None);
    assert_eq!(c.allow_read.paths.len(), 3);
}

#[test]
fn rules_merge_into_the_lists_and_protected_paths_are_always_there() {
    let t = tree();
    t.user(r#"{"permissions": {"deny": ["WebFetch(domain:*.internal.example.com)", "Edit(~/.config/**)"]}}"#)
        .project(r#"{"permissions": {"allow": ["WebFetch(domain:docs.rs)", "Edit(/out/**)", "Read(//opt/**)", "Edit"],
                                     "deny": ["Write(/vendor/**)", "Read(.env)"],
                                     "additionalDirectories": ["../shared"]},
                 "sandbox": {"enabled": true, "network": {"allowedDomains": ["docs.rs"]}}}"#);
    std::fs::create_dir_all(t.project.join("../shared")).unwrap();
    let (settings, c) = t.config(None);
    assert_eq!(c.allowed_domains, ["docs.rs"]);
    assert_eq!(c.denied_domains, ["*.internal.example.com"]);
    assert_eq!(c.allow_write.paths, [t.project.join("out")]);
    assert!(
        c.allow_read.is_empty(),
        "Read allow rules do not re-open anything"
    );
    assert!(c.deny_write.paths.contains(&t.home.join(".config")));
    assert!(c.deny_write.paths.contains(&t.project.join("vendor")));
    assert!(c
        .deny_read
        .globs
        .contains(&format!("{}/**/.env", t.project.display())));
    let shared = t.project.parent().unwrap().join("shared");
    assert_eq!(c.write_roots, [t.project.clone(), shared.clone()]);
    for root in [&t.project, &shared, &t.home] {
        for name in [
            ".git/hooks",
            ".git/config",
            ".claude",
            ".mcp.json",
            ".bashrc",
            ".gitconfig",
            ".vscode",
        ] {
            assert!(
                c.deny_write.paths.contains(&root.join(name)),
                "{}/{name}",
                root.display()
            );
        }
        assert!(
            !c.deny_write.paths.contains(&root.join(".git")),
            ".git itself stays writable"
        );
    }
    for file in &settings.files {
        assert!(c.deny_write.paths.contains(file), "{}", file.display());
    }
    assert_eq!(c.protected_names, protected_names());
}

#[test]
fn excluded_commands_take_a_line_out_only_when_every_command_matches() {
    let c = SandboxConfig {
        excluded_commands: vec!["docker:*".into(), "git status".into(), "make *".into()],
        ..SandboxConfig::default()
    };
    for line in [
        "docker ps",
        "docker compose up -d",
        "git status",
        "docker ps && git status",
        "docker ps | docker load",
        "docker ps 2>&1",
        "make test; make lint",
    ] {
        assert!(c.is_excluded(line), "{line}");
    }
    for line in [
        "",
        "dockerd",
        "git status --short",
        "docker ps | grep x",
        "docker ps && rm -rf /",
        "cd sub && docker ps",
        "docker run $(cat img)",
        "docker run `cat img`",
        "docker ps > out.txt",
        "docker ps 2>/dev/null",
        "docker load < image.tar",
        "docker load <<EOF\nx\nEOF",
        "DOCKER_HOST=x docker ps",
        "timeout 5 docker ps",
        "f() { docker ps; }; f",
        "docker ps &&",
        "( docker ps )\nrm x",
    ] {
        assert!(!c.is_excluded(line), "{line:?}");
    }
    assert!(!SandboxConfig::default().is_excluded("docker ps"));
}

#[test]
fn wrong_types_stop_the_load_with_the_file_named() {
    let t = tree();
    t.project(r#"{"sandbox": {"enabled": "true", "network": {"allowedDomains": "github.com"}}}"#);
    let err = Settings::load_with_home(&t.project, Some(&t.home), None).unwrap_err();
    assert_eq!(err.problems.len(), 2, "{err}");
    for p in &err.problems {
        assert_eq!(p.file, t.project.join(".claude/settings.json"));
    }
    let text = err.to_string();
    assert!(
        text.contains("sandbox.enabled") && text.contains("sandbox.network.allowedDomains"),
        "{text}"
    );
}

#[test]
fn no_sandbox_block_means_claude_codes_defaults() {
    let t = tree();
    let (settings, c) = t.config(None);
    assert!(!settings.sandbox.configured);
    assert!(!c.enabled && !c.fail_if_unavailable && !c.auto_allow_bash_if_sandboxed);
    assert!(c.allow_unsandboxed_commands);
    assert!(
        !c.deny_write.is_empty(),
        "protected paths are listed even so"
    );
}
