//! Parallel writers and readers on one file, in random mixes.
//!
//! Within one batch, writing tools run serially; but parallel subagents (or
//! several sessions of one engine) can edit the same file at once. Every Edit
//! below targets a different line of the same file: all must succeed and no
//! change may be lost, whatever the interleaving, with Reads mixed in.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;

use super::{assert_ok, Env};

fn run_mix(edits: usize, reads: usize, order_seed: u64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let env = Arc::new(Env::new());
        let text: String = (0..edits).map(|i| format!("slot-{i}: empty\n")).collect();
        let path = env.write("shared.txt", &text);
        env.read("shared.txt").await;

        // Interleave edits and reads in an order fixed by the seed.
        let mut jobs: Vec<Option<usize>> = (0..edits)
            .map(Some)
            .chain((0..reads).map(|_| None))
            .collect();
        let mut state = order_seed | 1;
        for i in (1..jobs.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            jobs.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|job| {
                let env = env.clone();
                tokio::spawn(async move {
                    let input = match job {
                        Some(i) => json!({ "file_path": env.p("shared.txt"),
                                           "old_string": format!("slot-{i}: empty"),
                                           "new_string": format!("slot-{i}: done") }),
                        None => json!({ "file_path": env.p("shared.txt") }),
                    };
                    let tool = if job.is_some() { "Edit" } else { "Read" };
                    env.call(tool, input).await
                })
            })
            .collect();
        for h in handles {
            assert_ok(&h.await.unwrap());
        }
        let expected: String = (0..edits).map(|i| format!("slot-{i}: done\n")).collect();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn parallel_edits_lose_nothing(edits in 2usize..16, reads in 0usize..8, seed in any::<u64>()) {
        run_mix(edits, reads, seed);
    }
}
