//! Ordering of tensor-memory reads after MMAs (PTX ISA §9.7.16.6 "tcgen05 memory consistency
//! model"): a `tcgen05.mma` is asynchronous, its D visible only once its `tcgen05.commit`'s
//! mbarrier phase completes, and a thread that waited on that phase must execute
//! `tcgen05.fence::after_thread_sync` before a `tcgen05.ld` of D is ordered after the MMA
//! (§9.7.16.6.4; `mma → ld` is not one of the implicitly pipelined pairs of §9.7.16.6.3).
//!
//! Two diagnostics, both on a `tcgen05.ld` cell:
//! - a cell an MMA issued and not yet completed will write (queued, or committed and not
//!   run): the load reads what was there before the MMA, or not, by timing;
//! - a cell an MMA wrote after the loading thread's last `tcgen05.fence::after_thread_sync`:
//!   the thread waited (it must have, or the first check fires) but did not fence after the
//!   wait, so the load is not ordered after the MMA.

use super::bulk::AsyncKind;
use super::cta::{Cluster, Cta};
use super::tcgen05::{TMEM_COLS, TMEM_LANES};
use super::tcgen05_cp::Tc05Work;

/// One CTA's `tcgen05` bookkeeping beside its tensor memory (`tcgen05::Tmem`): the work its
/// threads issued and have not committed, the registers and cells a `tcgen05.ld`/`st` moves
/// until its `tcgen05.wait`, and which MMA last wrote each cell against each thread's last
/// `tcgen05.fence::after_thread_sync` (this file's second check).
#[derive(Default)]
pub(crate) struct Tc05Cta {
    /// `tcgen05.mma`s (and `tcgen05.cp`s) issued and not yet committed: (thread, work).
    pub queue: Vec<(u32, Tc05Work)>,
    /// Per warp: registers a `tcgen05.ld` filled that await `tcgen05.wait::ld`: (thread,
    /// register, the load's line, the register clock at the load).
    pub ld: Vec<Vec<(u32, u32, u32, u32)>>,
    /// Per warp: tensor-memory cells (lane, column, line) a `tcgen05.st` wrote that await
    /// `tcgen05.wait::st`.
    pub st: Vec<Vec<(u32, u32, u32)>>,
    /// Per warp: tensor-memory cells (lane, column, line) a `tcgen05.ld` reads that await
    /// `tcgen05.wait::ld`: an MMA writing them before is a race.
    pub ld_cells: Vec<Vec<(u32, u32, u32)>>,
    /// The MMAs that have written this CTA's tensor memory, in the order they ran: (issuing
    /// thread, line); a cell's writer is an index + 1 into it (`mma_at`).
    pub log: Vec<(u32, u32)>,
    /// Per TMEM cell (lane-major, empty until the first MMA writes): the MMA that last wrote
    /// it, as `log`'s length after that MMA (0: none).
    pub mma_at: Vec<u32>,
    /// Per thread: `log`'s length at its last `tcgen05.fence::after_thread_sync`.
    pub fenced: Vec<u32>,
}

impl Tc05Cta {
    /// Nothing issued, for a CTA of `nthreads` threads.
    pub(crate) fn new(nthreads: u32) -> Tc05Cta {
        let warps = nthreads.div_ceil(32) as usize;
        Tc05Cta {
            ld: vec![Vec::new(); warps],
            st: vec![Vec::new(); warps],
            ld_cells: vec![Vec::new(); warps],
            fenced: vec![0; nthreads as usize],
            ..Default::default()
        }
    }
}

/// A D rectangle an in-flight MMA will write in one CTA: lanes, columns, its line.
pub(crate) type InFlight = ((u32, u32), (u32, u32), u32);

/// Records an MMA about to write `cta`'s tensor memory; returns its writer index.
pub(crate) fn record_mma(cta: &mut Cta, thread: u32, line: u32) -> u32 {
    if cta.tc.mma_at.is_empty() {
        cta.tc.mma_at = vec![0; (TMEM_LANES * TMEM_COLS) as usize];
    }
    cta.tc.log.push((thread, line));
    cta.tc.log.len() as u32
}

/// The D rectangles of every MMA that will write CTA `ci`'s tensor memory and has not run:
/// queued by a thread of this CTA or of its pair's even CTA, or committed and in flight.
pub(crate) fn mmas_in_flight(cl: &Cluster, ci: usize) -> Vec<InFlight> {
    let mine = |cta: usize, pair: bool| cta == ci || (pair && cta == ci & !1);
    let rect = |m: &super::tcgen05::Tc05Mma| {
        let (l, c, rows, cols, line) = m.d_rect();
        ((l, l + rows.min(TMEM_LANES)), (c, c + cols), line)
    };
    let mut v = Vec::new();
    for (cta, c) in cl.ctas.iter().enumerate() {
        for (_, w) in &c.tc.queue {
            if let Tc05Work::Mma(m) = w
                && mine(cta, m.pair)
            {
                v.push(rect(m));
            }
        }
    }
    for op in &cl.ops {
        if let AsyncKind::Tc05 { mmas, .. } = &op.kind {
            for w in mmas {
                if let Tc05Work::Mma(m) = w
                    && mine(op.cta as usize, m.pair)
                {
                    v.push(rect(m));
                }
            }
        }
    }
    v
}

/// Why thread `t`'s `tcgen05.ld` of `cell` is not ordered after the MMA that writes it, if
/// it is not.
pub(crate) fn unordered_read(
    cl: &Cluster,
    ci: usize,
    t: u32,
    (lane, col): (u32, u32),
    in_flight: &[InFlight],
) -> Option<String> {
    if let Some(&(_, _, at)) = in_flight
        .iter()
        .find(|((l0, l1), (c0, c1), _)| (*l0..*l1).contains(&lane) && (*c0..*c1).contains(&col))
    {
        return Some(format!(
            "tcgen05.ld of lane {lane}, column {col}, which the tcgen05.mma of line {at} \
             will write and has not completed: wait on its tcgen05.commit's mbarrier first"
        ));
    }
    let c = &cl.ctas[ci];
    let w = *c.tc.mma_at.get((lane * TMEM_COLS + col) as usize)?;
    if w > c.tc.fenced[t as usize] {
        let (who, at) = c.tc.log[w as usize - 1];
        return Some(format!(
            "tcgen05.ld of lane {lane}, column {col}, which the tcgen05.mma of line {at} (thread \
             {who}) wrote, without a tcgen05.fence::after_thread_sync after the wait that \
             ordered it: the load is not ordered after the MMA"
        ));
    }
    None
}
