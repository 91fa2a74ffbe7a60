//! Reading a sed script far enough to know whether it touches files.
//!
//! GNU sed names files and programs inside its own language: `r`/`R` read
//! a file, `w`/`W` write one, `e` runs a command, and the `s` command's
//! `w FILE` and `e` flags do the same. Refusing every script that merely
//! contains those letters would also refuse `s/foo/bar/`, so the script is
//! parsed command by command, the way sed splits it; anything this reader
//! does not understand makes the script unsafe.

/// Whether `script` uses no command or flag that reads or writes a file or
/// runs a program.
pub(crate) fn harmless(script: &str) -> bool {
    let mut r = Reader {
        chars: script.chars().collect(),
        pos: 0,
    };
    r.script().is_some()
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    /// `Some(())` when every command is harmless, `None` otherwise.
    fn script(&mut self) -> Option<()> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';' | '}')) {
                self.pos += 1;
            }
            let Some(c) = self.peek() else {
                return Some(());
            };
            if c == '#' {
                self.skip_line();
                continue;
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.pos += 1;
                self.skip_blanks();
                if matches!(self.peek(), Some('+' | '~')) {
                    self.pos += 1;
                }
                self.address()?;
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.pos += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    /// One address, or none: a line number (`first~step`), `$`, or a
    /// regular expression (`/re/`, `\cREc`) with its `I`/`M` flags.
    fn address(&mut self) -> Option<()> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.peek() == Some('~') {
                    self.pos += 1;
                    self.digits();
                }
            }
            Some('$') => self.pos += 1,
            Some('/') => {
                self.pos += 1;
                self.until('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.pos += 1;
                let delimiter = self.next()?;
                if delimiter == '\n' || delimiter == '\\' {
                    return None;
                }
                self.until(delimiter)?;
                self.regex_flags();
            }
            _ => {}
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.pos += 1;
        }
    }

    /// Skips to the unescaped `delimiter` and past it.
    fn until(&mut self, delimiter: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next()?;
                }
                c if c == delimiter => return Some(()),
                _ => {}
            }
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.next();
                }
                '\n' => return,
                _ => {}
            }
        }
    }

    /// After a command: blanks, then the end of the command.
    fn end(&mut self) -> Option<()> {
        self.skip_blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}' | '#') => Some(()),
            _ => None,
        }
    }

    fn command(&mut self) -> Option<()> {
        match self.next()? {
            '{' => Some(()),
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {
                self.end()
            }
            // An optional number (line length, exit status).
            'l' | 'L' | 'q' | 'Q' => {
                self.skip_blanks();
                self.digits();
                self.end()
            }
            // Text to the end of the line (GNU one-line form included).
            'a' | 'i' | 'c' => {
                self.skip_line();
                Some(())
            }
            // Labels end at a newline or a semicolon.
            ':' | 'b' | 't' | 'T' | 'v' => {
                while !matches!(self.peek(), None | Some(';' | '\n')) {
                    self.pos += 1;
                }
                Some(())
            }
            's' => {
                self.two_parts()?;
                while let Some(flag) = self.peek() {
                    match flag {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.pos += 1,
                        c if c.is_ascii_digit() => self.pos += 1,
                        // `e` runs the pattern space, `w FILE` writes.
                        _ => break,
                    }
                }
                self.end()
            }
            'y' => {
                self.two_parts()?;
                self.end()
            }
            // `r`, `R`, `w`, `W`, `e` and anything unknown.
            _ => None,
        }
    }

    /// The two delimited parts of `s/a/b/` and `y/a/b/`: a delimiter of
    /// the command's choice (not a newline or backslash), then two texts
    /// ending with it.
    fn two_parts(&mut self) -> Option<()> {
        let delimiter = self.next()?;
        if delimiter == '\n' || delimiter == '\\' {
            return None;
        }
        self.until(delimiter)?;
        self.until(delimiter)
    }
}

#[cfg(test)]
mod tests {
    use super::harmless;

    #[test]
    fn file_and_program_commands_are_found() {
        for safe in [
            "s/foo/bar/",
            "s/reader/writer/g",
            "1,20p",
            "$d",
            "/error/I,+2p",
            "s|a|b|gI;p",
            "y/abc/xyz/",
            "1~2{p;d}",
            "/x/!d",
            "a\\\nappended",
            "3i inserted text with w and e",
            ":a;N;ba",
            "s/\\/w/x/",
            "q5",
            "# note with r and w\np",
            "\\,x,d",
        ] {
            assert!(harmless(safe), "{safe:?} should be harmless");
        }
        for unsafe_ in [
            "r /etc/passwd",
            "1R /etc/passwd",
            "w out",
            "1W out",
            "e touch F",
            "s/x/touch F/e",
            "s/x/y/w out",
            "s/x/y/gw out",
            "p;w out",
            "/a/ r f",
            "1{r f\n}",
            "s/x",
            "k",
            "s/[/]/x/e",
        ] {
            assert!(!harmless(unsafe_), "{unsafe_:?} should be refused");
        }
    }
}
