//! Asking the user on the terminal when a call needs approval (`baton run`
//! with a terminal attached).

use std::io::{BufRead, IsTerminal, Write};

use baton::engine::Approval;
use baton::PermissionPrompt;

pub(super) fn terminal_attached() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks on stderr and reads the answer from stdin, off the async threads.
/// The question shows the one-line summary (the command, path or URL), not
/// the whole input; `a` allows and remembers the suggested rule for the
/// rest of the session when there is one.
pub(super) async fn ask(prompt: PermissionPrompt) {
    let request = &prompt.request;
    let remember = request
        .suggestion
        .as_deref()
        .map(baton::engine::permission::summary::printable);
    let mut question = format!(
        "baton: {} ({})\n",
        request.summary,
        baton::engine::permission::summary::printable(&request.reason)
    );
    match &remember {
        Some(rule) => question.push_str(&format!(
            "Allow? [y]es / [a]lways this session ({rule}) / [N]o "
        )),
        None => question.push_str("Allow? [y/N] "),
    }
    let answer = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr();
        let _ = err.write_all(question.as_bytes());
        let _ = err.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(_) => line.trim().to_ascii_lowercase(),
            Err(_) => String::new(),
        }
    })
    .await
    .unwrap_or_default();
    prompt.answer(match answer.as_str() {
        "y" | "yes" => Approval::Allow,
        "a" | "always" if remember.is_some() => Approval::AllowWith {
            updated_input: None,
            remember: true,
        },
        _ => Approval::Deny {
            reason: Some("the user answered no at the prompt".into()),
        },
    });
}
