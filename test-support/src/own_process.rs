//! A test in a process of its own. Some tests change the whole process
//! (its current directory, becoming a child subreaper) or measure it (its
//! peak memory, every scan of /proc it takes); each was once a test binary
//! of its own. Now that a crate's tests share one binary, such a test runs
//! the binary again with only itself selected, and passes when that run
//! passed: the other tests keep running side by side, none waits.

use std::process::Command;

/// Set in the process started for one test: that test's name.
const VAR: &str = "BATON_TEST_OWN_PROCESS";

/// Runs `body` in a fresh process of this test binary: in the test's own
/// run there, `body` itself; anywhere else, that run, whose failure (or a
/// selection that ran nothing) fails the test. `module` is the test's
/// `module_path!()`, `test` its function's name; [`own_process!`] passes
/// both.
///
/// [`own_process!`]: crate::own_process!
pub fn run(module: &str, test: &str, body: impl FnOnce()) {
    // The harness names a test by its path below the crate.
    let name = match module.split_once("::") {
        Some((_, below)) => format!("{below}::{test}"),
        None => test.to_string(),
    };
    if std::env::var(VAR).is_ok_and(|selected| selected == name) {
        body();
        return;
    }
    let exe = std::env::current_exe()
        .unwrap_or_else(|e| panic!("{name}: the test binary's path is unknown: {e}"));
    let out = Command::new(&exe)
        .arg(&name)
        .args(["--exact", "--test-threads=1"])
        .env(VAR, &name)
        .output()
        .unwrap_or_else(|e| panic!("{name}: {} did not start: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name}, run in a process of its own, failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// `own_process!(test_name, || { ... })`: runs the closure as the test
/// `test_name` (the enclosing `#[test]` function) in a process of its
/// own; see [`run`].
#[macro_export]
macro_rules! own_process {
    ($test:ident, $body:expr) => {
        $crate::own_process::run(module_path!(), stringify!($test), $body)
    };
}

#[cfg(test)]
mod tests {
    use super::{run, VAR};

    #[test]
    fn the_body_runs_in_the_process_started_for_it() {
        crate::own_process!(the_body_runs_in_the_process_started_for_it, || {
            assert_eq!(
                std::env::var(VAR).as_deref(),
                Ok("own_process::tests::the_body_runs_in_the_process_started_for_it")
            );
        });
    }

    #[test]
    fn a_failure_in_its_own_process_fails_the_test() {
        if std::env::var(VAR).is_ok() {
            // The process started for this test: the body fails there.
            crate::own_process!(a_failure_in_its_own_process_fails_the_test, || {
                panic!("failing on purpose")
            });
            return;
        }
        let outcome = std::panic::catch_unwind(|| {
            crate::own_process!(a_failure_in_its_own_process_fails_the_test, || {
                unreachable!("the body runs in the other process")
            })
        });
        assert!(outcome.is_err(), "the failure in its own process was lost");
    }

    #[test]
    fn a_name_that_selects_no_test_fails() {
        let outcome = std::panic::catch_unwind(|| {
            run(module_path!(), "no_such_test", || {
                unreachable!("nothing runs")
            })
        });
        assert!(outcome.is_err(), "a run of no test passed");
    }
}
