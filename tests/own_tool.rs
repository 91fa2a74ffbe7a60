//! The "Your own tool" example (docs/host-api.md) runs: its tool counts a
//! workspace file and, with nobody to approve, does not read outside it.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "../examples/own_tool.rs"]
mod example;

use baton::Outcome;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_tool_runs_inside_a_secure_engine() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let results = example::run(&dir).await.unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, Outcome::Success, "{}", results[0].1);
    assert!(results[0].1.contains("has 3 words"), "{}", results[0].1);
    assert_eq!(results[1].0, Outcome::Denied, "{}", results[1].1);
    assert!(
        results[1].1.contains("without anyone to approve it"),
        "{}",
        results[1].1
    );
}
