//! The domain matcher against a plain reference definition, over random
//! names and patterns drawn from a small alphabet so that matches are
//! frequent.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton_sandbox::proxy::{DomainPattern, DomainRules};
use proptest::prelude::*;

/// Labels mixing case, so case folding is exercised.
fn label() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "A", "b", "ex", "Ex", "com", "COM", "x-1", "io", "ex1",
    ])
    .prop_map(str::to_string)
}

/// A name of 1 to 4 labels, sometimes with a trailing dot.
fn name() -> impl Strategy<Value = String> {
    (prop::collection::vec(label(), 1..5), any::<bool>()).prop_map(|(labels, dot)| {
        let mut name = labels.join(".");
        if dot {
            name.push('.');
        }
        name
    })
}

/// A pattern: a name, sometimes behind `*.`.
fn pattern() -> impl Strategy<Value = String> {
    (name(), any::<bool>()).prop_map(|(name, wild)| if wild { format!("*.{name}") } else { name })
}

fn canon(s: &str) -> String {
    s.strip_suffix('.').unwrap_or(s).to_lowercase()
}

/// The reference: `*.d` matches names ending in `.d` (so not `d` itself);
/// anything else matches the equal name. Case and one trailing dot do not
/// count.
fn reference(pattern: &str, domain: &str) -> bool {
    let domain = canon(domain);
    match pattern.strip_prefix("*.") {
        Some(suffix) => domain.ends_with(&format!(".{}", canon(suffix))),
        None => domain == canon(pattern),
    }
}

/// Wildcards need two labels after `*.` (Claude Code refuses `*.com`).
fn reference_valid(pattern: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(suffix) => canon(suffix).contains('.'),
        None => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn one_pattern_matches_like_the_reference(p in pattern(), d in name()) {
        let parsed = DomainPattern::parse(&p);
        prop_assert_eq!(parsed.is_ok(), reference_valid(&p), "validity of {}", p);
        if parsed.is_ok() {
            let rules = DomainRules::new([p.as_str()], [] as [&str; 0]).unwrap();
            prop_assert_eq!(rules.is_allowed(&d), reference(&p, &d), "{} against {}", p, d);
        }
    }

    #[test]
    fn deny_beats_allow(allow in prop::collection::vec(pattern(), 0..4), deny in prop::collection::vec(pattern(), 0..3), d in name()) {
        let allow: Vec<String> = allow.into_iter().filter(|p| reference_valid(p)).collect();
        let deny: Vec<String> = deny.into_iter().filter(|p| reference_valid(p)).collect();
        let rules = DomainRules::new(&allow, &deny).unwrap();
        let expected = allow.iter().any(|p| reference(p, &d)) && !deny.iter().any(|p| reference(p, &d));
        prop_assert_eq!(rules.is_allowed(&d), expected, "allow {:?} deny {:?} domain {}", allow, deny, d);
    }
}
