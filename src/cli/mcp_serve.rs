//! `baton mcp serve`: the session's tools to MCP clients, over stdio or HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;

use baton::mcp_server::http::{self, HttpOptions, DEFAULT_MAX_REQUEST_BYTES};
use baton::mcp_server::{self, Journal, McpServer, ServerOptions};
use clap::Args;
use tokio_util::sync::CancellationToken;

use super::{signals, CliError, Setup};

/// Environment variable holding the bearer token (when no file is given).
const TOKEN_ENV: &str = "BATON_MCP_TOKEN";

#[derive(Args, Debug, Clone)]
pub(super) struct ServeArgs {
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead
    /// of stdio. Beyond loopback a token is required.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// File whose content (trimmed) is the bearer token clients must send.
    /// Default: $BATON_MCP_TOKEN.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Accept this Host header too (repeatable); `*` accepts any.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// Accept requests from this browser origin (repeatable), e.g.
    /// https://app.example.com:443. On a loopback address, origins on
    /// loopback (localhost, 127.0.0.1, [::1]) are accepted too.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// When the call journal waits for the disk: `all` (a call's start and
    /// its result) or `results` (the start is only written: it survives a
    /// crash of the worker, not of its machine).
    #[arg(long, value_name = "WHEN", default_value = "all", value_parser = ["all", "results"])]
    journal_sync: String,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_REQUEST_BYTES)]
    max_request_bytes: usize,
    /// Largest upload to /v1/files (a file, or a directory's tar archive),
    /// in bytes.
    #[arg(long, default_value_t = baton::transfer::DEFAULT_MAX_BYTES)]
    max_transfer_bytes: u64,
}

impl ServeArgs {
    fn token(&self) -> Result<Option<String>, CliError> {
        if let Some(path) = &self.token_file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Usage(format!("--token-file {}: {e}", path.display())))?;
            return Ok(Some(text.trim().to_string()));
        }
        Ok(std::env::var(TOKEN_ENV).ok().map(|t| t.trim().to_string()))
    }
}

pub(super) async fn serve(mut setup: Setup, args: ServeArgs) -> Result<(), CliError> {
    let options = HttpOptions {
        token: args.token()?,
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        max_request_bytes: args.max_request_bytes,
        max_transfer_bytes: args.max_transfer_bytes,
    };
    if let Some(addr) = args.http {
        http::check(addr, &options).map_err(|e| CliError::Usage(e.to_string()))?;
        // Before the engine starts, so its MCP servers' health is recorded.
        baton::metrics::install_prometheus().map_err(|e| CliError::Failed(e.to_string()))?;
    }
    // Named calls are journaled in the state directory: a worker restarted
    // on the same `--state-dir` answers for the calls of its previous life.
    let journal_dir = setup.state_dir.join("journal");
    let limits = baton_journal::Limits {
        sync_start: args.journal_sync == "all",
        ..baton_journal::Limits::default()
    };
    let journal =
        Journal::open(&journal_dir, limits).map_err(|e| CliError::Failed(e.to_string()))?;
    let engine = setup.engine()?;
    let server = McpServer::with_options(
        engine.clone(),
        setup.pool.clone(),
        ServerOptions::default()
            .secret(options.token.as_deref())
            .journal(journal),
    );
    let shutdown = CancellationToken::new();
    // A signal stops the running calls (and their processes) first, then the
    // transport; the client sees every call answered.
    let watcher = {
        let shutdown = shutdown.clone();
        let engine = engine.clone();
        tokio::spawn(async move {
            signals::stop_requested().await;
            engine.shutdown();
            shutdown.cancel();
        })
    };
    let outcome = match args.http {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| CliError::Failed(format!("cannot listen on {addr}: {e}")))?;
            let bound = listener
                .local_addr()
                .map_err(|e| CliError::Failed(format!("cannot listen on {addr}: {e}")))?;
            // Tests and scripts read the real port (when 0 was asked for).
            eprintln!("baton: MCP server listening on http://{bound}/mcp");
            http::serve(server, listener, options, shutdown.clone())
                .await
                .map_err(|e| CliError::Failed(e.to_string()))
        }
        None => mcp_server::serve_stdio(server, shutdown.clone())
            .await
            .map_err(|e| CliError::Failed(e.to_string())),
    };
    watcher.abort();
    engine.shutdown();
    outcome
}
