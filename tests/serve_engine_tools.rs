//! Claude Code's engine-level tools through real `baton serve` processes
//! (issue 22): plan mode with its approval line, `AskUserQuestion` with its
//! question line, and old tool names in calls.

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn start(dir: &std::path::Path) -> Serve {
    Serve::start(BATON, &["--cwd", dir.to_str().unwrap()])
}

fn use_(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

fn message(calls: Vec<Value>) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": calls}})
}

fn text(result: &Value) -> String {
    result["block"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn results(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["type"] == "result").collect()
}

#[test]
fn plan_mode_blocks_writes_until_the_host_approves_the_plan_into_a_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut s = start(d);
    let write = |id: &str, file: &str| {
        use_(
            id,
            "Write",
            json!({"file_path": d.join(file), "content": "x"}),
        )
    };
    s.send(message(vec![
        use_("enter", "EnterPlanMode", json!({})),
        write("w1", "during.txt"),
        use_("ls", "Bash", json!({"command": "ls"})),
        use_(
            "exit",
            "ExitPlanMode",
            json!({"plan": "# Plan\n1. write after.txt"}),
        ),
        write("w2", "after.txt"),
    ]));
    let mut asked = Vec::new();
    let lines = s.answering(|req| {
        asked.push(req.clone());
        json!({"decision": "allow", "mode": "acceptEdits"})
    });
    let r = results(&lines);
    assert_eq!(r.len(), 5, "{lines:?}");
    let kinds: Vec<&str> = r
        .iter()
        .map(|l| l["outcome"]["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        kinds,
        ["success", "denied", "success", "success", "success"],
        "{lines:?}"
    );
    assert!(text(r[1]).contains("plan mode"), "{}", r[1]);
    assert!(text(r[3]).contains("acceptEdits"), "{}", r[3]);
    // Only the plan was asked about, as a plan approval with the plan.
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["kind"], "plan_approval");
    assert_eq!(asked[0]["tool_name"], "ExitPlanMode");
    assert_eq!(asked[0]["input"]["plan"], "# Plan\n1. write after.txt");
    assert!(!d.join("during.txt").exists());
    assert!(d.join("after.txt").exists());
    s.finish();
}

#[test]
fn a_rejected_plan_keeps_plan_mode_and_a_bad_mode_is_an_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut s = start(d);
    s.send(message(vec![
        use_("enter", "EnterPlanMode", json!({})),
        use_("exit", "ExitPlanMode", json!({"plan": "p"})),
    ]));
    let request = s.next_of("permission_request");
    s.send(
        json!({"type": "approve", "request_id": request["request_id"],
        "decision": "allow", "mode": "sideways"}),
    );
    assert_eq!(s.next_of("error")["type"], "error");
    s.send(
        json!({"type": "approve", "request_id": request["request_id"],
        "decision": "deny", "reason": "too vague"}),
    );
    let lines = s.until("done");
    let exit = results(&lines)
        .into_iter()
        .find(|l| l["tool_use_id"] == "exit")
        .expect("the ExitPlanMode result");
    assert_eq!(exit["outcome"]["kind"], "denied", "{lines:?}");
    assert!(text(exit).contains("too vague"));
    // Still in plan mode in the next message.
    s.send(message(vec![use_(
        "w",
        "Write",
        json!({"file_path": d.join("x.txt"), "content": "x"}),
    )]));
    let lines = s.until("done");
    let r = results(&lines);
    assert_eq!(r[0]["outcome"]["kind"], "denied", "{lines:?}");
    assert!(text(r[0]).contains("plan mode"));
    assert!(!d.join("x.txt").exists());
    s.finish();
}

fn question() -> Value {
    json!({"questions": [
        {"question": "Which database?", "header": "Database", "multiSelect": false,
         "options": [{"label": "Postgres", "description": "server"}, {"label": "SQLite", "description": "file"}]},
        {"question": "Which extras?", "header": "Extras", "multiSelect": true,
         "options": [{"label": "auth", "description": "a"}, {"label": "cache", "description": "c"}, {"label": "logs", "description": "l"}]}
    ]})
}

#[test]
fn ask_user_question_goes_to_the_host_and_comes_back_in_claude_codes_shape() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(message(vec![
        use_("q", "AskUserQuestion", question()),
        use_("bad", "AskUserQuestion", json!({"questions": [
            {"question": "X?", "header": "far too long a header", "multiSelect": false,
             "options": [{"label": "a", "description": "a"}, {"label": "b", "description": "b"}]}]})),
    ]));
    let request = s.next_of("question_request");
    assert_eq!(request["tool_use_id"], "q");
    assert_eq!(request["questions"], question()["questions"]);
    // A malformed answer is an error line; the question still waits.
    s.send(
        json!({"type": "question_answer", "request_id": request["request_id"],
        "decision": "answer", "answers": {"Which database?": 1}}),
    );
    assert_eq!(s.next_of("error")["type"], "error");
    s.send(
        json!({"type": "question_answer", "request_id": request["request_id"],
        "decision": "answer",
        "answers": {"Which database?": "SQLite", "Which extras?": "auth, logs"}}),
    );
    let lines = s.until("done");
    let r = results(&lines);
    assert_eq!(r.len(), 2, "{lines:?}");
    let by_id = |id: &str| *r.iter().find(|l| l["tool_use_id"] == id).unwrap();
    let answered = by_id("q");
    assert_eq!(answered["outcome"]["kind"], "success", "{answered}");
    assert!(
        text(answered).contains("\"Which database?\"=\"SQLite\""),
        "{answered}"
    );
    assert!(text(answered).contains("\"Which extras?\"=\"auth, logs\""));
    let bad = by_id("bad");
    assert_eq!(bad["outcome"]["kind"], "validation_failed", "{bad}");
    assert!(text(bad).contains("at most 12"), "{bad}");
    s.finish();
}

#[test]
fn a_declined_question_tells_the_model_to_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(message(vec![use_("q", "AskUserQuestion", question())]));
    let request = s.next_of("question_request");
    s.send(
        json!({"type": "question_answer", "request_id": request["request_id"],
        "decision": "decline", "reason": "pick for me"}),
    );
    let lines = s.until("done");
    let r = results(&lines);
    assert!(text(r[0]).contains("declined"), "{lines:?}");
    assert!(text(r[0]).contains("pick for me"));
    assert!(text(r[0]).contains("Go on without"));
    s.finish();
}

#[test]
fn old_tool_names_reach_todays_tools() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    // KillShell is TaskStop's old name: an unknown task id is the tool's
    // own error, not "no such tool".
    s.send(message(vec![use_(
        "k",
        "KillShell",
        json!({"task_id": "nope"}),
    )]));
    let mut asked = Vec::new();
    let lines = s.answering(|req| {
        asked.push(req["tool_name"].clone());
        json!({"decision": "deny"})
    });
    assert_eq!(asked, [json!("TaskStop")], "{lines:?}");
    // A rule naming the old tool holds for the new one.
    let dir2 = tempfile::tempdir().unwrap();
    let settings = dir2.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"deny": ["KillBash"]}}).to_string(),
    )
    .unwrap();
    let mut s2 = Serve::start(
        BATON,
        &[
            "--cwd",
            dir2.path().to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ],
    );
    s2.send(message(vec![use_(
        "k",
        "TaskStop",
        json!({"task_id": "nope"}),
    )]));
    let lines = s2.until("done");
    let r = results(&lines);
    assert!(
        matches!(
            r[0]["outcome"]["kind"].as_str(),
            Some("denied" | "unknown_tool")
        ),
        "{lines:?}"
    );
    s2.finish();
    s.finish();
}

#[test]
fn a_project_skill_is_offered_and_returns_its_instructions() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join(".claude/skills/release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\ndescription: Writes release notes\nallowed-tools: Read, Bash(git log:*)\n---\nWrite notes for version $0 from `git log`.\n",
    )
    .unwrap();
    let mut s = start(dir.path());
    s.send(json!({"type": "tools"}));
    let tools = s.next_of("tools");
    let skill_tool = tools["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "Skill"))
        .unwrap_or_else(|| panic!("no Skill tool: {tools}"));
    assert!(
        skill_tool["description"]
            .as_str()
            .unwrap_or_default()
            .contains("- release-notes: Writes release notes"),
        "{skill_tool}"
    );
    s.send(message(vec![
        use_(
            "k",
            "Skill",
            json!({"skill": "release-notes", "args": "2.1"}),
        ),
        use_("u", "Skill", json!({"skill": "nope"})),
    ]));
    let lines = s.until("done");
    let r = results(&lines);
    assert_eq!(r[0]["outcome"]["kind"], "success", "{lines:?}");
    assert!(
        text(r[0]).contains("Write notes for version 2.1 from"),
        "{}",
        r[0]
    );
    assert_eq!(r[1]["outcome"]["kind"], "validation_failed", "{}", r[1]);
    assert!(text(r[1]).contains("release-notes"), "{}", r[1]);
    s.finish();
}

#[test]
fn read_only_mcp_tools_run_in_plan_mode_and_mcp_writers_wait_for_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/mcp/notes_server.py");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        // The form plugins ship: no `mcpServers` wrapper.
        json!({"notes": {"command": "python3", "args": [server], "timeout": 60000}}).to_string(),
    )
    .unwrap();
    // Every tool of the server is allowed by rule: only plan mode stops
    // the writer.
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["mcp__notes"]}}).to_string(),
    )
    .unwrap();
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.path().to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
            "--strict-mcp-config",
            "--mcp-config",
            config.to_str().unwrap(),
            "--permission-mode",
            "plan",
        ],
    );
    s.send(message(vec![
        use_("s", "mcp__notes__search", json!({"query": "call"})),
        use_("a", "mcp__notes__add", json!({"text": "during plan"})),
        use_("x", "ExitPlanMode", json!({"plan": "add a note"})),
        use_("b", "mcp__notes__add", json!({"text": "after plan"})),
    ]));
    let lines = s.answering(|_| json!({"decision": "allow", "mode": "default"}));
    let r = results(&lines);
    let kinds: Vec<&str> = r
        .iter()
        .map(|l| l["outcome"]["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        kinds,
        ["success", "denied", "success", "success"],
        "{lines:?}"
    );
    assert!(text(r[0]).contains("exactly one result"), "{}", r[0]);
    assert!(text(r[1]).contains("plan mode"), "{}", r[1]);
    assert!(text(r[3]).contains("added note"), "{}", r[3]);
    s.finish();
}

#[test]
fn plain_stdout_of_a_session_start_hook_is_context() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "printf 'Team rule: tabs, not spaces.\\n'"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let s = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.path().to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ],
    );
    let line = s.next_of("session_hook");
    assert_eq!(line["event"], "SessionStart");
    assert_eq!(
        line["additional_context"],
        json!(["Team rule: tabs, not spaces."]),
        "{line}"
    );
    s.finish();
}

#[test]
fn an_interrupted_question_is_withdrawn() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path());
    s.send(message(vec![use_("q", "AskUserQuestion", question())]));
    let request = s.next_of("question_request");
    s.send(json!({"type": "interrupt", "kind": "cancel"}));
    let withdrawn = s.next_of("question_cancelled");
    assert_eq!(withdrawn["request_id"], request["request_id"]);
    assert_eq!(withdrawn["tool_use_id"], "q");
    let lines = s.until("done");
    assert_eq!(
        results(&lines)[0]["outcome"]["kind"],
        "cancelled",
        "{lines:?}"
    );
    // Answering it now is an error line.
    s.send(
        json!({"type": "question_answer", "request_id": request["request_id"],
        "decision": "decline"}),
    );
    assert_eq!(s.next_of("error")["type"], "error");
    s.finish();
}

/// The MCP tools of Claude Code's set through `baton serve`, against the
/// demo's real Python server: `WaitForMcpServers` reports it connected,
/// `RefreshMcpTools` re-lists its tools, `ReadMcpResourceDirTool` answers
/// in its shape (the server has no resources: an empty listing).
#[test]
fn mcp_wait_refresh_and_resource_directory_run_through_serve() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/mcp/notes_server.py");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"notes": {"command": "python3", "args": [server], "timeout": 60000}}})
            .to_string(),
    )
    .unwrap();
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.path().to_str().unwrap(),
            "--strict-mcp-config",
            "--mcp-config",
            config.to_str().unwrap(),
        ],
    );
    s.send(message(vec![
        use_("w", "WaitForMcpServers", json!({"server": "notes"})),
        use_("r", "RefreshMcpTools", json!({"server": "notes"})),
        use_(
            "d",
            "ReadMcpResourceDirTool",
            json!({"server": "notes", "uri": "notes://"}),
        ),
    ]));
    let lines = s.until("done");
    let r = results(&lines);
    assert_eq!(r.len(), 3, "{lines:?}");
    assert_eq!(r[0]["outcome"]["kind"], "success", "{}", r[0]);
    assert!(text(r[0]).contains("connected"), "{}", r[0]);
    assert_eq!(r[1]["outcome"]["kind"], "success", "{}", r[1]);
    assert!(text(r[1]).contains("refreshed"), "{}", r[1]);
    assert!(text(r[2]).contains("resources"), "{}", r[2]);
    s.finish();
}
