//! Bench 5: ToolSearch over 5,000 deferred MCP-like tools. The indexed
//! search (what the tool runs; the index is built once per pool) against a
//! linear scan that tokenises every tool for every query, in the same run.
//! Also prints the request-size saving of deferral for the built-ins plus
//! 500 MCP-like tools (estimated tokens, 4 bytes per token).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::hint::black_box;
use std::time::Duration;

use baton::engine::deferred::{
    estimate_tokens, request_tools, set_deferral, Deferral, ToolSearchMode, ToolSearchSettings,
    BYTES_PER_TOKEN,
};
use baton::engine::wire::WireFormat;
use baton::engine::{PoolSpec, Session, ToolPool};
use baton_test_support::mcp_like;
use baton_tools::tool_search::{search_linear, Query, SearchIndex};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn pool(mcp: usize) -> ToolPool {
    ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().expect("built-ins"),
            others: mcp_like::tools(mcp),
            ..Default::default()
        },
        &baton::engine::AllowAllUnsafe,
    )
}

const QUERIES: [&str; 4] = [
    "slack send message",
    "+github create issue",
    "invoice export stripe records",
    "jira4 comment",
];

fn latency(c: &mut Criterion) {
    let pool = pool(5_000);
    let deferral = Deferral::default();
    let index = SearchIndex::build(&pool, &deferral);
    assert_eq!(index.len(), 5_005, "5,000 MCP tools + 5 deferred built-ins");
    let mut group = c.benchmark_group("tool_search_5000");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for query in QUERIES {
        let Query::Keywords { required, optional } = Query::parse(query) else {
            unreachable!()
        };
        assert_eq!(
            index.search(&required, &optional, 5, &pool),
            search_linear(&pool, &deferral, &required, &optional, 5)
                .into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
        );
        group.bench_with_input(BenchmarkId::new("index", query), &query, |b, _| {
            b.iter(|| black_box(index.search(&required, &optional, 5, &pool)))
        });
        group.bench_with_input(BenchmarkId::new("linear_scan", query), &query, |b, _| {
            b.iter(|| black_box(search_linear(&pool, &deferral, &required, &optional, 5)))
        });
    }
    group.bench_function("index_build", |b| {
        b.iter(|| black_box(SearchIndex::build(&pool, &deferral).len()))
    });
    group.finish();
}

/// Tokens of the tool list a request carries, with and without deferral.
fn request_size(_: &mut Criterion) {
    let pool = pool(500);
    let session = Session::new("bench", std::env::temp_dir().join("baton-bench-ts"));
    let full: u64 = pool.tools().map(|t| estimate_tokens(t)).sum();
    println!(
        "\nrequest size, built-ins + 500 MCP-like tools ({} tools)",
        pool.tools().count()
    );
    println!("  all definitions (tool search off): ≈ {full} tokens");
    for (format, references) in [
        (WireFormat::Anthropic, true),
        (WireFormat::OpenAiChat, false),
        (WireFormat::OpenAiResponses, false),
    ] {
        let settings = ToolSearchSettings::default()
            .format(format)
            .tool_references(references);
        for (label, mode) in [("off", ToolSearchMode::Off), ("on", ToolSearchMode::Always)] {
            set_deferral(
                &session,
                Deferral::resolve(settings.clone().mode(mode), &pool),
            );
            let list = request_tools(&pool, &session, format);
            // What the model reads: for Anthropic, deferred entries are not
            // rendered into the prompt, so only the others count.
            let prompt_bytes: usize = list
                .tools
                .iter()
                .filter(|t| t.get("defer_loading").is_none())
                .map(|t| t.to_string().len())
                .sum::<usize>()
                + list.reminder.as_deref().map_or(0, str::len);
            let wire_bytes: usize = list.tools.iter().map(|t| t.to_string().len()).sum();
            println!(
                "  {format:?} tool search {label}: {} tools listed, prompt ≈ {} tokens, request body ≈ {} tokens",
                list.tools.len(),
                prompt_bytes.div_ceil(BYTES_PER_TOKEN),
                wire_bytes.div_ceil(BYTES_PER_TOKEN)
            );
        }
    }
}

criterion_group!(benches, request_size, latency);
criterion_main!(benches);
