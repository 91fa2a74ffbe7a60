//! GNU long options as `getopt_long` reads them.
//!
//! `getopt_long` accepts any unambiguous prefix of a long option
//! (`--expr` is `--expression`, `--out` is `--output`), so checking an
//! argument against the full spelling of a dangerous option misses its
//! abbreviations. Programs whose flags decide whether they are read-only
//! list every long option they have; an argument is resolved the way the
//! program resolves it, and one that matches nothing (or is ambiguous) is
//! not understood, so the command is not read-only.

/// Whether a long option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arity {
    /// `--flag`.
    None,
    /// `--opt=value` or `--opt value`.
    Required,
    /// `--opt` or `--opt=value` (never the next word).
    Optional,
}

/// One long option, spelled in full with its dashes.
pub(crate) type LongOpt = (&'static str, Arity);

/// A resolved long option: its full name, and its glued `=value`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Resolved<'a> {
    pub name: &'static str,
    pub arity: Arity,
    pub value: Option<&'a str>,
}

/// Resolves `arg` (which starts with `--`) against `table`: an exact name,
/// else the only option it is a prefix of. `None` when unknown or
/// ambiguous, or when a value is glued to an option that takes none.
pub(crate) fn resolve<'a>(arg: &'a str, table: &[LongOpt]) -> Option<Resolved<'a>> {
    let (name, value) = match arg.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (arg, None),
    };
    if name.len() <= 2 || !name.starts_with("--") {
        return None;
    }
    let found = match table.iter().find(|(full, _)| *full == name) {
        Some(exact) => *exact,
        None => {
            let mut candidates = table.iter().filter(|(full, _)| full.starts_with(name));
            match (candidates.next(), candidates.next()) {
                (Some(only), None) => *only,
                _ => return None,
            }
        }
    };
    if found.1 == Arity::None && value.is_some() {
        return None;
    }
    Some(Resolved {
        name: found.0,
        arity: found.1,
        value,
    })
}

/// Whether `arg` could be (an abbreviation of) one of `dangerous`: sound
/// for programs whose full option list is not kept here, because an
/// abbreviation can only stand for options it is a prefix of.
pub(crate) fn may_be(arg: &str, dangerous: &[&str]) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name.len() > 2 && name.starts_with("--") && dangerous.iter().any(|d| d.starts_with(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[LongOpt] = &[
        ("--expression", Arity::Required),
        ("--export", Arity::None),
        ("--quiet", Arity::None),
        ("--in-place", Arity::Optional),
    ];

    #[test]
    fn prefixes_resolve_like_getopt_long() {
        assert_eq!(resolve("--expr=x", T).unwrap().name, "--expression");
        assert_eq!(resolve("--expr=x", T).unwrap().value, Some("x"));
        assert_eq!(resolve("--q", T).unwrap().name, "--quiet");
        assert_eq!(resolve("--in", T).unwrap().arity, Arity::Optional);
        assert!(resolve("--ex", T).is_none(), "ambiguous");
        assert!(resolve("--nope", T).is_none(), "unknown");
        assert!(resolve("--quiet=1", T).is_none(), "no value taken");
        assert!(resolve("--", T).is_none());
        assert!(may_be("--out", &["--output"]));
        assert!(!may_be("--outx", &["--output"]));
    }
}
