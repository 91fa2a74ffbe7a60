//! `BATON_LOG`: tracing output of the CLI, to stderr only.
//!
//! Off unless `BATON_LOG` is set, so stdout protocols (`run --events`,
//! `serve`, `mcp serve`) never see a stray line. The value is an
//! env-filter directive list (`debug`, `baton_engine=debug,info`,
//! `info,baton_actors=trace`). Spans are reported when they close, with
//! their fields (the `call` span's phase timings, the `batch` span's end
//! state) and the span's busy and idle time. A value that does not parse
//! is reported once on stderr and logging stays off.

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

pub(super) fn init() {
    let Some(directives) = std::env::var_os("BATON_LOG") else {
        return;
    };
    let directives = directives.to_string_lossy();
    if directives.trim().is_empty() {
        return;
    }
    let filter = match EnvFilter::builder().parse(directives.as_ref()) {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!(
                "baton: BATON_LOG={directives:?} is not a valid filter ({e}); logging stays off"
            );
            return;
        }
    };
    let result = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
    if let Err(e) = result {
        eprintln!("baton: BATON_LOG: cannot install the logger ({e})");
    }
}
