//! Connecting to one server: choosing the protocol generation (the
//! `server/discover` probe and its fallbacks, see [`crate::probe`]) and
//! opening the transport (stdio process, streamable HTTP, legacy SSE).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::ClientServiceExt;
use std::sync::atomic::Ordering;

use rmcp::transport::auth::AuthClient;

use crate::auth::{Authorizer, Guarded, Link, TokenStore};
use crate::config::TransportSpec;
use crate::handler::Handler;
use crate::probe::{OnSilence, ProbeGuard, ProbeNote, ProbeRecord, DISCOVER_PROBE};
use crate::process::ServerProcess;
use crate::server::{with_tail, Live, Server};
use crate::task_facts::TaskFacts;

impl Server {
    /// Connects, choosing the protocol generation: `server/discover` first
    /// (answered within [`DISCOVER_PROBE`] or not at all, see
    /// [`crate::probe`]), then the classic `initialize` on the same
    /// connection. The probe is never fatal: when that first attempt fails
    /// for any reason other than a successful discovery, Baton starts over
    /// with `initialize` alone, and — if the probe went unanswered, as a
    /// modern server still starting up may leave it — with `server/discover`
    /// alone, all within `MCP_TIMEOUT`.
    pub(crate) async fn connect(&self) -> Result<Live, String> {
        let link = self.oauth_link().await?;
        let mut logins = 0;
        loop {
            let result = self.connect_once(link.as_ref()).await;
            let Some(link) = &link else {
                return result;
            };
            if result.is_ok() {
                link.connected();
                return result;
            }
            // The server refused: log in (no connect limit applies to the
            // user) and start over with the new token.
            let Some(refusal) = link.take_refusal() else {
                return result;
            };
            logins += 1;
            if logins > 3 {
                return result;
            }
            link.settle(refusal).await?;
        }
    }

    /// The entry's `headers`, with its `headersHelper`'s output laid over
    /// them when it has one (run anew for every connection).
    async fn with_helper_headers(
        &self,
        url: &str,
        headers: &std::collections::BTreeMap<String, String>,
    ) -> Result<std::collections::BTreeMap<String, String>, Failure> {
        let Some(command) = &self.spec.headers_helper else {
            return Ok(headers.clone());
        };
        let dynamic =
            crate::headers_helper::run(command, &self.spec.name, url, &self.options().project_dir)
                .await
                .map_err(Failure::Failed)?;
        Ok(crate::headers_helper::merged(headers, dynamic))
    }

    /// The OAuth side of a streamable-HTTP server, unless its entry sets
    /// its own `Authorization` header.
    async fn oauth_link(&self) -> Result<Option<Arc<Link>>, String> {
        let (TransportSpec::Http { url, headers } | TransportSpec::Sse { url, headers }) =
            &self.spec.transport
        else {
            return Ok(None);
        };
        // A helper that makes headers is the entry's own way to log in.
        if self.spec.headers_helper.is_some()
            || headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization"))
        {
            return Ok(None);
        }
        let opts = self.options();
        let store = TokenStore::new(opts.oauth_dir.as_deref(), &self.spec.name, url);
        let auth = Arc::new(Authorizer::new(
            &self.spec.name,
            url,
            self.spec.oauth.clone(),
            store,
            opts.oauth_opener.clone(),
            opts.oauth_limit,
        ));
        let manager = auth.manager().await?;
        let client = AuthClient::new(reqwest::Client::new(), manager);
        Ok(Some(Arc::new(Link::new(auth, client))))
    }

    async fn connect_once(&self, link: Option<&Arc<Link>>) -> Result<Live, String> {
        if matches!(self.spec.transport, TransportSpec::Sse { .. }) {
            // HTTP+SSE belongs to the `initialize` generation; a
            // `server/discover` probe would only cost a round trip.
            return self
                .connect_with(Start::Initialize, self.options().connect_timeout, link)
                .await
                .map_err(Failure::into_message);
        }
        let started = Instant::now();
        let record = ProbeRecord::default();
        let first = self
            .connect_with(
                Start::Probe(record.clone()),
                self.options().connect_timeout,
                link,
            )
            .await;
        let why = match first {
            Ok(live) => return Ok(live),
            Err(Failure::NotStarted(why)) => return Err(why),
            Err(Failure::Failed(why)) => why,
        };
        if link.is_some_and(|l| l.refused()) {
            return Err(why);
        }
        let note = record.lock().clone();
        let mut retries = match note {
            Some(ProbeNote::Discovered) => return Err(why),
            Some(ProbeNote::Refused(_)) => vec![Start::Initialize],
            Some(ProbeNote::Silent) | None => vec![Start::Initialize, Start::Discover],
        };
        let mut last = why;
        for start in retries.drain(..) {
            let left = self
                .options()
                .connect_timeout
                .saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            match self.connect_with(start, left, link).await {
                Ok(live) => return Ok(live),
                Err(failure) => last = failure.into_message(),
            }
            if link.is_some_and(|l| l.refused()) {
                break;
            }
        }
        Err(last)
    }

    async fn connect_with(
        &self,
        start: Start,
        limit: Duration,
        link: Option<&Arc<Link>>,
    ) -> Result<Live, Failure> {
        let handler = Handler::new(&self.spec.name, self.options().elicitor.clone());
        let facts = Arc::new(TaskFacts::default());
        let (lifecycle, record, probe_limit) = match start {
            Start::Probe(record) => (
                ClientLifecycleMode::Auto {
                    preferred_versions: preferred_versions(),
                    legacy_version: Some(ProtocolVersion::V_2025_11_25),
                },
                record,
                DISCOVER_PROBE,
            ),
            // Without a fallback, silence is judged by the connect limit.
            Start::Discover => (
                ClientLifecycleMode::Discover {
                    preferred_versions: preferred_versions(),
                },
                ProbeRecord::default(),
                limit,
            ),
            Start::Initialize => (
                ClientLifecycleMode::Initialize,
                ProbeRecord::default(),
                limit,
            ),
        };
        let (service, process) = match &self.spec.transport {
            TransportSpec::Stdio { command, args, env } => {
                let (process, pipes) = ServerProcess::spawn(
                    command,
                    args,
                    env,
                    &self.options().project_dir,
                    Arc::clone(&facts),
                )
                .map_err(|e| Failure::NotStarted(format!("cannot start {command}: {e}")))?;
                let transport = ProbeGuard::new(
                    IntoTransport::<RoleClient, std::io::Error, _>::into_transport(pipes),
                    preferred_versions(),
                    probe_limit,
                    OnSilence::FallBack,
                    record,
                );
                let served =
                    tokio::time::timeout(limit, handler.serve_with_lifecycle(transport, lifecycle))
                        .await;
                match served {
                    Ok(Ok(service)) => (service, Some(process)),
                    failed => {
                        let why = match failed {
                            Ok(Err(e)) => crate::sentence::describe_start(&e),
                            _ => {
                                format!("no answer within {} s (MCP_TIMEOUT)", limit.as_secs_f64())
                            }
                        };
                        process.stop(Duration::from_millis(200)).await;
                        let tail = process.stderr.cause(5);
                        *self.last_stderr.lock() = process.stderr.tail(20);
                        return Err(Failure::Failed(with_tail(
                            format!("could not connect: {why}"),
                            &tail,
                        )));
                    }
                }
            }
            TransportSpec::Http { url, headers } => {
                let headers = &self.with_helper_headers(url, headers).await?;
                let map: std::collections::HashMap<_, _> = crate::sse::header_map(headers)
                    .map_err(Failure::NotStarted)?
                    .into_iter()
                    .filter_map(|(k, v)| Some((k?, v)))
                    .collect();
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(map)
                    .max_concurrent_requests(256);
                let transport = ProbeGuard::new(
                    StreamableHttpClientTransport::with_client(
                        Guarded::new(link.cloned(), Arc::clone(&facts)),
                        config,
                    ),
                    preferred_versions(),
                    probe_limit,
                    OnSilence::GiveUp,
                    record,
                );
                let service =
                    tokio::time::timeout(limit, handler.serve_with_lifecycle(transport, lifecycle))
                        .await
                        .map_err(|_| {
                            Failure::Failed(format!(
                                "{url}: no answer within {} s (MCP_TIMEOUT)",
                                limit.as_secs_f64()
                            ))
                        })?
                        .map_err(|e| {
                            Failure::Failed(format!(
                                "{url}: could not connect: {}",
                                crate::sentence::describe_start(&e)
                            ))
                        })?;
                (service, None)
            }
            TransportSpec::Sse { url, headers } => {
                let headers = &self.with_helper_headers(url, headers).await?;
                let mut headers = crate::sse::header_map(headers).map_err(Failure::NotStarted)?;
                let seen = link.map(|l| l.auth.generation());
                if let Some(bearer) = crate::auth::sse_bearer(link).await {
                    headers.insert(http::header::AUTHORIZATION, bearer);
                }
                let service = tokio::time::timeout(limit, async {
                    let transport = crate::sse::SseTransport::connect(url, headers, limit).await?;
                    handler
                        .serve_with_lifecycle(transport, lifecycle)
                        .await
                        .map_err(|e| {
                            format!(
                                "{url}: could not connect: {}",
                                crate::sentence::describe_start(&e)
                            )
                        })
                })
                .await
                .map_err(|_| {
                    format!(
                        "{url}: no answer within {} s (MCP_TIMEOUT)",
                        limit.as_secs_f64()
                    )
                })
                .and_then(|served| served)
                .map_err(|why| {
                    // A 401 on the event stream: log in, as for HTTP.
                    if let (Some(link), Some(seen)) = (link, seen) {
                        if why.contains("answered HTTP 401") {
                            link.refuse(seen);
                        }
                    }
                    Failure::Failed(why)
                })?;
                (service, None)
            }
        };
        let version = service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.clone());
        if version.as_ref().is_some_and(|v| !v.has_initialize()) {
            listen_for_list_changes(&service);
        }
        let protocol = version.map_or_else(|| "unknown".into(), |v| v.to_string());
        Ok(Live {
            service,
            process,
            protocol,
            since: Instant::now(),
            tasks: facts,
        })
    }
}

/// How one connection attempt begins.
enum Start {
    /// `server/discover`, falling back to `initialize` on the same
    /// connection; the record says how the probe went.
    Probe(ProbeRecord),
    Initialize,
    Discover,
}

/// Why a connection attempt failed.
enum Failure {
    /// Nothing was started (no such command, a bad header): trying again
    /// another way cannot help.
    NotStarted(String),
    Failed(String),
}

impl Failure {
    fn into_message(self) -> String {
        match self {
            Failure::NotStarted(why) | Failure::Failed(why) => why,
        }
    }
}

/// The protocol versions of the `server/discover` generation Baton speaks.
fn preferred_versions() -> Vec<ProtocolVersion> {
    vec![ProtocolVersion::V_2026_07_28]
}

/// On 2026-07-28 connections, list-change notifications arrive only on a
/// `subscriptions/listen` stream; open one and remember changes.
fn listen_for_list_changes(service: &RunningService<RoleClient, Handler>) {
    let peer = service.peer().clone();
    let handler = service.service().clone();
    tokio::spawn(async move {
        let filter = rmcp::model::SubscriptionFilter::builder()
            .tools_list_changed()
            .build();
        let Ok(mut subscription) = peer.listen(filter).await else {
            return;
        };
        while let Ok(Some(notification)) = subscription.next().await {
            if matches!(
                notification,
                rmcp::model::ServerNotification::ToolListChangedNotification(_)
            ) {
                handler.0.tools_changed.store(true, Ordering::Release);
            }
        }
    });
}
