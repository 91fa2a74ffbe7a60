//! The Prometheus recorder for the engine's metrics
//! ([`baton_engine::metrics`]).
//!
//! Installing it is a choice of the process, never of the library: the
//! `baton` binary installs it where it serves `/metrics` (`baton mcp serve
//! --http`); a Rust host may install it, or any other recorder of the
//! `metrics` ecosystem, or none (then recording costs next to nothing).

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// How often recorded histogram samples are folded into their buckets.
const UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Phase timings span a microsecond check to a half-hour command.
const PHASE_BUCKETS: [f64; 12] = [
    0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 60.0, 600.0,
];

/// Why the Prometheus recorder could not be installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// The recorder could not be configured (the exporter's error).
    #[error("metrics: {0}")]
    Build(#[source] metrics_exporter_prometheus::BuildError),
    /// Another recorder was installed first.
    #[error("metrics: another recorder is installed: {0}")]
    Installed(#[source] metrics::SetRecorderError<metrics_exporter_prometheus::PrometheusRecorder>),
}

/// Installs the Prometheus recorder as the process's global recorder, once;
/// later calls return the same handle. Fails when another recorder was
/// installed first.
pub fn install_prometheus() -> Result<PrometheusHandle, MetricsError> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(baton_engine::metrics::PHASE_SECONDS.to_string()),
            &PHASE_BUCKETS,
        )
        .map_err(MetricsError::Build)?
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).map_err(MetricsError::Installed)?;
    baton_engine::metrics::describe();
    // Histogram samples pile up until they are folded into buckets; without
    // a scrape (or between rare ones) that would grow with every call.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let upkeep = handle.clone();
        runtime.spawn(async move {
            let mut every = tokio::time::interval(UPKEEP_EVERY);
            loop {
                every.tick().await;
                upkeep.run_upkeep();
            }
        });
    }
    // Only one install can reach this point: the global recorder is set once.
    let _ = HANDLE.set(handle.clone());
    Ok(handle)
}

/// The installed recorder's handle, if [`install_prometheus`] ran.
pub fn prometheus() -> Option<PrometheusHandle> {
    HANDLE.get().cloned()
}
