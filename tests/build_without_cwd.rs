//! An engine never guesses its workspace: when no working directory is
//! given and the process's own cannot be read, building fails. In a process
//! of its own, because it changes the process's current directory.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton::Engine;
use baton_test_support::own_process;

#[test]
fn building_without_a_readable_current_directory_fails() {
    own_process!(
        building_without_a_readable_current_directory_fails,
        build_in_a_removed_directory
    );
}

fn build_in_a_removed_directory() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    std::env::set_current_dir(&gone).unwrap();
    std::fs::remove_dir(&gone).unwrap();
    assert!(
        std::env::current_dir().is_err(),
        "the directory should be unreadable now"
    );

    let pool = || {
        baton::BuiltinConfig::default()
            .pool(&baton::engine::RulePolicy::new())
            .unwrap()
    };
    let err = Engine::builder(pool())
        .state_dir(dir.path().join("state"))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("current directory"), "{err}");
    assert!(err.to_string().contains("cwd"), "{err}");
    // Allow-all does not change that: the workspace is never `/`.
    assert!(Engine::builder(pool()).allow_all_unsafe().build().is_err());
    // The blocking API reports the same error.
    let blocking = baton::blocking::BlockingEngine::new(Engine::builder(pool()), 1);
    assert!(blocking.is_err());
    // Given explicitly, it builds.
    Engine::builder(pool()).cwd(dir.path()).build().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
}
