//! Serves an axum app on 127.0.0.1 from a thread of its own (with its own
//! current-thread runtime), so tests that drive `baton` as a child process
//! get a real HTTP server (a mock model API) without a runtime of their
//! own. Returns the port once the listener is bound.

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
