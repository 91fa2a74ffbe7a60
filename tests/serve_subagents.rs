//! A Python host runs subagents over `baton serve`: requests, nested
//! messages named by agent, approvals with their chain, results.

use baton_test_support::python_host;

#[test]
fn a_python_host_runs_a_subagent_tree_over_serve() {
    let dir = tempfile::tempdir().unwrap();
    let s = python_host::run(crate::support::BATON, "subagents.py", dir.path());
    assert_eq!(s["exit"], 0, "{s}");
    assert_eq!(s["errors"], serde_json::json!([]), "{s}");
    assert_eq!(s["order"], serde_json::json!(["A", "B", "C", "E"]));
    assert_eq!(s["done_blocks"], 4);
    let a = s["a"].as_str().unwrap();
    assert_eq!(s["a_outcome"], "success", "{a}");
    assert!(a.contains("A finished") && a.contains("from-sub-a"), "{a}");
    assert!(
        a.contains("inner done") && a.contains("from-depth-two"),
        "{a}"
    );
    assert!(
        a.contains("tool_uses: 2") && a.contains("total_tokens: 15"),
        "{a}"
    );
    assert_eq!(s["b_error"], true);
    assert!(
        s["b"].as_str().unwrap().contains("the model gave up"),
        "{s}"
    );
    assert!(s["c"].as_str().unwrap().contains("C finished"), "{s}");
    assert_eq!(s["touched"], true, "the approved write ran");
    assert_eq!(
        s["approval_chains"]["c-touch"],
        serde_json::json!(["C"]),
        "{s}"
    );
    assert_eq!(s["a2_chain"], serde_json::json!(["A", "A2"]));
    assert_eq!(s["a_type"], "general-purpose");
    assert!(s["a_tools"].as_array().unwrap().iter().any(|t| t == "Bash"));
    assert_eq!(s["sub_orders"]["A"], serde_json::json!(["a-echo", "A2"]));
    let e = s["e"].as_str().unwrap();
    assert!(e.contains("'code-reviewer' not found"), "{e}");
}

#[test]
fn subagent_hooks_reach_a_python_host_over_serve() {
    let dir = tempfile::tempdir().unwrap();
    let s = python_host::run(crate::support::BATON, "subagent_hooks.py", dir.path());
    assert_eq!(s["exit"], 0, "{s}");
    assert_eq!(s["errors"], serde_json::json!([]), "{s}");
    assert_eq!(s["additional_context"], serde_json::json!(["house rules"]));
    assert_eq!(s["continues"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["continues"][0]["reason"], "run the tests");
    let text = s["text"].as_str().unwrap();
    assert!(text.starts_with("tests pass now"), "{text}");
    assert_eq!(
        s["events"],
        serde_json::json!([
            ["SubagentStart", "general-purpose", null, null],
            ["SubagentStop", "general-purpose", false, "first try"],
            ["SubagentStop", "general-purpose", true, "tests pass now"],
        ]),
        "{s}"
    );
}

#[test]
fn a_python_host_messages_resumes_and_stops_background_subagents() {
    let dir = tempfile::tempdir().unwrap();
    let s = python_host::run(crate::support::BATON, "subagent_messages.py", dir.path());
    assert_eq!(s["exit"], 0, "{s}");
    assert_eq!(s["errors"], serde_json::json!([]), "{s}");
    // The message to the running helper, as a line of its own.
    assert_eq!(s["messages"][0]["agent_id"], "agent-1", "{s}");
    assert_eq!(s["messages"][0]["message"], "more work", "{s}");
    assert_eq!(s["messages"][0]["from"], "main", "{s}");
    assert!(
        s["results"]["M1"].as_str().unwrap().contains("queued"),
        "{s}"
    );
    // Resumed after it ended: same id, `resume`, the new message.
    let requests = s["requests"].as_array().unwrap();
    assert_eq!(requests[0]["resume"], false, "{s}");
    assert_eq!(requests[1]["agent_id"], "agent-1", "{s}");
    assert_eq!(requests[1]["resume"], true, "{s}");
    assert!(
        requests[1]["prompt"]
            .as_str()
            .unwrap()
            .contains("again please"),
        "{s}"
    );
    assert!(
        s["results"]["M2"].as_str().unwrap().contains("resumed"),
        "{s}"
    );
    // Both agents were listed as tasks of kind `agent` (agent-2's last
    // listing may come after the host's shutdown; task_stopped says it).
    let tasks = s["agent_tasks"].as_array().unwrap();
    for want in [
        ["agent-1", "running"],
        ["agent-1", "completed"],
        ["agent-2", "running"],
    ] {
        assert!(tasks.contains(&serde_json::json!(want)), "{want:?}: {s}");
    }
    assert_eq!(s["stopped"]["kind"], "agent", "{s}");
    assert_eq!(s["stopped"]["status"], "stopped", "{s}");
    assert_eq!(s["cancelled"], serde_json::json!(["agent-2"]), "{s}");
    let finished = s["finished"].as_array().unwrap();
    assert!(finished.contains(&serde_json::json!(["agent-1", "completed"])));
    assert!(finished.contains(&serde_json::json!(["agent-2", "stopped"])));
}
