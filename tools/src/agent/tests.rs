//! Definitions parsed from real agent files and from crafted ones; the
//! subagent's pool cut from its parent's.

use std::path::{Path, PathBuf};

use baton_engine::subagent::{AgentDefinition, DefinitionSource};
use baton_engine::PermissionMode;

use super::catalog::AgentCatalog;
use super::definitions::{load_dir, parse};
use super::run::child_pool;

fn fixture(name: &str) -> (String, DefinitionSource) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (text, DefinitionSource::Project(path))
}

fn parsed(name: &str) -> (AgentDefinition, Vec<String>) {
    let (text, source) = fixture(name);
    let p = parse(&text, source);
    let d = p
        .definition
        .unwrap_or_else(|| panic!("{:?}", p.diagnostics));
    (d, p.diagnostics)
}

#[test]
fn a_comma_separated_tool_list() {
    let (d, diags) = parsed("1code-code-reviewer.md");
    assert_eq!(d.name, "code-reviewer");
    assert!(d.description.starts_with("Reviews code changes"));
    assert_eq!(
        d.tools,
        Some(vec![
            "Read".into(),
            "Glob".into(),
            "Grep".into(),
            "Bash".into()
        ])
    );
    assert_eq!(d.model.as_deref(), Some("sonnet"));
    assert!(d
        .system_prompt
        .starts_with("You are a focused code reviewer"));
    assert!(d.system_prompt.ends_with("still needed."));
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn flow_lists_escaped_newlines_and_extra_keys() {
    for name in ["1215-labs-debugger.md", "1215-labs-code-reviewer.md"] {
        let (d, diags) = parsed(name);
        let tools = d.tools.clone().unwrap();
        assert!(tools.contains(&"Bash(*)".to_string()), "{name}: {tools:?}");
        assert!(d.description.starts_with("Use this agent when"), "{name}");
        assert_eq!(d.model.as_deref(), Some("inherit"));
        // color, category, related: kept out, each reported once.
        for key in ["color", "category", "related"] {
            assert_eq!(
                diags
                    .iter()
                    .filter(|m| m.contains(&format!("`{key}`")))
                    .count(),
                1,
                "{name}: {diags:?}"
            );
        }
        assert!(diags.iter().all(|m| m.contains(name)), "{diags:?}");
    }
}

#[test]
fn a_block_scalar_description() {
    let (d, _) = parsed("1215-labs-meta-agent.md");
    assert_eq!(d.name, "meta-agent");
    assert!(d.description.contains('\n'));
    assert!(d.description.contains("<example>"));
    assert_eq!(d.model.as_deref(), Some("opus"));
    // The tool description keeps each type on one line.
    let catalog = AgentCatalog::builtin().with(d);
    let text = catalog.describe();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.contains("- meta-agent: Generates new"), "{text}");
}

fn src() -> DefinitionSource {
    DefinitionSource::Project(PathBuf::from("/p/.claude/agents/x.md"))
}

#[test]
fn crafted_files_get_diagnostics_not_panics() {
    let cases = [
        ("no frontmatter at all", "no YAML frontmatter"),
        ("---\nname: x\n", "no YAML frontmatter"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "not a mapping"),
        ("---\nname: x\n---\nbody", "no `description`"),
    ];
    for (text, expected) in cases {
        let p = parse(text, src());
        assert!(p.definition.is_none(), "{text}");
        assert!(
            p.diagnostics
                .iter()
                .any(|d| d.contains(expected) && d.contains("x.md")),
            "{text}: {:?}",
            p.diagnostics
        );
    }
    let p = parse(
        "---\ndescription: d\npermissionMode: yolo\nmaxTurns: -1\ntools: 7\n---\n",
        src(),
    );
    let d = p.definition.unwrap();
    assert_eq!(d.name, "x", "the file name stands in for a missing name");
    assert_eq!(d.permission_mode, None);
    assert_eq!(d.max_turns, None);
    assert_eq!(d.tools, Some(vec!["7".into()]));
    assert!(p
        .diagnostics
        .iter()
        .any(|m| m.contains("unknown permission mode `yolo`")));
    assert!(p.diagnostics.iter().any(|m| m.contains("maxTurns")));
}

#[test]
fn every_documented_key() {
    let text = "\u{feff}---\r\nname: reviewer\r\ndescription: \"Reviews: carefully\"\r\n\
                tools: '*'\r\ndisallowedTools: [Write, Task]\r\nmodel: haiku\r\n\
                permissionMode: plan\r\nmaxTurns: 12\r\n---\r\nBe careful.\r\n";
    let p = parse(text, src());
    let d = p.definition.unwrap();
    assert_eq!(d.description, "Reviews: carefully");
    assert_eq!(d.tools, None, "`*` means every tool");
    assert_eq!(d.disallowed_tools, vec!["Write", "Task"]);
    assert_eq!(d.permission_mode, Some(PermissionMode::Plan));
    assert_eq!(d.max_turns, Some(12));
    assert_eq!(d.system_prompt, "Be careful.");
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
}

#[test]
fn the_project_hides_the_user_and_both_hide_builtins() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let write = |root: &Path, file: &str, body: &str| {
        let dir = root.join(".claude/agents");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(file), body).unwrap();
    };
    write(
        home.path(),
        "a.md",
        "---\nname: helper\ndescription: user's\n---\n",
    );
    write(
        home.path(),
        "b.md",
        "---\nname: only-user\ndescription: u\n---\n",
    );
    write(
        project.path(),
        "a.md",
        "---\nname: Helper\ndescription: project's\n---\n",
    );
    write(project.path(), "broken.md", "nothing here");
    write(
        project.path(),
        "gp.md",
        "---\nname: general-purpose\ndescription: mine\n---\n",
    );
    std::fs::write(project.path().join(".claude/agents/notes.txt"), "ignored").unwrap();
    let c = AgentCatalog::load(project.path(), Some(home.path()));
    assert_eq!(c.find(Some("helper")).unwrap().description, "project's");
    assert_eq!(c.find(Some("only-user")).unwrap().description, "u");
    assert_eq!(c.find(None).unwrap().description, "mine");
    // The broken file, and the user's `helper` hidden by the project's
    // (overriding a built-in is not a duplicate worth a warning).
    assert_eq!(c.diagnostics.len(), 2, "{:?}", c.diagnostics);
    assert!(c.diagnostics[0].contains("broken.md"));
    assert!(c.diagnostics[1].contains("agent `Helper` is defined twice"));
    let (defs, diags) = load_dir(&project.path().join("missing"), true);
    assert!(defs.is_empty() && diags.is_empty());
}

#[test]
fn a_child_pool_never_widens_its_parent() {
    let root = crate::BuiltinConfig::default()
        .pool(&baton_engine::AllowAllUnsafe)
        .unwrap();
    let parent = root.push_restriction(["Read", "Grep", "Agent"]);
    let mut def = AgentDefinition::new("d", "d");
    def.tools = Some(vec!["Read".into(), "Bash(git log:*)".into(), "Task".into()]);
    let child = child_pool(&parent, &def);
    assert_eq!(child.names(), vec!["Agent", "Read"]);
    def.tools = None;
    def.disallowed_tools = vec!["Grep".into()];
    assert_eq!(child_pool(&parent, &def).names(), vec!["Agent", "Read"]);
    let explore = AgentCatalog::builtin().find(Some("Explore")).unwrap();
    let names = child_pool(&root, &explore).names();
    assert!(!names.is_empty());
    assert!(
        names
            .iter()
            .all(|n| super::READ_ONLY_TOOLS.contains(&n.as_str())),
        "{names:?}"
    );
    assert!(!names.contains(&"Bash".to_string()));
}
