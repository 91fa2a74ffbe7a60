use super::*;
use crate::test_support::Harness;
use baton_engine::Outcome;
use serde_json::json;
use std::path::Path;

fn write_skill(root: &Path, dir: &str, text: &str) {
    let d = root.join(dir);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("SKILL.md"), text).unwrap();
}

fn fixture() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    tempfile::TempDir,
    SkillCatalog,
) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let plugin = tempfile::tempdir().unwrap();
    let user = home.path().join(".claude/skills");
    let proj = project.path().join(".claude/skills");
    write_skill(
        &proj,
        "fix-issue",
        "---\nname: fix-issue\ndescription: Fix a GitHub issue by number\nallowed-tools: Read, Grep, Bash(git:*)\nmodel: haiku\n---\nFix issue $ARGUMENTS following our standards.\nScripts: ${CLAUDE_SKILL_DIR}/scripts\n",
    );
    write_skill(
        &proj,
        "shared",
        "---\ndescription: project's copy\n---\nproject body\n",
    );
    write_skill(
        &user,
        "shared",
        "---\ndescription: personal copy\n---\npersonal body\n",
    );
    write_skill(
        &proj,
        "nodesc",
        "First paragraph is the description.\n\nMore text.\n",
    );
    write_skill(&proj, "broken", "---\n: [\n---\nbody\n");
    write_skill(
        &proj,
        "deploy",
        "---\ndescription: Deploy\ndisable-model-invocation: true\n---\nDeploy it.\n",
    );
    write_skill(
        &proj,
        "research",
        "---\ndescription: Research in a fork\ncontext: fork\nagent: Explore\n---\nResearch $0 thoroughly.\n",
    );
    write_skill(
        &plugin.path().join("skills"),
        "lint",
        "---\ndescription: Lint\n---\nLint all.\n",
    );
    let catalog = SkillCatalog::load(
        project.path(),
        Some(home.path()),
        &[("tidy".to_string(), plugin.path().to_path_buf())],
    );
    (home, project, plugin, catalog)
}

#[test]
fn skills_load_from_every_place_with_claude_codes_precedence() {
    let (_h, _p, _pl, c) = fixture();
    let names: Vec<&str> = c.skills().iter().map(|s| s.name.as_str()).collect();
    for name in [
        "fix-issue",
        "shared",
        "nodesc",
        "deploy",
        "research",
        "tidy:lint",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert_eq!(c.find("shared").unwrap().description, "personal copy");
    assert_eq!(
        c.find("/nodesc").unwrap().description,
        "First paragraph is the description."
    );
    let fix = c.find("fix-issue").unwrap();
    assert_eq!(fix.allowed_tools, ["Read", "Grep", "Bash(git:*)"]);
    assert_eq!(fix.model.as_deref(), Some("haiku"));
    let research = c.find("research").unwrap();
    assert!(research.fork);
    assert_eq!(research.agent.as_deref(), Some("Explore"));
    let d = c.diagnostics.join("\n");
    assert!(d.contains("skill `shared` is defined twice"), "{d}");
    assert!(d.contains("broken/SKILL.md"), "{d}");
}

#[tokio::test]
async fn invoking_returns_the_body_with_arguments_and_claude_codes_response() {
    let (_h, _p, _pl, c) = fixture();
    let tool = tool(c.clone(), AgentCatalog::builtin()).unwrap();
    let described = tool.def().prompt_text().to_string();
    assert!(described.contains("- fix-issue: Fix a GitHub issue by number"));
    assert!(described.contains("- tidy:lint: Lint"));
    assert!(
        !described.contains("deploy"),
        "user-only skills are not offered"
    );
    let h = Harness::new(vec![tool]);
    let r = h
        .run(
            "Skill",
            json!({"skill": "fix-issue", "args": "123"}),
            h.dir.path(),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    let text = r.text();
    assert!(
        text.contains("Fix issue 123 following our standards."),
        "{text}"
    );
    let dir = c.find("fix-issue").unwrap().dir.display().to_string();
    assert!(text.contains(&format!("Scripts: {dir}/scripts")), "{text}");
    let response = r.response.expect("a structured response");
    assert_eq!(response["commandName"], "fix-issue");
    assert_eq!(response["status"], "inline");
    assert_eq!(response["model"], "haiku");
    assert_eq!(
        response["allowedTools"],
        json!(["Read", "Grep", "Bash(git:*)"])
    );
}

#[tokio::test]
async fn unknown_user_only_and_forked_skills() {
    let (_h, _p, _pl, c) = fixture();
    let h = Harness::new(vec![tool(c, AgentCatalog::builtin()).unwrap()]);
    let r = h.run("Skill", json!({"skill": "nope"}), h.dir.path()).await;
    assert_eq!(r.outcome, Outcome::ValidationFailed);
    assert!(
        r.text().contains("Available skills: ") && r.text().contains("fix-issue"),
        "{}",
        r.text()
    );
    let r = h
        .run("Skill", json!({"skill": "deploy"}), h.dir.path())
        .await;
    assert_eq!(r.outcome, Outcome::ValidationFailed);
    assert!(r.text().contains("only be invoked by the user"));
    // A forked skill goes to the subagent machinery (here: no runner).
    let r = h
        .run(
            "Skill",
            json!({"skill": "research", "args": "caching"}),
            h.dir.path(),
        )
        .await;
    assert_eq!(r.outcome, Outcome::ToolError, "{}", r.text());
    assert!(r.text().contains("No subagent runner"), "{}", r.text());
}

#[test]
fn custom_commands_are_skills_named_by_their_path() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cmds = project.path().join(".claude/commands");
    std::fs::create_dir_all(cmds.join("git/deep")).unwrap();
    std::fs::write(
        cmds.join("commit.md"),
        "---\nallowed-tools: Bash(git add:*)\ndescription: Create a git commit\n---\nCommit $ARGUMENTS.\n",
    )
    .unwrap();
    std::fs::write(
        cmds.join("git/deep/split.md"),
        "---\ndescription: Split changes\nname: ignored-name\n---\nSplit them.\n",
    )
    .unwrap();
    // No description: the user may run it, the model may not.
    std::fs::write(cmds.join("quiet.md"), "# Quiet\nDo it quietly.\n").unwrap();
    std::fs::write(cmds.join("notes.txt"), "not a command").unwrap();
    // A skill of the same name wins over a command.
    write_skill(
        &project.path().join(".claude/skills"),
        "commit",
        "---\ndescription: the skill\n---\nskill body\n",
    );
    let catalog = SkillCatalog::load(project.path(), Some(home.path()), &[]);
    let names: Vec<&str> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["commit", "git:deep:split", "quiet"]);
    assert!(catalog.find("commit").unwrap().body.contains("skill body"));
    assert!(catalog.find("git:deep:split").unwrap().description == "Split changes");
    assert!(catalog.find("quiet").unwrap().user_only);
    assert!(!catalog.find("git:deep:split").unwrap().user_only);
    assert!(
        catalog
            .diagnostics
            .iter()
            .any(|d| d.contains("defined twice")),
        "{:?}",
        catalog.diagnostics
    );
}
