//! The engine's integration tests, one binary: each module was a test
//! binary of its own, and each linked the whole dependency graph again.
//! Tests run side by side in this one process; one that changes or
//! measures the whole process (a child subreaper, every scan of /proc)
//! runs in a fresh one (`baton_test_support::own_process!`).
//!
//! Run one module's tests with `cargo test -p baton-engine --test
//! integration <module>::`.

// Tests may unwrap, and their helpers are public to their modules.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod common;

mod arbitrary_input;
mod chat_choices;
mod contract_and_pool;
mod descriptors_vs_bash;
mod holes_classes;
mod holes_policy;
mod holes_vs_bash;
mod hooks_pipeline;
mod judge_only;
mod launch;
mod launch_descriptors;
mod orphans_below;
mod permission_classes;
mod permission_props;
mod permission_table;
mod pipeline_stages;
mod reach_props;
mod sandbox_settings;
mod scan_floor;
mod scan_sharing;
mod settings;
mod shell_classes;
mod shell_vs_bash;
mod stream_tester;
mod wire_formats;
mod wire_native;
mod wire_schema;
