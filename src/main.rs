//! The `baton` command: run one assistant message, serve a JSON-lines
//! session, or print the tool pool.

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// Results are made on the runtime's worker threads and written and freed
/// on another; glibc's malloc paid for that in consolidation passes (about
/// 30 % of a no-op call's CPU on the host paths, docs/benchmarks.md §1b).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::main(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line per problem, each standing alone (several settings
            // problems used to be joined with `;` into one long line).
            for line in err.to_string().lines().filter(|l| !l.trim().is_empty()) {
                eprintln!("baton: {}", line.trim());
            }
            ExitCode::from(err.exit_code())
        }
    }
}
