//! Skills through the library (a real engine, the built-in tools and a
//! scripted model loop for subagents): an inline skill returns its
//! instructions with the arguments put in; a `context: fork` skill runs as
//! a subagent whose "model" is the skill body, with the skill's model.

use baton::engine::subagent::{SubagentLimits, SubagentService};
use baton::engine::{AllowAllUnsafe, Outcome};
use baton::Engine;
use baton_test_support::scripted;
use baton_tools::skill::SkillCatalog;
use common::call;
use scripted::*;
use serde_json::json;

use crate::common;

fn write_skill(project: &std::path::Path, name: &str, text: &str) {
    let dir = project.join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_and_forked_skills_run_through_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_skill(
        d,
        "greet",
        "---\ndescription: Greets someone\n---\nSay hello to $ARGUMENTS[0] in $1.\n",
    );
    // The forked skill's body is the scripted subagent's "model": one Bash
    // call built from the arguments, then a reply.
    let body = json!({"steps": [[{"id": "b", "name": "Bash", "input": {"command": "echo looked-into-$ARGUMENTS"}}]], "reply": "research done"});
    write_skill(
        d,
        "research",
        &format!(
            "---\ndescription: Research in a subagent\ncontext: fork\nmodel: haiku\n---\n{body}\n"
        ),
    );
    let skills = SkillCatalog::load(d, None, &[]);
    assert!(skills.diagnostics.is_empty(), "{:?}", skills.diagnostics);
    let runner = Scripted::new();
    let tools = baton::BuiltinConfig {
        skills,
        ..Default::default()
    }
    .tools()
    .unwrap();
    let pool = baton::engine::ToolPool::assemble(
        baton::engine::PoolSpec {
            builtins: tools,
            ..Default::default()
        },
        &AllowAllUnsafe,
    );
    let engine = Engine::builder(pool)
        .cwd(d)
        .state_dir(d.join("state"))
        .subagent_service(SubagentService::with_limits(
            runner.clone(),
            SubagentLimits::default(),
        ))
        .allow_all_unsafe()
        .build()
        .unwrap();
    let batch = engine.open_batch().await.unwrap();
    batch
        .add(call(
            "g",
            "Skill",
            json!({"skill": "greet", "args": "Ada French"}),
        ))
        .unwrap();
    batch
        .add(call(
            "r",
            "Skill",
            json!({"skill": "/research", "args": "caching"}),
        ))
        .unwrap();
    let (results, _) = batch.finish().await;
    assert_eq!(
        results[0].outcome,
        Outcome::Success,
        "{}",
        results[0].text()
    );
    assert!(
        results[0].text().contains("Say hello to Ada in French."),
        "{}",
        results[0].text()
    );
    assert_eq!(
        results[1].outcome,
        Outcome::Success,
        "{}",
        results[1].text()
    );
    assert!(
        results[1].text().contains("research done"),
        "{}",
        results[1].text()
    );
    let records = runner.all();
    assert_eq!(records.len(), 1, "one subagent ran");
    assert_eq!(records[0].agent_type, "general-purpose");
    assert_eq!(records[0].model.as_deref(), Some("haiku"));
    assert_eq!(records[0].batches[0][0].3, Outcome::Success);
}

/// A skill and an agent shipped by an enabled plugin, through the command
/// line (`baton run` and `baton tools`, real processes): named
/// `plugin:skill` and `plugin:agent`.
#[test]
fn an_enabled_plugins_skill_and_agent_are_offered_by_the_command() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let plugin = tempfile::tempdir().unwrap();
    let skill = plugin.path().join("skills/lint");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\ndescription: Lints the code\n---\nLint every file under $ARGUMENTS.\n",
    )
    .unwrap();
    std::fs::create_dir_all(plugin.path().join("agents")).unwrap();
    std::fs::write(
        plugin.path().join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews diffs for the tidy plugin\ntools: Read, Grep\n---\nReview.\n",
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".claude/plugins")).unwrap();
    std::fs::write(
        home.path().join(".claude/plugins/installed_plugins.json"),
        json!({"version": 2, "plugins": {"tidy@market": [
            {"scope": "user", "installPath": plugin.path(), "version": "1.0.0"}]}})
        .to_string(),
    )
    .unwrap();
    let settings = project.path().join("s.json");
    std::fs::write(
        &settings,
        json!({"enabledPlugins": {"tidy@market": true}}).to_string(),
    )
    .unwrap();
    let message = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "s", "name": "Skill", "input": {"skill": "tidy:lint", "args": "src/"}}
    ]});
    let out = baton_test_support::cli::with_stdin(
        crate::support::baton()
            .args(["run", "--cwd"])
            .arg(project.path())
            .arg("--settings")
            .arg(&settings)
            .arg("-")
            .env("HOME", home.path())
            .env_remove("CLAUDE_CONFIG_DIR"),
        &message.to_string(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Lint every file under src/."),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools = crate::support::baton()
        .args(["tools", "--cwd"])
        .arg(project.path())
        .arg("--settings")
        .arg(&settings)
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&tools.stdout);
    assert!(
        listed.contains("tidy:reviewer: Reviews diffs for the tidy plugin"),
        "{listed}"
    );
}
