//! Asking the user on the terminal when a call needs approval (`baton run`
//! with a terminal attached).

use std::io::{BufRead, IsTerminal, Write};

use baton::engine::Approval;
use baton::PermissionPrompt;

pub fn terminal_attached() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks on stderr and reads the answer from stdin, off the async threads.
pub async fn ask(prompt: PermissionPrompt) {
    let question = format!(
        "baton: `{}` wants to run ({}):\n  {}\nAllow? [y/N] ",
        prompt.request.tool_name, prompt.request.reason, prompt.request.input
    );
    let answer = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr();
        let _ = err.write_all(question.as_bytes());
        let _ = err.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(_) => matches!(line.trim(), "y" | "Y" | "yes"),
            Err(_) => false,
        }
    })
    .await
    .unwrap_or(false);
    prompt.answer(if answer {
        Approval::Allow
    } else {
        Approval::Deny {
            reason: Some("the user answered no at the prompt".into()),
        }
    });
}
