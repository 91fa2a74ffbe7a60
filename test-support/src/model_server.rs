//! A mock model API on 127.0.0.1 for `baton agent` tests. [`serve`] runs
//! any axum app on a thread of its own (with its own current-thread
//! runtime), so tests that drive `baton` as a child process get a real
//! HTTP server without a runtime of their own; [`serve_post`] is a model
//! that answers every POST with one handler. [`Mock`] is the common case:
//! every POST is recorded and answered with the next queued SSE stream (a
//! 400 once none is left, which ends the agent's run).

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// Serves `app` on a free port of 127.0.0.1 from a thread of its own;
/// the port, once the listener is bound.
pub fn serve(app: axum::Router) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let _ = axum::serve(listener, app).await;
        });
    });
    rx.recv().unwrap()
}

/// Serves `handler` (with `state`) for every POST, whatever the path;
/// the base URL.
pub fn serve_post<H, T, S>(handler: H, state: S) -> String
where
    H: axum::handler::Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    let port = serve(
        axum::Router::new()
            .fallback(axum::routing::post(handler))
            .with_state(state),
    );
    format!("http://127.0.0.1:{port}")
}

/// Queued SSE replies and the requests received.
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
pub fn serve_mock(mock: Mock) -> String {
    serve_post(handle, mock)
}
