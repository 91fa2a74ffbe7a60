//! What one `write_stdin` may type into a shell, judged as the shell will
//! read it.
//!
//! The rules judge a command line as `bash -c` reads it. An interactive
//! bash on a terminal reads differently, and each difference is a way to
//! run what the judge never saw:
//! - **history expansion** rewrites a line after it was typed: `!!:1:t`
//!   turns an earlier line's quoted `'a/$(cmd)'` into a bare `$(cmd)`;
//! - **the terminal** acts on control characters before any program reads
//!   them: Ctrl-D ends a read in the middle of a line, Ctrl-U erases it;
//! - **a line runs before the next is read**, so whatever the first line
//!   starts (`head -c 6`) can take part of the next one and leave bash the
//!   rest;
//! - **a line can be unfinished** (a trailing `\`, an open quote), and bash
//!   then joins it with the next write, which the judge saw alone;
//! - **a line longer than the terminal's buffer** (4095 bytes) is cut.
//!
//! So a write to a shell is either exactly one Ctrl-C or Ctrl-D, or text
//! that keeps clear of all of that: no control character but tab and a
//! final newline, at most one line, no history expansion syntax, a short
//! line, and a finished command when the line ends. What the terminal and
//! the shell are doing at that moment is checked separately (`terminal`).

use baton_engine::shell;

/// Ctrl-C: the terminal interrupts the foreground program and drops the
/// line being typed.
pub(crate) const INTERRUPT: char = '\u{3}';
/// Ctrl-D: end of input for the program reading the terminal.
pub(crate) const END_OF_INPUT: char = '\u{4}';

/// The longest line (newline included) sent to a shell. The Linux terminal
/// keeps 4095 bytes of a line being typed and drops the rest, so a longer
/// line would reach bash cut where the judge saw it whole.
pub(crate) const MAX_LINE_BYTES: usize = 4000;

/// The characters bash's history expansion uses by default: `!` starts an
/// expansion, `^` at the start of a line is a quick substitution.
/// Baton's shells get other ones (see `process`), but a startup file can
/// set them back, so input is judged as if these were in force.
const HISTORY_CHAR: char = '!';
const QUICK_SUBSTITUTION: char = '^';

/// A command name no program has: the probe that tells whether a line is a
/// finished command (see [`finished`]).
const PROBE: &str = "baton_line_end_probe";

/// One write to a shell session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Typed {
    /// Exactly one Ctrl-C.
    Interrupt,
    /// Exactly one Ctrl-D.
    EndOfInput,
    /// Anything else: text judged as (part of) a command line.
    Text,
}

impl Typed {
    pub(crate) fn of(chars: &str) -> Typed {
        let mut it = chars.chars();
        match (it.next(), it.next()) {
            (Some(INTERRUPT), None) => Typed::Interrupt,
            (Some(END_OF_INPUT), None) => Typed::EndOfInput,
            _ => Typed::Text,
        }
    }
}

/// The line a shell session is in the middle of: what Baton typed since
/// the last newline, or unknown once the terminal may not have done what a
/// key usually does (see [`PendingLine::interrupted`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PendingLine {
    text: String,
    unknown: bool,
}

impl PendingLine {
    /// The text the shell will read as one line once `chars` is typed:
    /// the unfinished line joined with what continues it. This is what the
    /// rules judge.
    pub(crate) fn with(&self, chars: &str) -> String {
        format!("{}{chars}", self.text)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty() && !self.unknown
    }

    /// After `chars` (accepted text) was typed.
    pub(crate) fn typed(&mut self, chars: &str) {
        if chars.ends_with('\n') {
            self.text.clear();
        } else {
            self.text.push_str(chars);
        }
    }

    /// After a Ctrl-C: the terminal drops the line when it interrupts
    /// (`cleared`: ISIG on, Ctrl-C is its interrupt key, no NOFLSH). When
    /// it does not, what the shell holds is no longer known, and no text
    /// is accepted until a Ctrl-C clears it.
    pub(crate) fn interrupted(&mut self, cleared: bool) {
        if cleared {
            *self = PendingLine::default();
        } else {
            self.unknown = true;
        }
    }

    /// Why `chars` may not be typed after this line, if it may not.
    pub(crate) fn refuse(&self, chars: &str) -> Option<String> {
        match Typed::of(chars) {
            Typed::Interrupt => None,
            Typed::EndOfInput if self.is_empty() => None,
            Typed::EndOfInput => Some(
                "Ctrl-D in the middle of a line would hand the shell the unfinished line; \
                 finish the line, or drop it with Ctrl-C (\\u0003) first."
                    .into(),
            ),
            Typed::Text if self.unknown => Some(
                "The terminal did not drop this session's unfinished line on Ctrl-C (its \
                 settings were changed), so what the shell will read is not known; no more \
                 text is sent to it. End the session and start a new one."
                    .into(),
            ),
            Typed::Text => refuse_text(&self.text, chars),
        }
    }
}

/// Why text may not be typed after `partial`, if it may not.
fn refuse_text(partial: &str, chars: &str) -> Option<String> {
    if let Some(bad) = chars
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Some(format!(
            "The input contains the control character U+{:04X}. The terminal acts on control \
             characters before the shell reads the line (Ctrl-D ends a read mid-line, Ctrl-U \
             erases it), so a write to a shell is either text (with tab and a final newline) \
             or exactly one Ctrl-C (\\u0003) or Ctrl-D (\\u0004).",
            bad as u32
        ));
    }
    if chars.find('\n').is_some_and(|i| i + 1 != chars.len()) {
        return Some(
            "Send one line per write_stdin: bash runs a line before it reads the next, and a \
             program that line starts could read part of the next one. Join commands with `;` \
             or `&&`, or write a script file and run it."
                .into(),
        );
    }
    let line = format!("{partial}{chars}");
    if line.len() > MAX_LINE_BYTES {
        return Some(format!(
            "The line is {} bytes long; a terminal cuts lines after 4095 bytes, so at most \
             {MAX_LINE_BYTES} are sent. Write a script file and run it.",
            line.len()
        ));
    }
    if let Some(why) = history_expansion(&line) {
        return Some(why);
    }
    if line.ends_with('\n') && !finished(&line) {
        return Some(
            "The line does not finish its command (a trailing `\\`, an open quote, bracket \
             or here-document, or syntax that cannot be analysed): bash would join it with \
             the next write, which would then be judged on its own. Send the whole command \
             on one line."
                .into(),
        );
    }
    None
}

/// Why `line` may be changed by bash's history expansion, if it may.
/// Stricter than bash: quoting is ignored (bash expands `!` inside double
/// quotes, and whether a quote is open depends on the expansion itself).
fn history_expansion(line: &str) -> Option<String> {
    if line.trim_start().starts_with(QUICK_SUBSTITUTION) {
        return Some(format!(
            "A line starting with `{QUICK_SUBSTITUTION}` is a history substitution in an \
             interactive bash (`^old^new^` reruns the previous line changed), which runs text \
             the judge never sees."
        ));
    }
    let chars: Vec<char> = line.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c != HISTORY_CHAR {
            continue;
        }
        // What bash leaves alone: `!` before a blank, `=` or the end of
        // the line. `!` ending an unfinished line is judged again with
        // what follows it.
        match chars.get(i + 1) {
            None | Some(' ' | '\t' | '\n' | '=') => {}
            Some(next) => {
                return Some(format!(
                    "`{HISTORY_CHAR}{next}` is history expansion in an interactive bash (`!!`, \
                     `!$`, `!#:1`, `!name` put earlier text into the line), which runs text the \
                     judge never sees. Write `!` only before a space, `=` or the end of the line \
                     (`! cmd`, `!=`), or use `test`/`[ ]` forms without it."
                ));
            }
        }
    }
    None
}

/// Whether `line` (ending in a newline) is a finished command: bash runs
/// it at that newline instead of reading on. Probed by parsing it with a
/// probe command after it: only when the probe stands alone as the last
/// command did the line end where bash ends it. A trailing backslash (line
/// continuation) is refused outright, whatever the parser makes of it.
pub(crate) fn finished(line: &str) -> bool {
    let body = line.trim_end_matches('\n');
    let backslashes = body.len() - body.trim_end_matches('\\').len();
    if backslashes % 2 == 1 {
        return false;
    }
    if body.trim().is_empty() {
        return true;
    }
    let (Ok(alone), Ok(probed)) = (
        shell::parse(line),
        shell::parse(&format!("{line}{PROBE}\n")),
    ) else {
        return false;
    };
    let (alone, probed) = (alone.commands(), probed.commands());
    let Some((last, before)) = probed.split_last() else {
        return false;
    };
    let start = line.len();
    // The line's own commands are unchanged by what follows it, and the
    // probe is a command of its own after them.
    before.len() == alone.len()
        && before
            .iter()
            .zip(alone)
            .all(|(a, b)| a.span() == b.span() && a.text() == b.text())
        && last.span() == (start..start + PROBE.len())
        && last.text() == PROBE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(partial: &str, chars: &str) -> bool {
        refuse_text(partial, chars).is_some()
    }

    #[test]
    fn a_write_of_one_key_is_a_key() {
        assert_eq!(Typed::of("\u{3}"), Typed::Interrupt);
        assert_eq!(Typed::of("\u{4}"), Typed::EndOfInput);
        assert_eq!(Typed::of("\u{3}\u{3}"), Typed::Text);
        assert_eq!(Typed::of("ls\u{4}"), Typed::Text);
    }

    #[test]
    fn control_characters_pass_only_alone() {
        assert!(!refused("", "ls -la\n"));
        assert!(!refused("", "printf 'a\\tb'\t\n"));
        for bad in [
            "echo x #\u{4}\u{4}touch X\n",
            "rm -rf /tmpx\u{7f}\n",
            "echo hi\u{15}rm -rf ~\n",
            "\u{1b}[A\n",
            "echo x\r",
            "sleep 1\u{3}ls\n",
            "\u{16}\u{4}",
        ] {
            assert!(refused("", bad), "{bad:?}");
        }
    }

    #[test]
    fn one_line_per_write() {
        assert!(refused("", "head -c 6\necho '$(touch X) ;'\\'\n"));
        assert!(refused("", "ls\necho"));
        assert!(!refused("", "ls; pwd\n"));
        assert!(!refused("echo a", "b\n"));
    }

    #[test]
    fn history_expansion_is_refused_where_bash_would_expand() {
        for bad in [
            "echo !!:1:t\\'\n",
            "echo 'a/$(touch X)' !#:1:t\\'\n",
            "echo \"!$\"\n",
            "echo '!-2'\n",
            "!ls\n",
            "^a^b^\n",
            "  ^x^y\n",
            "echo a!b\n",
        ] {
            assert!(refused("", bad), "{bad:?}");
        }
        for ok in [
            "if ! grep -q x f; then echo no; fi\n",
            "[ \"$a\" != b ]\n",
            "echo hi !\n",
            "echo a^b\n",
        ] {
            assert!(!refused("", ok), "{ok:?}");
        }
        // Split over two writes, the pair is judged as one line.
        assert!(!refused("", "echo !"));
        assert!(refused("echo !", "!\n"));
    }

    #[test]
    fn a_line_must_finish_its_command() {
        for open in [
            "echo x\\\n",
            "echo 'a\n",
            "echo \"a\n",
            "echo $(\n",
            "for i in 1 2; do\n",
            "cat <<EOF\n",
            "echo x |\n",
            "echo x &&\n",
            "f()\n",
            "{\n",
        ] {
            assert!(refused("", open), "{open:?}");
        }
        for done in [
            "echo x\\\\\n",
            "echo 'a\\'\n",
            "for i in 1 2; do echo $i; done\n",
            "cat <<< word\n",
            "# just a comment\n",
            "\n",
            "echo x # comment \\\\\n",
        ] {
            assert!(!refused("", done), "{done:?}");
        }
    }

    #[test]
    fn long_lines_are_refused() {
        let long = format!("echo {}\n", "x".repeat(MAX_LINE_BYTES));
        assert!(refused("", &long));
        let half = "x".repeat(MAX_LINE_BYTES / 2 + 10);
        assert!(!refused("", &format!("echo {half}")));
        assert!(refused(&format!("echo {half}"), &format!("{half}\n")));
    }

    #[test]
    fn the_pending_line_follows_what_was_typed() {
        let mut line = PendingLine::default();
        assert_eq!(line.with("rm -r"), "rm -r");
        line.typed("rm -r");
        assert_eq!(line.with("f /\n"), "rm -rf /\n");
        assert!(line.refuse("\u{4}").is_some());
        line.interrupted(true);
        assert!(line.is_empty());
        assert!(line.refuse("\u{4}").is_none());
        line.typed("echo a");
        line.interrupted(false);
        assert!(line.refuse("ls\n").is_some());
        assert!(line.refuse("\u{3}").is_none());
        line.interrupted(true);
        assert!(line.refuse("ls\n").is_none());
        line.typed("ls\n");
        assert!(line.is_empty());
    }
}
