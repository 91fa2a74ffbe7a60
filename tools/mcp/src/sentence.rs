//! rmcp's errors as sentences for the model and the user. rmcp's own text
//! for a failed HTTP request starts with the transport's full Rust type
//! (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`),
//! which says nothing to a reader and costs tokens; the cause behind it is
//! what matters.

use std::error::Error;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::ServiceError;

type HttpError = StreamableHttpError<reqwest::Error>;

const MIB: usize = 1024 * 1024;

/// What went wrong with a request, in plain words.
pub fn describe(e: &ServiceError) -> String {
    match e {
        ServiceError::McpError(data) => format!("{} (code {})", data.message, data.code.0),
        ServiceError::TransportSend(t) => transport(t.error.as_ref()),
        ServiceError::TransportClosed => "the connection closed".into(),
        ServiceError::Timeout { timeout } => {
            format!("no answer within {} s", timeout.as_secs_f64())
        }
        other => other.to_string(),
    }
}

/// Why a connection's handshake failed, in plain words. rmcp's own text
/// for a transport failure is the type dump above, and it drops the cause
/// chain (`connection refused`, `reset by peer`) that says what to fix.
pub fn describe_start(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, context } => {
            format!(
                "{} (while trying to {context})",
                transport(error.error.as_ref())
            )
        }
        other => other.to_string(),
    }
}

/// Whether the request failed because the answer was over the size limit.
pub(crate) fn is_size_limit(e: &ServiceError) -> bool {
    describe(e).contains(LIMIT_WORDS)
}

const LIMIT_WORDS: &str = "the limit for one MCP message";

/// The cause chain of a transport error, each step reworded.
fn transport(err: &(dyn Error + Send + Sync + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(e) = next {
        let text = reword(&e.to_string());
        // Many errors repeat their source in their own text.
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = match e.downcast_ref::<HttpError>() {
            // rmcp's wrapper of the HTTP client's error does not report it
            // as its source, so the chain (`connection refused`) would end.
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => e.source(),
        };
    }
    if parts.is_empty() {
        return "the request could not be sent".into();
    }
    parts.join(": ")
}

fn reword(text: &str) -> String {
    let mut text = text.trim();
    // Wrappers that only name a Rust type or a layer.
    loop {
        if let Some(rest) = text.strip_prefix("Transport [") {
            match rest.find("] error: ") {
                Some(i) => text = &rest[i + "] error: ".len()..],
                None => break,
            }
        } else if let Some(rest) = ["Client error: ", "Transport send error: "]
            .iter()
            .find_map(|p| text.strip_prefix(p))
        {
            text = rest;
        } else {
            break;
        }
    }
    if let Some(size) = text
        .strip_prefix("HTTP response body exceeded the maximum size of ")
        .and_then(|r| r.strip_suffix(" bytes"))
        .and_then(|n| n.parse::<usize>().ok())
    {
        return format!(
            "the server's answer was larger than {} MiB ({size} bytes), {LIMIT_WORDS}, so Baton refused it",
            size / MIB
        );
    }
    if let Some(kind) = text.strip_prefix("Unexpected content type: ") {
        let kind = kind
            .trim_start_matches("Some(")
            .trim_end_matches(')')
            .trim_matches('"');
        return match kind {
            "None" | "" => {
                "the server's answer had no content type (JSON or an event stream was expected)"
                    .into()
            }
            kind => {
                format!("the server answered with content type {kind}, not JSON or an event stream")
            }
        };
    }
    if let Some(status) = text.strip_prefix("HTTP ") {
        if status.chars().all(|c| c.is_ascii_digit()) {
            return format!("the server answered HTTP {status}");
        }
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_dumps_become_sentences() {
        let dump = "Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<baton_mcp::auth::client::Guarded>>] error: HTTP response body exceeded the maximum size of 16777216 bytes";
        let text = reword(dump);
        assert!(!text.contains("rmcp::") && !text.contains('<'), "{text}");
        assert!(
            text.contains("16 MiB") && text.contains("16777216"),
            "{text}"
        );
        assert_eq!(
            reword("Unexpected content type: Some(\"text/html\")"),
            "the server answered with content type text/html, not JSON or an event stream"
        );
        assert_eq!(reword("HTTP 502"), "the server answered HTTP 502");
        assert_eq!(
            reword("Client error: connection refused"),
            "connection refused"
        );
    }
}
