//! `WebFetch`: read a web page as text.
//!
//! Only http and https are fetched, within a size and a time limit (both in
//! [`BuiltinConfig`]), and HTML is turned into readable text. Redirects on
//! the same host are followed and listed in the result, so the model knows
//! where the content really came from; a redirect to another host is
//! reported, not followed (see [`fetch`]). Large results need no care here:
//! the engine spills them to a file.
//!
//! `prompt` says what the model wants from the page. Baton does not run a
//! model, so the prompt is kept in the input for the host (which may
//! summarise the result with it) and echoed in the result.

mod convert;
mod fetch;

use std::time::{Duration, Instant};

use baton_engine::{
    async_trait, PermissionTarget, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
    WorkKind,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::registry::BuiltinConfig;
use fetch::{Fetch, Fetched, Hop, Limits};

/// The input of `WebFetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchInput {
    /// The http or https URL to fetch.
    pub url: String,
    /// What to look for in the page.
    pub prompt: String,
}

struct WebFetch {
    max_bytes: u64,
    timeout: Duration,
    max_redirects: usize,
}

/// The `WebFetch` tool, with the limits and network rules of `config`.
pub fn tool(config: &BuiltinConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "WebFetch",
        "Fetches an http or https URL and returns its content as text (HTML is \
         converted to readable text). `prompt` says what you are looking for. \
         Same-site redirects are followed and listed; a redirect to another site is \
         reported so you can fetch that URL in a new call. Responses over the size \
         limit and requests over the time limit fail with a message.",
    )
    .search_hint("fetch web page url http download read website")
    .should_defer(true)
    // Waits on the network; converting a bounded page to text is cheap.
    .work_kind(WorkKind::Wait);
    Tool::typed::<WebFetchInput, _>(
        def,
        WebFetch {
            max_bytes: config.web_fetch_max_bytes,
            timeout: config.web_fetch_timeout,
            max_redirects: config.web_fetch_max_redirects,
        },
    )
}

fn hops_text(hops: &[Hop]) -> Option<String> {
    if hops.is_empty() {
        return None;
    }
    let list: Vec<String> = hops
        .iter()
        .map(|h| format!("  {} -> {} ({})", h.from, h.to, h.status))
        .collect();
    Some(format!(
        "Redirected {} time(s):\n{}",
        hops.len(),
        list.join("\n")
    ))
}

/// Claude Code's `tool_response` for WebFetch (sdk-tools.d.ts
/// `WebFetchOutput`): `result` is the text the model reads, `url` the one
/// asked for.
fn response(
    url: &str,
    status: reqwest::StatusCode,
    bytes: usize,
    result: &str,
    started: Instant,
) -> serde_json::Value {
    serde_json::json!({
        "bytes": bytes,
        "code": status.as_u16(),
        "codeText": status.canonical_reason().unwrap_or_default(),
        "result": result,
        "durationMs": started.elapsed().as_millis() as u64,
        "url": url,
    })
}

fn render(fetched: Fetched, prompt: &str, asked: &str, started: Instant) -> ToolOutput {
    let mut head = vec![
        format!("URL: {}", fetched.url),
        format!("Status: {}", fetched.status),
    ];
    if let Some(t) = &fetched.content_type {
        head.push(format!("Content-Type: {t}"));
    }
    head.push(format!("Size: {} bytes", fetched.body.len()));
    if let Some(hops) = hops_text(&fetched.hops) {
        head.push(hops);
    }
    head.push(format!("Prompt: {prompt}"));
    let (body, binary) = match convert::to_text(fetched.content_type.as_deref(), &fetched.body) {
        Ok(text) => (text, false),
        Err(note) => (note, true),
    };
    let failed = !fetched.status.is_success();
    let mut text = head.join("\n");
    if failed {
        text.push_str(&format!(
            "\n\nThe server answered {}; the page it sent follows.",
            fetched.status
        ));
    }
    text.push_str("\n\n");
    text.push_str(&body);
    let response = response(asked, fetched.status, fetched.body.len(), &text, started);
    let output = if failed || binary {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    };
    output.with_response(response)
}

#[async_trait]
impl ToolLogic<WebFetchInput> for WebFetch {
    fn is_concurrency_safe(&self, _input: &WebFetchInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &WebFetchInput) -> bool {
        true
    }

    fn is_open_world(&self, _input: &WebFetchInput) -> bool {
        true
    }

    fn permission_target(&self, input: &WebFetchInput, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Url(input.url.trim().to_string())
    }

    fn label(&self, input: &WebFetchInput) -> Option<String> {
        Some(format!("WebFetch({})", input.url))
    }

    async fn validate_input(
        &self,
        input: &WebFetchInput,
        _ctx: &ToolContext,
    ) -> Result<(), String> {
        fetch::check_url(&input.url).map(|_| ())
    }

    async fn call(&self, input: WebFetchInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        let url = fetch::check_url(&input.url).map_err(ToolError::new)?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A backstop only: the overall limit below fires first and says
            // which limit was hit.
            .timeout(self.timeout + Duration::from_secs(1))
            .user_agent(concat!("baton-webfetch/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ToolError::new(format!("Could not set up the HTTP client: {e}")))?;
        let limits = Limits {
            max_bytes: self.max_bytes,
            max_redirects: self.max_redirects,
        };
        ctx.progress.message(format!("Fetching {url}"));
        let progress = ctx.progress.clone();
        let exchange = fetch::fetch(&client, url.clone(), &limits, |hop| {
            progress.message(format!("Redirected ({}) to {}", hop.status, hop.to));
        });
        let outcome = tokio::select! {
            _ = ctx.cancel.cancelled() => {
                return Ok(ToolOutput::text(format!("The fetch of {url} was stopped before it completed.")));
            }
            r = tokio::time::timeout(self.timeout, exchange) => r,
        };
        let fetched = match outcome {
            Err(_) => {
                return Err(ToolError::new(format!(
                    "The request to {url} did not complete within {} s (the time limit). The \
                     server may be slow or unreachable; try again later or another URL.",
                    self.timeout.as_secs_f64()
                )))
            }
            Ok(Err(message)) => return Err(ToolError::new(message)),
            Ok(Ok(fetched)) => fetched,
        };
        match fetched {
            // Rendering a large page takes a while; keep it off the runtime.
            Fetch::Done(fetched) => tokio::task::spawn_blocking(move || {
                render(fetched, &input.prompt, &input.url, started)
            })
            .await
            .map_err(|e| ToolError::new(format!("Converting the page failed: {e}"))),
            Fetch::OtherHost {
                hops,
                from,
                to,
                status,
            } => {
                let mut text = format!(
                    "{from} redirects ({status}) to another host: {to}\nWebFetch does not follow \
                     redirects to other hosts. To get the content, call WebFetch again with \
                     url = {to}"
                );
                if let Some(hops) = hops_text(&hops) {
                    text.push_str(&format!("\n\n{hops}"));
                }
                let response = response(&input.url, status, 0, &text, started);
                Ok(ToolOutput::text(text).with_response(response))
            }
        }
    }
}

#[cfg(test)]
mod tests;
