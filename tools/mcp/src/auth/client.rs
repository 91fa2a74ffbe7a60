//! The HTTP client of a streamable-HTTP connection, with OAuth when the
//! server asks for it. rmcp's `AuthClient` adds the bearer token and
//! refreshes it once on a 401; this layer handles what is left:
//!
//! - while connecting, a refusal (401 without usable tokens, or 403
//!   `insufficient_scope`) is recorded and the attempt fails at once, so
//!   the login runs outside the connect time limit (see
//!   [`crate::connect`]);
//! - once connected, a refusal starts the login (or the step-up) at once
//!   and the request is sent again with the new token.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

use super::login::Authorizer;
use crate::task_facts::TaskFacts;

type HttpError = StreamableHttpError<reqwest::Error>;

/// A refusal seen while connecting, for the login that follows.
#[derive(Clone, Debug)]
pub struct Refusal {
    /// The server's `WWW-Authenticate` value; empty when there was none.
    pub challenge: String,
    /// Whether it was a 403 asking for more scope rather than a 401.
    pub more_scope: bool,
    /// [`Authorizer::generation`] when the refused request was sent: a login
    /// that finished since then makes a new one unnecessary.
    pub seen: u64,
}

/// The OAuth side of one server's connections (shared by its attempts).
#[derive(Debug)]
pub struct Link {
    /// Logs in and refreshes tokens for this server.
    pub auth: Arc<Authorizer>,
    /// The rmcp HTTP client that adds the access token to each request.
    pub client: AuthClient<reqwest::Client>,
    connecting: AtomicBool,
    refusal: parking_lot::Mutex<Option<Refusal>>,
}

impl Link {
    /// A link whose first connection is still being made.
    pub fn new(auth: Arc<Authorizer>, client: AuthClient<reqwest::Client>) -> Link {
        Link {
            auth,
            client,
            connecting: AtomicBool::new(true),
            refusal: parking_lot::Mutex::new(None),
        }
    }

    /// The refusal of the last attempt, if the server refused it.
    pub fn take_refusal(&self) -> Option<Refusal> {
        self.refusal.lock().take()
    }

    /// Whether the last attempt was refused and awaits [`Link::settle`].
    pub fn refused(&self) -> bool {
        self.refusal.lock().is_some()
    }

    /// A refusal without a challenge (the SSE event stream answered 401).
    pub fn refuse(&self, seen: u64) {
        *self.refusal.lock() = Some(Refusal {
            challenge: String::new(),
            more_scope: false,
            seen,
        });
    }

    /// Logs in after `refusal` (outside any connect limit).
    pub async fn settle(&self, refusal: Refusal) -> Result<(), String> {
        let challenge = Some(refusal.challenge.as_str()).filter(|c| !c.is_empty());
        self.auth
            .reauthorize(
                &self.client.auth_manager,
                challenge,
                refusal.more_scope,
                refusal.seen,
            )
            .await
    }

    /// Connected: later refusals are handled in place.
    pub fn connected(&self) {
        self.connecting.store(false, Ordering::Release);
    }
}

/// The `Authorization` value for a legacy SSE connection: the stored
/// access token (refreshed when it has expired), if there is one.
pub async fn sse_bearer(link: Option<&Arc<Link>>) -> Option<HeaderValue> {
    let token = link?.client.get_access_token().await.ok()?;
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    // Kept out of any debug output of the header map.
    value.set_sensitive(true);
    Some(value)
}

/// Calls `method` on the authorizing client when there is one (`Some`), else
/// on plain reqwest: both are `StreamableHttpClient`s, called the same way.
macro_rules! either {
    ($client:expr, $plain:expr, $method:ident($($arg:expr),* $(,)?)) => {
        match $client {
            Some(c) => c.$method($($arg),*).await,
            None => $plain.$method($($arg),*).await,
        }
    };
}

/// reqwest alone, or with a [`Link`].
#[derive(Clone, Debug)]
pub struct Guarded {
    plain: reqwest::Client,
    link: Option<Arc<Link>>,
    facts: Arc<TaskFacts>,
}

impl Guarded {
    /// A client that authorizes through `link` when there is one; the
    /// server's answers on event streams are shown to `facts` (see
    /// [`crate::task_facts`]).
    pub(crate) fn new(link: Option<Arc<Link>>, facts: Arc<TaskFacts>) -> Guarded {
        Guarded {
            plain: reqwest::Client::new(),
            link,
            facts,
        }
    }

    /// `stream` with each event's data shown to the task facts first.
    fn tapped(
        &self,
        stream: BoxStream<'static, Result<Sse, SseError>>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let facts = Arc::clone(&self.facts);
        Box::pin(stream.inspect(move |event| {
            if let Ok(Sse {
                data: Some(data), ..
            }) = event
            {
                facts.observe(data.as_bytes());
            }
        }))
    }

    async fn run<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<&AuthClient<reqwest::Client>>) -> Fut,
        Fut: std::future::Future<Output = Result<T, HttpError>>,
    {
        let Some(link) = &self.link else {
            return call(None).await;
        };
        loop {
            let seen = link.auth.generation();
            let error = match call(Some(&link.client)).await {
                Ok(value) => {
                    link.auth.succeeded();
                    return Ok(value);
                }
                Err(error) => error,
            };
            let (challenge, more_scope) = match &error {
                StreamableHttpError::AuthRequired(e) => (e.www_authenticate_header.clone(), false),
                StreamableHttpError::InsufficientScope(e) => {
                    (e.www_authenticate_header.clone(), true)
                }
                _ => return Err(error),
            };
            let refusal = Refusal {
                challenge,
                more_scope,
                seen,
            };
            if link.connecting.load(Ordering::Acquire) {
                *link.refusal.lock() = Some(refusal);
                return Err(error);
            }
            if let Err(why) = link.settle(refusal).await {
                return Err(AuthError::AuthorizationFailed(why).into());
            }
        }
    }
}

impl StreamableHttpClient for Guarded {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let response = self
            .run(|client| {
                let (uri, message, session_id, auth_header, headers) = (
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    auth_header.clone(),
                    custom_headers.clone(),
                );
                let plain = self.plain.clone();
                let client = client.cloned();
                async move {
                    either!(
                        client,
                        plain,
                        post_message_with_response_limits(
                            uri,
                            message,
                            session_id,
                            auth_header,
                            headers,
                            limits
                        )
                    )
                }
            })
            .await?;
        Ok(match response {
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(self.tapped(stream), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        // Ending a session never starts a login.
        either!(
            self.link.as_ref().map(|link| &link.client),
            self.plain,
            delete_session(uri, session_id, auth_header, custom_headers)
        )
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.run(|client| {
            let (uri, session_id, last, auth_header, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            );
            let plain = self.plain.clone();
            let client = client.cloned();
            async move {
                either!(
                    client,
                    plain,
                    get_stream(uri, session_id, last, auth_header, headers)
                )
            }
        })
        .await
        .map(|stream| self.tapped(stream))
    }
}
