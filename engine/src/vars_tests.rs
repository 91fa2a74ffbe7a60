//! The grammar of `${VAR}` references, case by case, and two properties
//! over any text: the expander never panics, and text without `${` comes
//! back unchanged.

use proptest::prelude::*;

use super::{expand, expand_or, Options, Unset, VarsError};

fn env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/u".into()),
        "EMPTY" => Some(String::new()),
        "TOKEN" => Some("s3".into()),
        "LOOP" => Some("${HOME}".into()),
        _ => None,
    }
}

fn braces(text: &str) -> Result<String, VarsError> {
    expand(text, Options::default(), &env)
}

const BARE: Options = Options { bare_names: true };

#[test]
fn set_default_and_empty_forms() {
    assert_eq!(braces("${HOME}/x").unwrap(), "/home/u/x");
    assert_eq!(braces("a${NOPE:-def}b").unwrap(), "adefb");
    assert_eq!(braces("${HOME:-def}").unwrap(), "/home/u");
    assert_eq!(braces("${EMPTY:-def}").unwrap(), "");
    assert_eq!(braces("${NOPE:-}").unwrap(), "");
    assert_eq!(braces("${HOME}${HOME}").unwrap(), "/home/u/home/u");
    assert_eq!(braces("ünï${HOME}ç").unwrap(), "ünï/home/uç");
    assert_eq!(braces("${NOPE:-a:-b}").unwrap(), "a:-b");
}

#[test]
fn what_is_not_a_reference_is_kept_as_written() {
    assert_eq!(
        braces("$HOME ${ not a var } ${1} ${").unwrap(),
        "$HOME ${ not a var } ${1} ${"
    );
    assert_eq!(braces("cost $5, a$ and $$").unwrap(), "cost $5, a$ and $$");
    assert_eq!(braces("${HOME").unwrap(), "${HOME");
}

#[test]
fn braces_do_not_nest_and_values_are_not_expanded_again() {
    assert_eq!(braces("${NOPE:-${HOME}}").unwrap(), "${HOME}");
    assert_eq!(braces("${LOOP}").unwrap(), "${HOME}");
}

#[test]
fn unset_without_default_is_a_typed_error_naming_the_variable() {
    let err = braces("Bearer ${MISSING} ${HOME}").unwrap_err();
    assert_eq!(
        err,
        VarsError::Unset {
            name: "MISSING".into()
        }
    );
    assert!(err.to_string().contains("${MISSING:-default}"), "{err}");
}

#[test]
fn unset_can_become_empty_or_stay_as_written() {
    let text = "a ${MISSING} b ${MISSING:-d} ${HOME}";
    assert_eq!(
        expand_or(text, Options::default(), Unset::Empty, &env),
        "a  b d /home/u"
    );
    assert_eq!(
        expand_or(text, Options::default(), Unset::Keep, &env),
        "a ${MISSING} b d /home/u"
    );
}

#[test]
fn bare_names_only_where_asked() {
    assert_eq!(
        expand_or("Bearer $TOKEN.", BARE, Unset::Empty, &env),
        "Bearer s3."
    );
    assert_eq!(
        expand_or("$TOKEN_x $OTHER ${TOKEN}-$5 a$", BARE, Unset::Empty, &env),
        "  s3-$5 a$"
    );
    assert_eq!(expand_or("$MISSING", BARE, Unset::Keep, &env), "$MISSING");
    assert_eq!(braces("$TOKEN").unwrap(), "$TOKEN");
}

proptest! {
    #[test]
    fn never_panics(text in "(\\PC|[${}:\\-_A-Z]){0,40}", bare in any::<bool>()) {
        let options = Options { bare_names: bare };
        let _ = expand(&text, options, &env);
        for unset in [Unset::Empty, Unset::Keep] {
            let _ = expand_or(&text, options, unset, &env);
        }
    }

    #[test]
    fn text_without_a_reference_opener_is_unchanged(text in "(\\PC|[$}:\\-_A-Z]){0,40}") {
        prop_assume!(!text.contains("${"));
        prop_assert_eq!(braces(&text), Ok(text.clone()));
        prop_assert_eq!(expand_or(&text, Options::default(), Unset::Empty, &env), text);
    }

    #[test]
    fn keep_changes_only_known_references(text in "(\\PC|[${}:\\-_A-Z]){0,40}") {
        // With a lookup that knows nothing and `Keep`, only references with
        // a default change: without `:-`, the text comes back as it was.
        prop_assume!(!text.contains(":-"));
        prop_assert_eq!(expand_or(&text, Options::default(), Unset::Keep, &|_| None), text);
    }
}
