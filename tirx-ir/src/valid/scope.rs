//! Which threads execute a statement, computed from its enclosing scopes.
//!
//! Scope is explicit in tirx: every op that cares (one elected thread for TMA and tcgen05.mma,
//! a warpgroup for wgmma and tcgen05.ld, a whole warp for TMEM allocation) is checked against
//! the thread set its enclosing `Scope` statements select.

use crate::ir::{Scope, Stmt, StmtKind};

/// The set of threads that run a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// Every thread of the CTA (`threads` of them).
    Cta(u32),
    /// Whole warpgroups.
    Warpgroups(u32),
    /// Whole warps: how many, and whether they form whole warpgroups (start at a multiple of
    /// 4 and come in fours).
    Warps(u32, bool),
    /// One thread per warp, in this many warps.
    ElectPerWarp(u32),
    /// Exactly one thread.
    Single,
}

impl Threads {
    /// Narrows by one scope.
    pub fn enter(self, scope: &Scope) -> Threads {
        match scope {
            Scope::Cta => self,
            Scope::Warpgroup(a, b) => Threads::Warpgroups(b - a + 1),
            Scope::Warp(a, b) => {
                let n = b - a + 1;
                Threads::Warps(n, a % 4 == 0 && n % 4 == 0)
            }
            Scope::Thread(_) | Scope::Leader => Threads::Single,
            Scope::Elect => match self {
                Threads::Single | Threads::Warps(1, _) => Threads::Single,
                other => Threads::ElectPerWarp(other.warps()),
            },
        }
    }
    /// Number of warps involved.
    pub fn warps(self) -> u32 {
        match self {
            Threads::Cta(t) => t.div_ceil(32),
            Threads::Warpgroups(n) => 4 * n,
            Threads::Warps(n, _) | Threads::ElectPerWarp(n) => n,
            Threads::Single => 1,
        }
    }
    /// Exactly one thread.
    pub fn is_single(self) -> bool {
        self == Threads::Single
    }
    /// Exactly one whole warpgroup (128 threads, warp-aligned).
    pub fn is_one_warpgroup(self) -> bool {
        matches!(
            self,
            Threads::Cta(128) | Threads::Warpgroups(1) | Threads::Warps(4, true)
        )
    }
    /// One or more whole warpgroups (each runs its own copy of a warpgroup op).
    pub fn is_whole_warpgroups(self) -> bool {
        match self {
            Threads::Cta(t) => t % 128 == 0,
            Threads::Warpgroups(_) => true,
            Threads::Warps(_, aligned) => aligned,
            _ => false,
        }
    }
    /// Exactly one whole warp.
    pub fn is_one_warp(self) -> bool {
        matches!(self, Threads::Cta(32) | Threads::Warps(1, _))
    }
    /// Words for error messages.
    pub fn describe(self) -> String {
        match self {
            Threads::Cta(t) => format!("all {t} threads of the CTA"),
            Threads::Warpgroups(n) => format!("{n} warpgroup(s)"),
            Threads::Warps(n, _) => format!("{n} whole warp(s)"),
            Threads::ElectPerWarp(n) => format!("one elected thread in each of {n} warps"),
            Threads::Single => "one thread".into(),
        }
    }
}

/// The thread set of a statement given its enclosing statements (outermost first).
pub fn threads_of(stack: &[&Stmt], cta_threads: u32) -> Threads {
    let mut t = Threads::Cta(cta_threads);
    for s in stack {
        if let StmtKind::Scope { scope, .. } = &s.kind {
            t = t.enter(scope);
        }
    }
    t
}
