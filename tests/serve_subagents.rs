//! A Python host runs subagents over `baton serve`: requests, nested
//! messages named by agent, approvals with their chain, results.

#[path = "support/python_host.rs"]
mod python_host;

#[test]
fn a_python_host_runs_a_subagent_tree_over_serve() {
    let dir = tempfile::tempdir().unwrap();
    let s = python_host::run("subagents.py", dir.path());
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
    let s = python_host::run("subagent_hooks.py", dir.path());
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
