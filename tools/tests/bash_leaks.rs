//! No process outlives a stopped command (SPEC §14): timeouts, cancellation
//! and dropping the call future each stop the whole process group, for
//! commands that spawn grandchildren, subshells, pipelines, nested shells,
//! and children that ignore SIGTERM. Each case counts the processes whose
//! command line carries a unique marker.

use std::time::Duration;

use bash_common::{marker, Harness};
use baton_engine::CancelReason;
use baton_test_support::procs::{running, settle, wait_started};
use baton_tools::bash;
use proptest::prelude::*;
use serde_json::json;

use crate::bash_common;

/// Command shapes; `{M}` is replaced by the marker.
const SHAPES: &[&str] = &[
    "sleep {M} & sleep {M}; wait",
    "bash -c 'sleep {M}'",
    "bash -c 'sleep {M} & sleep {M}; wait' & wait",
    "(sleep {M}; echo never) | cat",
    "trap '' TERM; sleep {M} & sleep {M}; wait",
    "sh -c 'trap \"\" TERM; sleep {M}' & wait",
    // Processes that leave the shell's process group or session.
    "set -m; sleep {M} & sleep {M}; wait",
    "setsid sleep {M} & sleep {M}; wait",
    "nohup setsid sleep {M} >/dev/null 2>&1 & sleep {M}; wait",
    "sleep {M} & disown; sleep {M}",
    "(setsid sleep {M} &); sleep {M}",
    "python3 -c 'import os; os.setpgid(0, 0); os.execvp(\"sleep\", [\"sleep\", \"{M}\"])' & sleep {M}; wait",
];

#[derive(Clone, Copy, Debug)]
enum End {
    Timeout,
    Cancel,
    Drop,
}

/// Runs `shape` and ends it the `end` way, once it has started `at_least`
/// marked processes (0: end it at once, perhaps before bash started).
async fn run_and_end(h: &Harness, shape: &str, end: End, at_least: usize) -> String {
    let m = marker();
    let command = shape.replace("{M}", &m);
    let ctx = h.ctx("leak");
    match end {
        End::Timeout => {
            let r = h
                .call("Bash", json!({"command": command, "timeout": 700}), ctx)
                .await;
            assert!(r.is_error, "{shape}: {}", r.text());
            assert!(r.text().contains("timed out"), "{shape}: {}", r.text());
        }
        End::Cancel => {
            let cancel = ctx.cancel.clone();
            let m2 = m.clone();
            tokio::spawn(async move {
                wait_started(&m2, at_least).await;
                cancel.cancel(CancelReason::User);
            });
            let r = h.call("Bash", json!({"command": command}), ctx).await;
            assert!(r.is_error, "{shape}: {}", r.text());
        }
        End::Drop => {
            let call = h.call("Bash", json!({"command": command}), ctx);
            tokio::select! {
                r = call => panic!("{shape} finished by itself: {}", r.text()),
                _ = wait_started(&m, at_least) => {}
            }
        }
    }
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shape_and_ending_leaves_no_process() {
    let h = Harness::killing_at_timeout();
    let mut leaks = Vec::new();
    for shape in SHAPES {
        for end in [End::Timeout, End::Cancel, End::Drop] {
            let m = run_and_end(&h, shape, end, 2).await;
            let left = settle(&m, Duration::from_secs(10)).await;
            if left > 0 {
                leaks.push(format!("{shape:?} / {end:?}: {left} left"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "processes left behind:\n{}",
        leaks.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_tasks_and_lingering_groups_end_with_the_session() {
    let m = marker();
    {
        let h = Harness::killing_at_timeout();
        let r = h
            .bash(json!({"command": format!("sleep {m} & sleep {m} & echo started")}))
            .await;
        assert!(r.text().contains("still running"), "{}", r.text());
        let r = h
            .bash(json!({"command": format!("trap '' TERM; sleep {m}"), "run_in_background": true}))
            .await;
        assert!(!r.is_error);
        wait_started(&m, 3).await;
        assert!(running(&m) >= 3);
        // No stop_all: dropping the session (and its slots) must be enough.
    }
    assert_eq!(settle(&m, Duration::from_secs(15)).await, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Endings at random moments, including before the shell has started
    /// anything, never leak.
    #[test]
    fn random_moments_never_leak(
        shape in prop::sample::select(SHAPES.to_vec()),
        end in prop::sample::select(vec![End::Cancel, End::Drop]),
        at_least in 0usize..3,
        delay_ms in 0u64..300,
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let left = rt.block_on(async {
            let h = Harness::killing_at_timeout();
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            let m = run_and_end(&h, shape, end, at_least).await;
            settle(&m, Duration::from_secs(10)).await
        });
        prop_assert_eq!(left, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Many calls at once in one session — quick ones, failing ones, ones
    /// that time out, are cancelled or go to the background — each get
    /// the result their ending calls for, and nothing is left running.
    #[test]
    fn concurrent_calls_each_end_right_and_leave_nothing(
        kinds in prop::collection::vec(0usize..5, 4..12),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (wrong, left) = rt.block_on(async {
            let h = std::sync::Arc::new(Harness::new());
            let m = marker();
            let mut calls = Vec::new();
            for (i, kind) in kinds.iter().copied().enumerate() {
                let h = h.clone();
                let m = m.clone();
                calls.push(tokio::spawn(async move {
                    let ctx = h.ctx(&format!("c{i}"));
                    let (input, expect_error, expect_text) = match kind {
                        0 => (json!({"command": format!("echo out{i}")}), false, format!("out{i}")),
                        1 => (json!({"command": format!("echo err{i} >&2; exit 7")}), true, "Exit code 7".to_string()),
                        // Moved to the background at its limit: stop_all below ends it.
                        2 => (json!({"command": format!("sleep {m}"), "timeout": 400}), false, "moved to the background".to_string()),
                        3 => {
                            let cancel = ctx.cancel.clone();
                            tokio::spawn(async move {
                                tokio::time::sleep(Duration::from_millis(300)).await;
                                cancel.cancel(CancelReason::User);
                            });
                            (json!({"command": format!("sleep {m} & sleep {m}; wait")}), true, String::new())
                        }
                        _ => (json!({"command": format!("sleep {m}"), "run_in_background": true}), false, "shell-".to_string()),
                    };
                    let r = h.call("Bash", input, ctx).await;
                    let ok = r.is_error == expect_error && r.text().contains(&expect_text);
                    (!ok).then(|| format!("call {i} (kind {kind}): error={} {}", r.is_error, r.text()))
                }));
            }
            let mut wrong = Vec::new();
            for call in calls {
                if let Some(problem) = call.await.unwrap() {
                    wrong.push(problem);
                }
            }
            bash::stop_all(&h.session).await;
            (wrong, settle(&m, Duration::from_secs(15)).await)
        });
        prop_assert!(wrong.is_empty(), "{:?}", wrong);
        prop_assert_eq!(left, 0);
    }
}
