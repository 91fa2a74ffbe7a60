//! The shipped example (examples/settings.json and its hook scripts) loads
//! and behaves as its comments say.

use std::path::Path;

use baton_engine::permission::Approval;
use baton_engine::settings::Settings;
use baton_engine::{Outcome, Pipeline, ToolPool};
use serde_json::json;

use super::{approver, ran, tools, Env};

fn example_settings(env: &Env) -> Settings {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    std::os::unix::fs::symlink(
        examples.canonicalize().unwrap(),
        env.project.join("examples"),
    )
    .unwrap();
    let explicit = env.project.join("examples/settings.json");
    Settings::load_with_home(&env.project, Some(&env.home), Some(&explicit)).unwrap()
}

#[tokio::test]
async fn the_example_settings_work_end_to_end() {
    let env = Env::new();
    let settings = example_settings(&env);
    assert_eq!(settings.hooks.len(), 11);
    assert_eq!(settings.additional_directories.len(), 1);
    let yes = approver(Approval::Allow);
    let p = Pipeline::allow_all_unsafe(ToolPool::of(tools()))
        .with_settings(&settings)
        .with_approver(yes.clone());

    let r = env
        .call(
            &settings,
            &p,
            "Bash",
            json!({"command": "git push --force origin main"}),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("force-pushing main"), "{}", r.text());

    let r = env
        .call(
            &settings,
            &p,
            "Bash",
            json!({"command": "npm install left-pad"}),
        )
        .await;
    assert!(ran(&r), "{}", r.text());
    assert!(yes.asked.lock()[0].reason.contains("installing packages"));

    let r = env
        .call(&settings, &p, "Bash", json!({"command": "git log -3"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    assert!(
        r.text().starts_with("ran: git --no-pager log -3"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("cannot hang"), "{}", r.text());

    let r = env
        .call(
            &settings,
            &p,
            "Bash",
            json!({"command": "cargo test && sudo ls"}),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("Bash(sudo:*)"), "{}", r.text());

    let file = env.project.join("src/main.rs");
    let r = env
        .call(
            &settings,
            &p,
            "Edit",
            json!({"file_path": file.display().to_string()}),
        )
        .await;
    assert!(ran(&r), "{}", r.text());
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let log = std::fs::read_to_string(env.project.join(".claude/edits.log")).unwrap();
    assert!(log.contains(&file.display().to_string()), "{log}");
    assert_eq!(yes.asked.lock().len(), 1);
}
