//! Grep on one 300 MB line finds a match anywhere in it (start, middle,
//! end) and stays within 64 MB of memory: the line is streamed through the
//! pattern's automaton, and only what is printed is cut. In a process of
//! its own, so the peak resident size (`VmHWM` in /proc) belongs to these
//! searches.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::Write;

use baton::{Engine, ToolUse};
use baton_test_support::own_process;
use serde_json::json;

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn grep_on_a_300_mb_line_stays_under_64_mb() {
    own_process!(
        grep_on_a_300_mb_line_stays_under_64_mb,
        search_a_300_mb_line
    );
}

fn search_a_300_mb_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let path = root.join("huge.min.js");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        file.write_all(b"var needle_at_start = 1;").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for i in 0..300 {
            if i == 150 {
                file.write_all(b" needle_in_middle ").unwrap();
            }
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b"needle_at_end\nsecond line with needle\n")
            .unwrap();
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let before = peak_rss_kib();
    let started = std::time::Instant::now();
    let results = rt.block_on(async {
        let engine = Engine::builder(
            baton::BuiltinConfig::default()
                .pool(&baton::engine::RulePolicy::new())
                .unwrap(),
        )
        .cwd(&root)
        .state_dir(root.join(".state"))
        .build()
        .unwrap();
        let batch = engine.open_batch().await.unwrap();
        let searches = [
            ("content", "needle", "content"),
            ("middle", "needle_in_middle", "count"),
            ("end", "needle_at_end$", "content"),
        ];
        for (id, pattern, mode) in searches {
            batch
                .add(ToolUse::new(
                    id,
                    "Grep",
                    json!({"pattern": pattern, "output_mode": mode}),
                ))
                .unwrap();
        }
        batch.finish().await.0
    });
    let after = peak_rss_kib();
    eprintln!(
        "three searches of a 300 MB line in {:.1} s; peak RSS: {before} KiB before, {after} KiB after",
        started.elapsed().as_secs_f64()
    );
    let texts: Vec<String> = results
        .iter()
        .map(|r| {
            r.content
                .iter()
                .map(|b| format!("{b:?}"))
                .collect::<String>()
        })
        .collect();
    for (r, text) in results.iter().zip(&texts) {
        assert!(!r.is_error, "{text}");
    }
    let content = &texts[0];
    assert!(
        content.contains("needle_at_start"),
        "{}",
        &content[..content.len().min(3000)]
    );
    assert!(content.contains("second line with needle"));
    assert!(!content.contains("could not be searched"), "{content}");
    assert!(content.contains("huge.min.js:1"));
    assert!(
        content.len() < 20_000,
        "the long line is shown cut: {} bytes",
        content.len()
    );
    assert!(texts[1].contains(":1"), "the middle match: {}", texts[1]);
    // The match at the very end is found and shown, the line cut around it.
    let end = &texts[2];
    assert!(
        end.contains("huge.min.js:1:var needle_at_start"),
        "{}",
        &end[..end.len().min(3000)]
    );
    assert!(
        end.contains("xxxneedle_at_end"),
        "{}",
        &end[end.len().saturating_sub(3000)..]
    );
    assert!(!end.contains("second line"), "{end}");
    assert!(end.len() < 20_000, "{}", end.len());
    // Generous but meaningful: the whole line would need 300 MB (rg itself
    // grows its buffer to several times that).
    assert!(
        after < 64 * 1024,
        "peak RSS {after} KiB (before the search: {before} KiB)"
    );
}
