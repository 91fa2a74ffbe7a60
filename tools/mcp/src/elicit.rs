//! Elicitation: a server asks the user for input in the middle of a call.
//! It goes to the host like a permission request; with no host to ask, the
//! answer is "decline" (the server decides what a declined request means).

use async_trait::async_trait;
use serde_json::Value;

/// What the server asks for.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitMode {
    /// Fill in a form whose fields the JSON Schema `schema` describes.
    Form {
        /// The form's fields, as a JSON Schema object.
        schema: Value,
    },
    /// Open `url` (e.g. to sign in) and come back.
    Url {
        /// The page to open.
        url: String,
    },
}

/// One elicitation, as the host sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitRequest {
    /// The server asking (its configured name).
    pub server: String,
    /// What the server says to the user.
    pub message: String,
    /// A form to fill in, or a URL to open.
    pub mode: ElicitMode,
}

/// The user's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitResponse {
    /// The form's content (an object), or `Null` for URL mode.
    Accept(Value),
    /// The user said no.
    Decline,
    /// The user dismissed the request without answering.
    Cancel,
}

/// Fills in the `default` of each form field an accepted answer left out
/// (SEP-1034: a client pre-fills the form with the defaults, so a field
/// the user did not touch carries its default). `content` is the answer's
/// object (`Null` counts as empty); a field keeps what the answer gave it.
/// Only a default that fits its field is used (a string for a string, a
/// member of the field's `enum`, …): the server's schema is data, not a
/// promise.
pub fn with_defaults(schema: &Value, content: Value) -> Value {
    let mut content = match content {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        other => return other,
    };
    let Some(fields) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(content);
    };
    for (name, field) in fields {
        if content.contains_key(name) {
            continue;
        }
        if let Some(default) = field.get("default").filter(|d| fits(field, d)) {
            content.insert(name.clone(), default.clone());
        }
    }
    Value::Object(content)
}

/// Whether `value` is a valid answer for the form field `field`.
fn fits(field: &Value, value: &Value) -> bool {
    let typed = match field.get("type").and_then(Value::as_str) {
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        // Multi-select enums (SEP-1330): a list of the allowed strings.
        Some("array") => value
            .as_array()
            .is_some_and(|items| items.iter().all(Value::is_string)),
        Some(_) => false,
        None => value.is_string() || value.is_number() || value.is_boolean(),
    };
    if !typed {
        return false;
    }
    let allowed = |v: &Value, list: Option<&Vec<Value>>| list.is_none_or(|l| l.contains(v));
    match value.as_array() {
        Some(items) => {
            let list = field
                .get("items")
                .and_then(|i| i.get("enum"))
                .and_then(Value::as_array);
            items.iter().all(|v| allowed(v, list))
        }
        None => allowed(value, field.get("enum").and_then(Value::as_array)),
    }
}

/// Answers elicitations (the terminal, a serve host, a Rust callback).
#[async_trait]
pub trait Elicitor: Send + Sync + 'static {
    /// Asks the user; an elicitor that cannot ask answers
    /// [`ElicitResponse::Decline`].
    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse;
}

/// An [`Elicitor`] from an async closure.
pub struct FnElicitor<F>(pub F);

// Not derived: the closure has no `Debug`; the wrapper says what it is.
baton_engine::debug_fields! { FnElicitor<F> { .. } }

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
    pub(crate) fn new(inner: Option<std::sync::Arc<dyn Elicitor>>) -> Self {
        ElicitorSlot(parking_lot::RwLock::new(inner))
    }

    pub(crate) fn current(&self) -> Option<std::sync::Arc<dyn Elicitor>> {
        self.0.read().clone()
    }

    pub(crate) fn replace(&self, next: Option<std::sync::Arc<dyn Elicitor>>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "default": ["a"]},
            "nickname": {"type": "string"}
        }})
    }

    #[test]
    fn missing_fields_get_their_defaults() {
        assert_eq!(
            with_defaults(&schema(), json!({})),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                   "verified": true, "tags": ["a"]})
        );
        assert_eq!(with_defaults(&schema(), Value::Null)["age"], json!(30));
    }

    #[test]
    fn given_fields_are_kept() {
        let out = with_defaults(&schema(), json!({"name": "Ada", "verified": false}));
        assert_eq!(out["name"], "Ada");
        assert_eq!(out["verified"], false);
        assert_eq!(out["age"], 30);
        assert!(out.get("nickname").is_none(), "no default, no value");
    }

    #[test]
    fn defaults_that_do_not_fit_are_ignored() {
        let odd = json!({"properties": {
            "n": {"type": "integer", "default": "thirty"},
            "i": {"type": "integer", "default": 1.5},
            "s": {"type": "string", "enum": ["x"], "default": "y"},
            "o": {"type": "object", "default": {"a": 1}},
            "t": {"type": "array", "items": {"enum": ["a"]}, "default": ["b"]},
            "u": {"default": "untyped"}
        }});
        assert_eq!(with_defaults(&odd, json!({})), json!({"u": "untyped"}));
        assert_eq!(with_defaults(&json!({}), json!({"a": 1})), json!({"a": 1}));
    }
}
