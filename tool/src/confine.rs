//! What a tool needs to know about confinement: how its call came to be
//! allowed. The engine's `confine` module decides what that means for the
//! commands the call runs (the read-only floor).

/// How a call came to be allowed, as far as confinement cares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Approval {
    /// Allowed only because Baton judged it read-only: no rule, hook, user,
    /// host or mode vouched for it. Its commands run under the floor.
    ReadOnlyJudgement,
    /// A rule, hook, the user, the host or the permission mode allowed it
    /// (also: a call run outside the pipeline by the host itself).
    #[default]
    Vouched,
}
