//! The scheduling rules of SPEC §5, checked by example and by property.

use proptest::prelude::*;

use super::*;

const P: WorkKind = WorkKind::Process;
const W: WorkKind = WorkKind::Wait;

fn safe(kind: WorkKind) -> Queued {
    Queued::Waiting { safe: true, kind }
}

fn writer() -> Queued {
    Queued::Waiting {
        safe: false,
        kind: P,
    }
}

fn by_kind(process: usize, wait: usize) -> Limits {
    Limits::ByKind { process, wait }
}

/// Runs `calls` to completion, finishing every running call at once each
/// round; returns the groups that ran together.
fn waves(calls: &[Queued], limits: Limits) -> Vec<Vec<usize>> {
    let mut sched = Scheduler::new(limits);
    let mut state = calls.to_vec();
    let mut out = Vec::new();
    loop {
        let mut wave = Vec::new();
        while let Some(i) = sched.next_start(|i| state.get(i).copied()) {
            state[i] = Queued::Gone;
            wave.push(i);
        }
        if wave.is_empty() {
            break;
        }
        // Within a wave the pools are served one after the other; only
        // membership matters here (start order is checked by the property).
        wave.sort_unstable();
        for &i in &wave {
            if let Queued::Waiting { safe, kind } = calls[i] {
                sched.finished(safe, kind);
            }
        }
        out.push(wave);
    }
    out
}

fn sizes(w: &[Vec<usize>]) -> Vec<usize> {
    w.iter().map(Vec::len).collect()
}

#[test]
fn unsafe_call_is_a_barrier() {
    let s = [safe(P), safe(W), writer(), safe(W), safe(P)];
    assert_eq!(
        waves(&s, by_kind(10, 10)),
        vec![vec![0, 1], vec![2], vec![3, 4]]
    );
}

#[test]
fn a_uniform_cap_limits_every_kind_together() {
    let s: Vec<Queued> = (0..25)
        .map(|i| safe(if i % 2 == 0 { P } else { W }))
        .collect();
    assert_eq!(sizes(&waves(&s, Limits::Uniform(10))), vec![10, 10, 5]);
}

#[test]
fn each_pool_has_its_own_limit() {
    // 8 process calls with 4 slots, 32 waits with 64: two waves, the waits
    // all in the first.
    let mut s = vec![safe(P); 8];
    s.extend(vec![safe(W); 32]);
    let w = waves(&s, by_kind(4, 64));
    assert_eq!(sizes(&w), vec![36, 4]);
    assert_eq!(w[1], vec![4, 5, 6, 7]);
}

#[test]
fn a_waiting_call_passes_a_process_call_without_a_slot_but_not_a_barrier() {
    let s = [safe(P), safe(P), safe(W), writer(), safe(W)];
    assert_eq!(
        waves(&s, by_kind(1, 8)),
        vec![vec![0, 2], vec![1], vec![3], vec![4]]
    );
}

#[test]
fn unsafe_calls_run_alone_in_order() {
    let s = [writer(), writer(), safe(W), writer()];
    assert_eq!(
        waves(&s, by_kind(10, 10)),
        vec![vec![0], vec![1], vec![2], vec![3]]
    );
}

#[test]
fn settled_calls_are_passed_over() {
    let mut sched = Scheduler::new(Limits::Uniform(1));
    let state = [Queued::Gone, safe(P), Queued::Gone, safe(W)];
    assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(1));
    // Cap reached: the next waiting call stays queued.
    assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
    sched.finished(true, P);
    assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(3));
    assert_eq!(sched.running(), 1);
    assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
}

#[test]
fn a_safe_call_waits_behind_a_running_unsafe_one_even_with_room() {
    let mut sched = Scheduler::new(by_kind(10, 10));
    let mut state = [writer(), safe(W)];
    assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(0));
    state[0] = Queued::Gone;
    assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
    sched.finished(false, P);
    assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(1));
}

#[test]
fn calls_added_later_start_when_allowed() {
    let mut sched = Scheduler::new(by_kind(1, 10));
    let mut state = vec![safe(P)];
    assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(0));
    assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
    state.push(safe(W));
    assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(1));
    state.push(writer());
    state[0] = Queued::Gone;
    state[1] = Queued::Gone;
    assert_eq!(sched.next_start(|i| state.get(i).copied()), None);
    sched.finished(true, P);
    sched.finished(true, W);
    assert_eq!(sched.next_start(|i| state.get(i).copied()), Some(2));
}

fn queued() -> impl Strategy<Value = Queued> {
    prop_oneof![
        4 => Just(safe(P)),
        4 => Just(safe(W)),
        1 => Just(writer()),
    ]
}

fn limits() -> impl Strategy<Value = Limits> {
    prop_oneof![
        (1usize..6).prop_map(Limits::Uniform),
        (1usize..6, 1usize..12).prop_map(|(p, w)| by_kind(p, w)),
    ]
}

proptest! {
    /// Whatever finishes when: every call starts exactly once (none
    /// starves), no pool exceeds its limit, a uniform cap bounds all
    /// calls, unsafe calls run alone and no call crosses a barrier, and
    /// within a pool calls start in order.
    #[test]
    fn the_rules_hold_under_any_finishing_order(
        calls in prop::collection::vec(queued(), 0..40),
        limits in limits(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..200),
    ) {
        let mut sched = Scheduler::new(limits);
        let mut state = calls.clone();
        let mut running: Vec<usize> = Vec::new();
        let mut started: Vec<usize> = Vec::new();
        let mut picks = picks.into_iter();
        loop {
            while let Some(i) = sched.next_start(|i| state.get(i).copied()) {
                prop_assert!(state[i] != Queued::Gone, "call {i} started twice");
                state[i] = Queued::Gone;
                running.push(i);
                started.push(i);
            }
            check_running(&calls, &running, limits)?;
            if running.is_empty() {
                break;
            }
            // Finish one running call, chosen by the test case.
            let k = picks.next().map_or(0, |p| p.index(running.len()));
            let done = running.swap_remove(k);
            if let Queued::Waiting { safe, kind } = calls[done] {
                sched.finished(safe, kind);
            }
        }
        prop_assert_eq!(started.len(), calls.len(), "some call never started");
        check_start_order(&calls, &started, limits)?;
    }
}

fn check_running(calls: &[Queued], running: &[usize], limits: Limits) -> Result<(), TestCaseError> {
    let mut per_pool = [0usize; POOLS];
    for &i in running {
        match calls[i] {
            Queued::Waiting { safe: false, .. } => {
                prop_assert_eq!(running.len(), 1, "an unsafe call ran beside others");
            }
            Queued::Waiting { safe: true, kind } => {
                let (pool, cap) = limits.pool(kind);
                per_pool[pool] += 1;
                prop_assert!(per_pool[pool] <= cap, "pool {} over its cap {}", pool, cap);
            }
            Queued::Gone => {}
        }
    }
    if let Limits::Uniform(n) = limits {
        prop_assert!(
            running.len() <= n,
            "{} running under a cap of {}",
            running.len(),
            n
        );
    }
    Ok(())
}

fn check_start_order(
    calls: &[Queued],
    started: &[usize],
    limits: Limits,
) -> Result<(), TestCaseError> {
    let position = |i: usize| started.iter().position(|&s| s == i).unwrap_or(usize::MAX);
    for (b, call) in calls.iter().enumerate() {
        if let Queued::Waiting { safe: false, .. } = call {
            // Everything before a barrier starts before it, everything after
            // it after it.
            for i in 0..calls.len() {
                let ok = if i < b {
                    position(i) < position(b)
                } else {
                    position(i) >= position(b)
                };
                prop_assert!(ok, "call {} crossed the barrier at {}", i, b);
            }
        }
    }
    for pool in 0..POOLS {
        let in_pool: Vec<usize> = started
            .iter()
            .copied()
            .filter(|&i| matches!(calls[i], Queued::Waiting { safe: true, kind } if limits.pool(kind).0 == pool))
            .collect();
        prop_assert!(
            in_pool.windows(2).all(|w| w[0] < w[1]),
            "pool {} out of order: {:?}",
            pool,
            in_pool
        );
    }
    Ok(())
}
