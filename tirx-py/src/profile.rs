//! Where the binding's host time goes, per phase of a call, when asked
//! (`tirx._tirx._host_profile(True)`): a short kernel's call is bound by this path, so it is
//! measured, not guessed (`kernels/bench/host_overhead.py` prints it on a GPU machine).
//!
//! Invariant: while profiling is off (the default) a phase costs one relaxed atomic load.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// A phase of a call, in the order a launch goes through them.
#[derive(Clone, Copy, Debug)]
pub enum Phase {
    /// Reading every tensor argument (DLPack, the array interface, or a torch tensor's fields).
    Read,
    /// The op's checks ([`crate::ops`]).
    Check,
    /// Opening the device's runtime on the caller's stream, saving the current context.
    Runtime,
    /// The dispatcher's request and its choice (cached per tensor layout).
    Choose,
    /// Arguments in the artifact's order and `Runtime::launch_with` (plan, descriptors, the
    /// driver's launch).
    Launch,
}

const PHASES: [(Phase, &str); 5] = [
    (Phase::Read, "read"),
    (Phase::Check, "check"),
    (Phase::Runtime, "runtime"),
    (Phase::Choose, "choose"),
    (Phase::Launch, "launch"),
];

static ON: AtomicBool = AtomicBool::new(false);
static NANOS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
static CALLS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

/// Runs `f`, adding its time to `phase` while profiling is on.
pub fn time<T>(phase: Phase, f: impl FnOnce() -> T) -> T {
    if !ON.load(Ordering::Relaxed) {
        return f();
    }
    let start = Instant::now();
    let out = f();
    let ns = start.elapsed().as_nanos() as u64;
    NANOS[phase as usize].fetch_add(ns, Ordering::Relaxed);
    CALLS[phase as usize].fetch_add(1, Ordering::Relaxed);
    out
}

/// Turns profiling on or off and returns what was gathered since the last call, then clears
/// it: `(phase, times entered, total nanoseconds)` in call order.
pub fn take(on: bool) -> Vec<(&'static str, u64, u64)> {
    ON.store(on, Ordering::Relaxed);
    PHASES
        .iter()
        .map(|&(p, name)| {
            let i = p as usize;
            (
                name,
                CALLS[i].swap(0, Ordering::Relaxed),
                NANOS[i].swap(0, Ordering::Relaxed),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_count_only_while_on() {
        take(false);
        time(Phase::Check, || ());
        assert!(take(true).iter().all(|&(_, n, _)| n == 0));
        time(Phase::Check, || {
            std::thread::sleep(std::time::Duration::from_micros(50))
        });
        time(Phase::Launch, || ());
        let got = take(false);
        let check = got.iter().find(|p| p.0 == "check").unwrap();
        assert_eq!(check.1, 1);
        assert!(check.2 >= 50_000, "{got:?}");
        assert_eq!(got.iter().find(|p| p.0 == "launch").unwrap().1, 1);
        assert_eq!(got.iter().find(|p| p.0 == "read").unwrap().1, 0);
    }
}
