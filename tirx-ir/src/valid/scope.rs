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

/// The threads a statement runs on, with the CTA-linear thread indices `[lo, hi)` its
/// index scopes leave: a nested scope is the intersection of the enclosing ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeSet {
    /// The thread set, as the ops' checks see it.
    pub threads: Threads,
    /// First thread index the scopes allow.
    pub lo: u32,
    /// One past the last.
    pub hi: u32,
}

impl ScopeSet {
    /// The whole CTA.
    pub fn cta(threads: u32) -> ScopeSet {
        ScopeSet {
            threads: Threads::Cta(threads),
            lo: 0,
            hi: threads,
        }
    }

    /// Narrowed by `scope`; `None` when the intersection is empty (a scope naming threads
    /// its enclosing scopes exclude, or threads past the CTA).
    pub fn enter(self, scope: &Scope) -> Option<ScopeSet> {
        let range = match *scope {
            Scope::Warpgroup(a, b) => Some((128 * a, 128 * (b + 1))),
            Scope::Warp(a, b) => Some((32 * a, 32 * (b + 1))),
            Scope::Thread(t) => Some((t, t + 1)),
            Scope::Cta | Scope::Elect | Scope::Leader => None,
        };
        let Some((a, b)) = range else {
            return Some(ScopeSet {
                threads: self.threads.enter(scope),
                ..self
            });
        };
        let (lo, hi) = (self.lo.max(a), self.hi.min(b));
        if lo >= hi {
            return None;
        }
        let n = hi - lo;
        let inner = self.threads.enter(scope);
        let threads = match self.threads {
            // The enclosing scopes keep all the threads this one names: its own set.
            _ if (lo, hi) == (a, b)
                && !matches!(self.threads, Threads::Single | Threads::ElectPerWarp(_)) =>
            {
                inner
            }
            // One thread (per warp) stays one thread (per warp) of what remains.
            Threads::Single => Threads::Single,
            Threads::ElectPerWarp(_) => Threads::ElectPerWarp(hi.div_ceil(32) - lo / 32),
            _ if n == 1 => Threads::Single,
            _ if lo % 128 == 0 && n % 128 == 0 => Threads::Warpgroups(n / 128),
            _ if lo % 32 == 0 && n % 32 == 0 => {
                Threads::Warps(n / 32, lo % 128 == 0 && n % 128 == 0)
            }
            _ => inner,
        };
        Some(ScopeSet { threads, lo, hi })
    }

    /// Words for error messages: the thread indices.
    pub fn describe(self) -> String {
        if self.hi - self.lo == 1 {
            format!("thread {}", self.lo)
        } else {
            format!("threads {}..{}", self.lo, self.hi)
        }
    }
}

/// The thread set of a statement given its enclosing statements (outermost first): the
/// intersection of their scopes (an empty one is reported by `verify-scopes`; here it keeps
/// the innermost scope's set).
pub fn threads_of(stack: &[&Stmt], cta_threads: u32) -> Threads {
    let mut t = ScopeSet::cta(cta_threads);
    for s in stack {
        if let StmtKind::Scope { scope, .. } = &s.kind {
            t = t.enter(scope).unwrap_or(ScopeSet {
                threads: t.threads.enter(scope),
                ..t
            });
        }
    }
    t.threads
}
