//! An engine whose tools run on remote workers
//! ([`baton_test_support::worker::Worker`]): the routing the remote tests
//! share.

use std::path::Path;

use baton_test_support::worker::Worker;

/// An engine in `local` whose `tools` run on `workers` (the rest locally),
/// every permission granted, sessions spread by `key`.
pub fn routed_engine(
    local: &Path,
    workers: &[&Worker],
    key: &str,
    token: &str,
    tools: &[&str],
) -> baton::Engine {
    let urls: Vec<String> = workers.iter().map(|w| w.url.clone()).collect();
    engine_on_urls(local, &urls, key, token, tools)
}

/// [`routed_engine`] with the workers given by URL (one may be down).
pub fn engine_on_urls(
    local: &Path,
    urls: &[String],
    key: &str,
    token: &str,
    tools: &[&str],
) -> baton::Engine {
    use baton::engine::permission::AllowAllUnsafe;
    use baton::engine::{PoolSpec, ToolPool};
    let builtins = baton::BuiltinConfig::default().tools().unwrap();
    let config = baton::remote::RemoteConfig {
        workers: urls.to_vec(),
        token: Some(token.into()),
        tools: tools.iter().map(|t| t.to_string()).collect(),
    };
    let routed = baton::remote::route(builtins, &config, key).unwrap();
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: routed,
            ..Default::default()
        },
        &AllowAllUnsafe,
    );
    baton::Engine::builder(pool)
        .cwd(local)
        .state_dir(local.join(".state"))
        .policy(std::sync::Arc::new(AllowAllUnsafe))
        .build()
        .expect("the engine builds")
}

/// A worker in `dir` accepting `token` whose PreToolUse hook appends the
/// field `field` of every call's hook input (`tool_name`, `tool_use_id`) to
/// `dir/runs.log`: every run of a tool there is counted, across restarts.
pub fn counted_worker(dir: &Path, token: &str, field: &str) -> Worker {
    let claude = dir.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let log = dir.join("runs.log");
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": format!("jq -r .{field} >> {}", log.display())}
    ]}]}});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    Worker::start(crate::support::BATON, dir, token)
}

/// The lines [`counted_worker`]'s hook wrote, oldest first.
pub fn counted_runs(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}
