//! The `baton` package's integration tests, one binary: each module was a
//! test binary of its own, and each linked the whole dependency graph
//! again. Tests run side by side in this one process, so what a test
//! counts or looks for is its own (`baton_test_support::procs::marker`),
//! and a test that changes or measures the whole process runs in a fresh
//! one (`baton_test_support::own_process!`).
//!
//! Run one module's tests with `cargo test --test integration <module>::`.

// Tests may unwrap, and their helpers are public to their modules.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod common;
mod support;

mod agent;
mod agent_limits;
mod agent_loop_hooks;
mod agent_messaging;
mod agent_native;
mod agent_nested;
mod agent_plan_skill;
mod agent_task_notifications;
mod agent_tool_changes;
mod answer_streamed;
mod assembly_one_path;
mod batch_background;
mod build_without_cwd;
mod call_control;
mod cli;
mod cli_signals;
mod cli_tool_search;
mod concurrency_kinds;
mod denial_texts;
mod deploy;
mod docs_true;
mod fault_injection;
mod fault_injection_nested;
mod fault_injection_real;
mod fault_injection_sources;
mod floor_differential;
mod grep_memory;
mod hardening;
mod hooks_codex_names;
mod hooks_interrupt;
mod hooks_mcp_tool;
mod hooks_real;
mod host_api;
mod interrupt_reach;
mod interrupts;
mod lifecycle;
mod limits;
mod mcp_client_cli;
mod mcp_conformance;
mod mcp_elicitation_defaults;
mod mcp_engine_owns;
mod mcp_oauth;
mod mcp_plugin_servers;
mod mcp_serve_guard;
mod mcp_server;
mod mcp_tasks;
mod metrics_http;
mod nesting_race;
mod own_tool;
mod plan_mode;
mod processes;
mod remote;
mod remote_durable;
mod remote_durable_prop;
mod remote_hook_response;
mod remote_stall;
mod remote_workspace;
mod resume_library;
mod run_view;
mod sandbox_auto_allow_codex;
mod sandbox_baton_proc;
mod sandbox_floor;
mod sandbox_protect;
mod sandbox_settings_mode;
mod scheduling;
mod sdk_tool_search;
mod serve_approvals;
mod serve_background;
mod serve_engine_tools;
mod serve_hook_event;
mod serve_journal;
mod serve_model_hooks;
mod serve_native;
mod serve_protocol;
mod serve_resume;
mod serve_strict;
mod serve_subagent_cancel;
mod serve_subagent_tool_set;
mod serve_subagents;
mod serve_tasks;
mod serve_tool_changes;
mod session_cleanup;
mod shell_details;
mod skill_shell;
mod skills;
mod small_ones;
mod spec_citations;
mod startup_signals;
mod state_dir_limits;
mod stream_early_start;
mod structured_results;
mod subagent_background;
mod subagent_hooks;
mod subagents;
mod task_leftovers;
mod tool_search;
mod tracing_log;
mod transfer;
mod transfer_judgement;
mod wire_cli;
mod wire_one_layer;
mod worktree;
