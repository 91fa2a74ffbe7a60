//! Elicitation: a server asks the user for input in the middle of a call.
//! It goes to the host like a permission request; with no host to ask, the
//! answer is "decline" (the server decides what a declined request means).

use async_trait::async_trait;
use serde_json::Value;

/// What the server asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitMode {
    /// Fill in a form whose fields the JSON Schema `schema` describes.
    Form { schema: Value },
    /// Open `url` (e.g. to sign in) and come back.
    Url { url: String },
}

/// One elicitation, as the host sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitRequest {
    pub server: String,
    pub message: String,
    pub mode: ElicitMode,
}

/// The user's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitResponse {
    /// The form's content (an object), or `Null` for URL mode.
    Accept(Value),
    Decline,
    Cancel,
}

/// Answers elicitations (the terminal, a serve host, a Rust callback).
#[async_trait]
pub trait Elicitor: Send + Sync + 'static {
    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse;
}

/// An [`Elicitor`] from an async closure.
pub struct FnElicitor<F>(pub F);

#[async_trait]
impl<F, Fut> Elicitor for FnElicitor<F>
where
    F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ElicitResponse> + Send,
{
    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        (self.0)(request).await
    }
}

/// The elicitor every connection of a client set asks; whoever owns the set
/// may wrap it later (the engine adds the Elicitation hooks around the
/// host's elicitor once it is built).
#[derive(Default)]
pub(crate) struct ElicitorSlot(parking_lot::RwLock<Option<std::sync::Arc<dyn Elicitor>>>);

impl std::fmt::Debug for ElicitorSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ElicitorSlot")
    }
}

impl ElicitorSlot {
    pub fn new(inner: Option<std::sync::Arc<dyn Elicitor>>) -> Self {
        ElicitorSlot(parking_lot::RwLock::new(inner))
    }

    pub fn current(&self) -> Option<std::sync::Arc<dyn Elicitor>> {
        self.0.read().clone()
    }

    pub fn replace(&self, next: Option<std::sync::Arc<dyn Elicitor>>) {
        *self.0.write() = next;
    }
}

#[async_trait]
impl Elicitor for ElicitorSlot {
    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        match self.current() {
            Some(inner) => inner.elicit(request).await,
            None => ElicitResponse::Decline,
        }
    }
}
