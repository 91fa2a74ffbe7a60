//! HTTP hooks: the event's JSON is POSTed to a URL; the response body is
//! read like a command's stdout (exit 0). A status other than 2xx, a
//! timeout or a connection failure is a failure of the hook (non-blocking
//! unless `onFailure: "block"`).
//!
//! Header values may name environment variables (`$TOKEN`, `${TOKEN}`,
//! `${TOKEN:-default}`, the grammar of [`crate::vars`]), but only those
//! listed in `allowedEnvVars` are expanded; any other reference takes its
//! default or becomes empty, so a settings file cannot send arbitrary
//! secrets.

use std::time::Duration;

use async_trait::async_trait;

use super::command::HookEnv;
use super::Handler;
use crate::hooks::protocol::{Reply, Run};
use crate::hooks::{HookInput, HookOutcome};
use crate::vars;

/// Largest response body read; more is a failure.
const BODY_CAP: usize = 1 << 20;

/// An `http` hook: POSTs the event's input to a URL.
#[derive(Clone, Debug)]
pub struct HttpHandler {
    url: String,
    /// Headers with variables already expanded.
    headers: Vec<(String, String)>,
    client: reqwest::Client,
}

impl HttpHandler {
    /// A hook posting to `url` (http or https) with `headers`, whose
    /// variables are expanded from `env` when `allowed_env` lists them; an
    /// error says what is wrong with the URL.
    pub fn new(
        url: &str,
        headers: &[(String, String)],
        allowed_env: &[String],
        env: &HookEnv,
    ) -> Result<Self, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("`url` {url:?}: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("`url` {url:?} must be http or https"));
        }
        let lookup = |name: &str| -> Option<String> {
            if !allowed_env.iter().any(|a| a == name) {
                return None;
            }
            env.vars
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(name).ok())
        };
        // Claude Code documents `$VAR_NAME` for these headers, so bare names
        // count here; an unset one is empty rather than a failed hook.
        let bare = vars::Options { bare_names: true };
        let headers = headers
            .iter()
            .filter(|(k, _)| {
                !k.eq_ignore_ascii_case("content-length")
                    && !k.eq_ignore_ascii_case("transfer-encoding")
            })
            .map(|(k, v)| {
                let value = vars::expand_or(v, bare, vars::Unset::Empty, &lookup);
                (k.clone(), value)
            })
            .collect();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        Ok(HttpHandler {
            url: url.to_string(),
            headers,
            client,
        })
    }

    async fn post(&self, input: &HookInput) -> Result<Reply, String> {
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json");
        for (k, v) in &self.headers {
            request = request.header(k, v);
        }
        let mut response = request
            .json(input)
            .send()
            .await
            .map_err(|e| format!("could not reach {}: {e}", self.url))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("broke off its answer: {e}"))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > BODY_CAP {
                return Err(format!("answered more than {BODY_CAP} bytes"));
            }
        }
        let body = String::from_utf8_lossy(&body).into_owned();
        if !status.is_success() {
            let said = body.trim();
            return Ok(Reply {
                code: Some(1),
                how: format!("answered HTTP {status}"),
                stdout: String::new(),
                stderr: said.chars().take(500).collect(),
            });
        }
        Ok(Reply {
            code: Some(0),
            how: format!("answered HTTP {status}"),
            stdout: body,
            stderr: String::new(),
        })
    }
}

#[async_trait]
impl Handler for HttpHandler {
    fn label(&self) -> String {
        self.url.clone()
    }

    async fn call(&self, input: &HookInput, timeout: Duration, run: Run) -> HookOutcome {
        match tokio::time::timeout(timeout, self.post(input)).await {
            Ok(result) => run.ended(result),
            Err(_) => run.failed(format!("did not answer within {}s", timeout.as_secs_f64())),
        }
    }
}
