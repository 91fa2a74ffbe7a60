//! The `baton` command: run one assistant message, serve a JSON-lines
//! session, or print the tool pool.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::main(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line: hosts read it as a message, not a report.
            let text = err.to_string().replace('\n', "; ");
            eprintln!("baton: {text}");
            ExitCode::from(err.exit_code())
        }
    }
}
