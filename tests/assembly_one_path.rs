//! The library and the CLI assemble a session the same way (src/assembly.rs):
//! for one project, `Engine::configured` and `baton tools` offer the same
//! tools, with the same definitions: the project's skills and agent types
//! included, a tool a deny rule names whole left out.

use std::path::Path;

use baton::engine::wire::WireFormat;
use baton::Engine;
use serde_json::Value;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let skill = d.join(".claude/skills/greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\ndescription: Greets someone\n---\nSay hello to $ARGUMENTS.\n",
    )
    .unwrap();
    let agents = d.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("proofreader.md"),
        "---\nname: proofreader\ndescription: Reads prose for typos\ntools: Read, Grep\n---\nYou proofread.\n",
    )
    .unwrap();
    std::fs::write(
        d.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["WebFetch"]}}"#,
    )
    .unwrap();
    dir
}

fn by_name(defs: &[Value]) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = defs
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap_or_default().to_string(),
                d.clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn cli_tools(project: &Path) -> Vec<Value> {
    baton_test_support::cli::json_stdout(
        crate::support::baton()
            .args(["tools", "--cwd"])
            .arg(project)
            .arg("--state-dir")
            .arg(project.join(".state")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_and_the_cli_offer_the_same_tools() {
    let dir = project();
    let project = dir.path().canonicalize().unwrap();
    let (builder, _settings) = Engine::configured(&project, None).unwrap();
    let engine = builder
        .state_dir(project.join(".state-lib"))
        .build()
        .unwrap();
    let library = engine.request_tools(WireFormat::Anthropic).tools;
    let cli = cli_tools(&project);

    let library = by_name(&library);
    let cli = by_name(&cli);
    let names: Vec<&str> = library.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"Skill"),
        "the project's skill makes Skill offered: {names:?}"
    );
    assert!(!names.contains(&"WebFetch"), "denied whole: {names:?}");
    let agent = &library.iter().find(|(n, _)| n == "Agent").unwrap().1;
    assert!(
        agent.to_string().contains("proofreader"),
        "the project's agent type is offered"
    );
    assert_eq!(
        names,
        cli.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        "the same tools"
    );
    for ((name, lib), (_, cli)) in library.iter().zip(&cli) {
        assert_eq!(lib, cli, "{name}: the same definition");
    }
}
