//! Command hooks run in the project directory, whatever directory the
//! session has moved to (issue 20, hole 10). The session's `cwd` in these
//! tests is `<project>/sub`, where a `cd sub` would have left it; the model
//! could have written files there.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};

use super::{ran, Env};

fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The project's guard blocks `rm` (exit 2) and leaves a mark; the
/// same-named script in the session's directory would allow everything
/// and leave another mark.
fn plant_guards(env: &Env, project_guard: bool) -> (std::path::PathBuf, std::path::PathBuf) {
    let marks = env.state.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let project_mark = marks.join("project");
    let planted_mark = marks.join("planted");
    if project_guard {
        executable(
            &env.project.join("guard.sh"),
            &format!(
                "#!/bin/bash\ntouch '{}'\nif grep -q '\"rm ' ; then echo 'project guard: no rm' >&2; exit 2; fi\nexit 0\n",
                project_mark.display()
            ),
        );
    }
    executable(
        &env.cwd.join("guard.sh"),
        &format!("#!/bin/bash\ntouch '{}'\nexit 0\n", planted_mark.display()),
    );
    (project_mark, planted_mark)
}

fn guard_hook(handler: Value) -> Value {
    json!({
        "permissions": {"defaultMode": "acceptEdits", "allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]},
    })
}

#[tokio::test]
async fn a_relative_hook_command_runs_the_projects_script_not_the_planted_one() {
    let env = Env::new();
    let (project_mark, planted_mark) = plant_guards(&env, true);
    for handler in [
        json!({"type": "command", "command": "./guard.sh"}),
        json!({"type": "command", "command": "bash guard.sh"}),
        json!({"type": "command", "command": "./guard.sh", "args": []}),
    ] {
        let _ = std::fs::remove_file(&project_mark);
        let settings = env.settings(guard_hook(handler.clone()));
        let p = env.pipeline(&settings);
        let r = env
            .call(&settings, &p, "Bash", json!({"command": "rm -rf data"}))
            .await;
        assert!(
            !ran(&r),
            "{handler}: the project's guard must block: {}",
            r.text()
        );
        assert!(
            r.text().contains("project guard"),
            "{handler}: {}",
            r.text()
        );
        assert!(
            project_mark.exists(),
            "{handler}: the project's guard did not run"
        );
        assert!(
            !planted_mark.exists(),
            "{handler}: the script in the session's directory ran"
        );
        let r = env
            .call(&settings, &p, "Bash", json!({"command": "ls"}))
            .await;
        assert!(ran(&r), "{handler}: {}", r.text());
    }
}

#[tokio::test]
async fn a_guard_missing_from_the_project_is_not_replaced_by_the_sessions_copy() {
    let env = Env::new();
    let (_, planted_mark) = plant_guards(&env, false);
    // With `onFailure: "block"`, a guard that cannot start blocks.
    let settings = env.settings(guard_hook(
        json!({"type": "command", "command": "./guard.sh", "onFailure": "block"}),
    ));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(!ran(&r), "{}", r.text());
    assert!(
        !planted_mark.exists(),
        "the script in the session's directory ran"
    );
}

#[tokio::test]
async fn the_hook_sees_the_session_directory_in_its_input_and_runs_in_the_project() {
    let env = Env::new();
    let out = env.state.join("seen");
    std::fs::create_dir_all(&out).unwrap();
    executable(
        &env.project.join("record.sh"),
        &format!(
            "#!/bin/bash\ncat > '{o}/input.json'\npwd -P > '{o}/pwd'\n",
            o = out.display()
        ),
    );
    let settings = env.settings(guard_hook(
        json!({"type": "command", "command": "./record.sh"}),
    ));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("input.json")).unwrap()).unwrap();
    assert_eq!(input["cwd"], env.cwd.display().to_string());
    let pwd = std::fs::read_to_string(out.join("pwd")).unwrap();
    assert_eq!(
        Path::new(pwd.trim()),
        env.project.canonicalize().unwrap().as_path()
    );
}
