//! Bench 6: the MCP client. One in-process MCP server (rmcp, streamable HTTP
//! on 127.0.0.1) answers both a bare rmcp client and Baton's MCP path (the
//! pool tool `mcp__bench__noop`: naming, schema, limits, progress routing,
//! cancellation guard, result mapping), measured in the same run.
//! Targets: Baton ≤ 1.5× the bare client per call over 1,000 calls; 32
//! parallel read-only calls of 200 ms ≤ 300 ms wall time.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::{Context, Session, ToolContext};
use baton::mcp::{ClientOptions, McpClients, ServerSpec};
use criterion::{criterion_group, criterion_main, Criterion};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

#[derive(Clone)]
struct BenchServer;

fn tool(name: &'static str) -> Tool {
    let schema = json!({"type": "object", "properties": {}});
    let mut tool = Tool::new(
        name,
        "bench tool",
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    );
    tool.annotations = Some(ToolAnnotations::new().read_only(true));
    tool
}

impl ServerHandler for BenchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("noop"),
            tool("sleep200"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "sleep200" {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(CallToolResult::success(vec![ContentBlock::text("ok")]).into())
    }
}

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let service: StreamableHttpService<BenchServer, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(BenchServer),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    let app = axum::Router::new().nest_service("/mcp", service);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}

fn mcp_client(c: &mut Criterion) {
    let rt = common::runtime();
    let dir = std::env::temp_dir();
    let (clients, bare) = rt.block_on(async {
        let url = serve().await;
        let clients = McpClients::start(
            vec![ServerSpec::http("bench", &url)],
            ClientOptions::from_env(&dir, &|_| None),
        )
        .await;
        assert!(
            clients.diagnostics().is_empty(),
            "{:?}",
            clients.diagnostics()
        );
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
        let bare = rmcp::ServiceExt::serve((), transport)
            .await
            .expect("bare client");
        (clients, bare)
    });
    let (tools, _) = clients.tools();
    let noop = tools
        .iter()
        .find(|t| t.name() == "mcp__bench__noop")
        .cloned()
        .expect("noop");
    let sleep = tools
        .iter()
        .find(|t| t.name() == "mcp__bench__sleep200")
        .cloned()
        .expect("sleep");
    let session = Session::new("bench", dir.join("baton-bench-mcp"));
    let ctx = || ToolContext::standalone("toolu_bench", Context::new(&dir), Arc::clone(&session));
    let input = json!({});

    let baton_calls = |n: usize| {
        rt.block_on(async {
            for _ in 0..n {
                let parsed = noop.parse(&input).expect("schema");
                let out = noop.call(parsed, ctx()).await.expect("call");
                assert!(!out.is_error);
            }
        })
    };
    let bare_calls = |n: usize| {
        rt.block_on(async {
            for _ in 0..n {
                let result = bare
                    .call_tool(CallToolRequestParams::new("noop"))
                    .await
                    .expect("bare call");
                assert_ne!(result.is_error, Some(true));
            }
        })
    };
    // Warm both paths, then alternate to share the machine's noise.
    baton_calls(50);
    bare_calls(50);
    let (mut baton_total, mut bare_total) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..4 {
        let t = Instant::now();
        baton_calls(250);
        baton_total += t.elapsed();
        let t = Instant::now();
        bare_calls(250);
        bare_total += t.elapsed();
    }
    println!(
        "mcp_client/1000_calls: baton {:.1} µs/call, bare rmcp {:.1} µs/call, ratio {:.2}",
        baton_total.as_secs_f64() * 1e6 / 1000.0,
        bare_total.as_secs_f64() * 1e6 / 1000.0,
        baton_total.as_secs_f64() / bare_total.as_secs_f64()
    );

    let parallel = || {
        rt.block_on(async {
            let calls = (0..32).map(|_| {
                let parsed = sleep.parse(&input).expect("schema");
                sleep.call(parsed, ctx())
            });
            for out in futures::future::join_all(calls).await {
                assert!(!out.expect("call").is_error);
            }
        })
    };
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        parallel();
        best = best.min(t.elapsed());
    }
    println!(
        "mcp_client/32_parallel_200ms: best of 5 {:.1} ms (ideal 200 ms)",
        best.as_secs_f64() * 1e3
    );

    c.bench_function("mcp_client/baton_noop_call", |b| b.iter(|| baton_calls(1)));
    c.bench_function("mcp_client/bare_rmcp_noop_call", |b| {
        b.iter(|| bare_calls(1))
    });
    rt.block_on(clients.shutdown());
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(300));
    targets = mcp_client
}
criterion_main!(benches);
