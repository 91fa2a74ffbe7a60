//! Programs that are read-only only with some flags, each parsed the way
//! the program parses its arguments (see `options` for long options).

use super::allowlist::short_has;
use super::options::{may_be, resolve, Arity, LongOpt};

use Arity::{None as Flag, Optional, Required};

pub(crate) fn find(args: &[&str]) -> bool {
    const ACTIONS: &[&str] = &[
        "-delete",
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
        // Reads the starting points from a file the text does not show.
        "-files0-from",
    ];
    !args.iter().any(|a| ACTIONS.contains(a))
}

const SORT: &[LongOpt] = &[
    ("--ignore-leading-blanks", Flag),
    ("--dictionary-order", Flag),
    ("--ignore-case", Flag),
    ("--general-numeric-sort", Flag),
    ("--ignore-nonprinting", Flag),
    ("--month-sort", Flag),
    ("--human-numeric-sort", Flag),
    ("--numeric-sort", Flag),
    ("--random-sort", Flag),
    ("--random-source", Required),
    ("--reverse", Flag),
    ("--sort", Required),
    ("--version-sort", Flag),
    ("--batch-size", Required),
    ("--check", Optional),
    ("--compress-program", Required),
    ("--debug", Flag),
    ("--files0-from", Required),
    ("--key", Required),
    ("--merge", Flag),
    ("--output", Required),
    ("--stable", Flag),
    ("--buffer-size", Required),
    ("--field-separator", Required),
    ("--temporary-directory", Required),
    ("--parallel", Required),
    ("--unique", Flag),
    ("--zero-terminated", Flag),
    ("--help", Flag),
    ("--version", Flag),
];

pub(crate) fn sort(args: &[&str]) -> bool {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if *arg == "--" {
            return true;
        }
        if arg.starts_with("--") {
            let Some(opt) = resolve(arg, SORT) else {
                return false;
            };
            // `--files0-from` reads the names of its inputs from a file;
            // `-T` writes temporary files into a directory of its choice.
            if matches!(
                opt.name,
                "--output" | "--compress-program" | "--files0-from" | "--temporary-directory"
            ) {
                return false;
            }
            if opt.arity == Required && opt.value.is_none() {
                iter.next();
            }
        } else if short_has(arg, 'o') || short_has(arg, 'T') {
            return false;
        }
    }
    true
}

pub(crate) fn rg(args: &[&str]) -> bool {
    // `--pre` and `--hostname-bin` run a program of the caller's choosing.
    !args
        .iter()
        .any(|a| may_be(a, &["--pre", "--pre-glob", "--hostname-bin"]))
}

const UNIQ: &[LongOpt] = &[
    ("--all-repeated", Optional),
    ("--check-chars", Required),
    ("--count", Flag),
    ("--group", Optional),
    ("--help", Flag),
    ("--ignore-case", Flag),
    ("--repeated", Flag),
    ("--skip-chars", Required),
    ("--skip-fields", Required),
    ("--unique", Flag),
    ("--version", Flag),
    ("--zero-terminated", Flag),
];

pub(crate) fn uniq(args: &[&str]) -> bool {
    // A second file operand is an output file.
    let mut operands = 0;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match *arg {
            "--" => operands += iter.len(),
            a if a.starts_with("--") => match resolve(a, UNIQ) {
                Some(opt) if opt.arity == Required && opt.value.is_none() => {
                    iter.next();
                }
                Some(_) => {}
                None => return false,
            },
            a if a.starts_with('-') && a.len() > 1 => {
                // `-f N`, `-s N`, `-w N` take a value, glued or next.
                if let Some(pos) = a[1..].find(['f', 's', 'w']) {
                    if a.len() == pos + 2 {
                        iter.next();
                    }
                }
            }
            _ => operands += 1,
        }
    }
    operands <= 1
}

const DATE: &[LongOpt] = &[
    ("--date", Required),
    ("--debug", Flag),
    ("--file", Required),
    ("--help", Flag),
    ("--iso-8601", Optional),
    ("--reference", Required),
    ("--resolution", Flag),
    ("--rfc-3339", Required),
    ("--rfc-email", Flag),
    ("--set", Required),
    ("--universal", Flag),
    ("--utc", Flag),
    ("--version", Flag),
];

pub(crate) fn date(args: &[&str]) -> bool {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg.starts_with("--") && *arg != "--" {
            let Some(opt) = resolve(arg, DATE) else {
                return false;
            };
            if opt.name == "--set" {
                return false;
            }
            if opt.arity == Required && opt.value.is_none() {
                iter.next();
            }
            continue;
        }
        if short_has(arg, 's') {
            return false;
        }
        match *arg {
            "-d" | "-f" | "-r" => {
                iter.next();
            }
            a if a.starts_with('+') => {}
            a if a.starts_with('-') && a.len() > 1 => {}
            // A bare operand sets the clock.
            _ => return false,
        }
    }
    true
}

const SED: &[LongOpt] = &[
    ("--quiet", Flag),
    ("--silent", Flag),
    ("--debug", Flag),
    ("--expression", Required),
    ("--file", Required),
    ("--follow-symlinks", Flag),
    ("--in-place", Optional),
    ("--line-length", Required),
    ("--null-data", Flag),
    ("--zero-terminated", Flag),
    ("--posix", Flag),
    ("--regexp-extended", Flag),
    ("--separate", Flag),
    ("--sandbox", Flag),
    ("--unbuffered", Flag),
    ("--binary", Flag),
    ("--help", Flag),
    ("--version", Flag),
];

pub(crate) fn sed(args: &[&str]) -> bool {
    let mut scripts = Vec::new();
    let mut sandbox = false;
    let mut operands = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let arg = *arg;
        if arg == "--" {
            operands.extend(iter.by_ref().copied());
            break;
        }
        if arg.starts_with("--") {
            let Some(opt) = resolve(arg, SED) else {
                return false;
            };
            let value = match (opt.arity, opt.value) {
                (Required, None) => match iter.next() {
                    Some(v) => Some(*v),
                    None => return false,
                },
                (_, v) => v,
            };
            match opt.name {
                "--expression" => scripts.extend(value),
                "--file" | "--in-place" => return false,
                "--sandbox" => sandbox = true,
                _ => {}
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            // A cluster of short options; `-e` and `-l` take the rest of
            // the word or the next one.
            for (i, c) in arg.char_indices().skip(1) {
                match c {
                    'n' | 'r' | 'E' | 's' | 'u' | 'z' => {}
                    'e' | 'l' => {
                        let rest = &arg[i + 1..];
                        let value = if rest.is_empty() {
                            match iter.next() {
                                Some(v) => *v,
                                None => return false,
                            }
                        } else {
                            rest
                        };
                        if c == 'e' {
                            scripts.push(value);
                        }
                        break;
                    }
                    // `-i` edits files, `-f` reads a script we cannot see.
                    _ => return false,
                }
            }
        } else {
            operands.push(arg);
        }
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(s) => scripts.push(s),
            None => return false,
        }
    }
    // Without --sandbox, `r`/`R` read a file named inside the script
    // (where no reach check sees it), `w`/`W` and the `w` flag of `s`
    // write one, and `e` runs a program.
    sandbox || scripts.iter().all(|s| super::sed_script::harmless(s))
}

pub(crate) fn file(args: &[&str]) -> bool {
    // `-C` compiles a magic file; `-p` resets access times (a write);
    // `-f` reads the names to examine from a file the text does not show.
    !args.iter().any(|a| {
        short_has(a, 'C')
            || short_has(a, 'p')
            || short_has(a, 'f')
            || may_be(a, &["--compile", "--preserve-date", "--files-from"])
    })
}

pub(crate) fn tree(args: &[&str]) -> bool {
    // `-o` writes a file; `-R` (with `-H`) writes 00Tree.html everywhere.
    // tree matches long options exactly; only harmless ones pass.
    const LONG: &[&str] = &[
        "--noreport",
        "--dirsfirst",
        "--filesfirst",
        "--prune",
        "--du",
        "--si",
        "--inodes",
        "--device",
        "--gitignore",
        "--ignore-case",
        "--matchdirs",
        "--metafirst",
        "--help",
        "--version",
    ];
    args.iter().all(|a| {
        if a.starts_with("--") {
            LONG.contains(a)
        } else {
            !(short_has(a, 'o') || short_has(a, 'R'))
        }
    })
}
