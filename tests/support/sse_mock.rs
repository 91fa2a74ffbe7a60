//! A mock model API on 127.0.0.1 for `baton agent` tests: every POST is
//! recorded and answered with the next queued SSE stream (a 400 once none
//! is left, which ends the agent's run).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

#[derive(Clone, Default)]
pub struct Mock {
    pub replies: Arc<Mutex<Vec<String>>>,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

async fn handle(State(mock): State<Mock>, body: String) -> Response {
    mock.requests
        .lock()
        .unwrap()
        .push(serde_json::from_str(&body).unwrap_or(Value::Null));
    let reply = {
        let mut replies = mock.replies.lock().unwrap();
        (!replies.is_empty()).then(|| replies.remove(0))
    };
    match reply {
        Some(sse) => ([("content-type", "text/event-stream")], sse).into_response(),
        None => (axum::http::StatusCode::BAD_REQUEST, "no more replies").into_response(),
    }
}

/// Serves `mock` on its own thread; the base URL.
pub fn serve(mock: Mock) -> String {
    let port = super::axum_thread::serve(
        axum::Router::new()
            .fallback(axum::routing::post(handle))
            .with_state(mock),
    );
    format!("http://127.0.0.1:{port}")
}
