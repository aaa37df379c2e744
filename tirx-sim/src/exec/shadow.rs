//! Shadow state of shared memory for the two checks that need it (issue #10 diagnostics):
//!
//! 1. **Races with asynchronous copies.** While a TMA load is in flight, its destination
//!    bytes belong to the TMA unit: a generic read or write of them is a missing wait on the
//!    mbarrier. While a TMA store is in flight its source bytes are being read: a generic
//!    write to them is a missing `cp.async.bulk.wait_group.read`. A copy's bytes are its box
//!    rounded out to whole 128-byte rows (a swizzle permutes 16-byte chunks within a row,
//!    PTX ISA §5.5, so the rounded range is exactly where the box may land).
//! 2. **Proxy fences.** A generic-proxy write to shared memory that the async proxy (a TMA
//!    store) later reads must be ordered by a `fence.proxy.async` of the writing thread
//!    (PTX ISA §8 "Memory Consistency Model", proxies; §9.7.13 `fence.proxy.async`). Each byte
//!    remembers its last generic writer and that thread's fence epoch at the time; the
//!    writer's `fence.proxy.async` increments its epoch, so the byte is clean once the epochs
//!    differ, in O(1) per fence. TMA loads leave their bytes clean (async-proxy writes followed
//!    by a completed mbarrier phase need no fence to be read).
//!
//! Only the executing CTA's own stores are tagged (a store to another CTA's shared memory
//! through `mapa` is not tracked yet).

use super::bulk::{AsyncKind, AsyncOp};

/// Bits of a tag holding the writer (thread index + 1); the rest hold its epoch.
const WRITER_BITS: u32 = 11;
const WRITER_MASK: u32 = (1 << WRITER_BITS) - 1;

/// One CTA's shadow of its shared memory.
#[derive(Clone, Debug, Default)]
pub(crate) struct Shadow {
    /// Per byte: `(epoch << 11) | (writer + 1)`, or 0; empty until the first generic store.
    tags: Vec<u32>,
    /// Per thread: its `fence.proxy.async` epoch.
    epoch: Vec<u32>,
    /// Per thread: the line of its last generic shared-memory store.
    last_line: Vec<u32>,
}

impl Shadow {
    /// A generic store of `[off, off + len)` by thread `t` at `line`.
    pub(crate) fn write(
        &mut self,
        smem_len: usize,
        nthreads: u32,
        off: u32,
        len: u32,
        t: u32,
        line: u32,
    ) {
        if self.tags.is_empty() {
            self.tags = vec![0; smem_len];
            self.epoch = vec![0; nthreads as usize];
            self.last_line = vec![0; nthreads as usize];
        }
        let tag = (self.epoch[t as usize] << WRITER_BITS) | (t + 1);
        self.tags[off as usize..(off + len) as usize].fill(tag);
        self.last_line[t as usize] = line;
    }

    /// `fence.proxy.async` by thread `t`: its earlier writes are visible to the async proxy.
    pub(crate) fn fence(&mut self, t: u32) {
        if let Some(e) = self.epoch.get_mut(t as usize) {
            *e = (*e + 1) & (u32::MAX >> WRITER_BITS);
        }
    }

    /// An async-proxy write (a TMA load landing) of `[off, off + len)`.
    pub(crate) fn async_write(&mut self, off: u32, len: u32) {
        if let Some(s) = self.tags.get_mut(off as usize..(off + len) as usize) {
            s.fill(0);
        }
    }

    /// The first byte of `[off, off + len)` written by the generic proxy and not fenced
    /// since: (offset, writer thread, line of its last store).
    pub(crate) fn unfenced(&self, off: u32, len: u32) -> Option<(u32, u32, u32)> {
        let s = self.tags.get(off as usize..(off + len) as usize)?;
        s.iter().enumerate().find_map(|(i, &tag)| {
            let w = tag & WRITER_MASK;
            if w == 0 {
                return None;
            }
            let t = w - 1;
            (tag >> WRITER_BITS == self.epoch[t as usize])
                .then(|| (off + i as u32, t, self.last_line[t as usize]))
        })
    }
}

/// How a generic access conflicts with an async copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Conflict {
    /// The access touches bytes a TMA load is still writing.
    Load,
    /// The access writes bytes a TMA store is still reading.
    Store,
    /// The access touches the response a `clusterlaunchcontrol.try_cancel` is still writing.
    Response,
    /// The access touches bytes an `st.async` of a CTA of the cluster is still writing.
    StAsync,
}

/// The shared-memory bytes an async op uses in CTA `ci`: `[lo, hi)`.
fn range(op: &AsyncOp, ci: u32, box_bytes: u32) -> Option<(u32, u32)> {
    let (start, ok) = match &op.kind {
        AsyncKind::Load { ctas, dst, .. } => (*dst, ctas >> ci & 1 == 1),
        AsyncKind::Store { src, .. } => (*src, op.cta == ci),
        // The tensor core's operand reads are not tracked yet.
        AsyncKind::Tc05 { .. } => return None,
        // The 16-byte response, exactly.
        AsyncKind::Clc { ctas, resp, .. } => {
            return (ctas >> ci & 1 == 1).then_some((*resp, resp + 16));
        }
        // The stored bytes, exactly.
        AsyncKind::StAsync { cta, off, data, .. } => {
            return (*cta == ci).then_some((*off, off + data.len() as u32));
        }
    };
    ok.then(|| (start & !127, (start + box_bytes).next_multiple_of(128)))
}

/// The first in-flight op that a generic access of `[off, off + len)` in CTA `ci` (a write
/// when `write`) conflicts with, and how; `box_bytes` gives each op's box size.
pub(crate) fn conflict(
    ops: &[AsyncOp],
    ci: u32,
    off: u32,
    len: u32,
    write: bool,
    box_bytes: impl Fn(&AsyncOp) -> u32,
) -> Option<(&AsyncOp, Conflict)> {
    ops.iter().find_map(|op| {
        let (lo, hi) = range(op, ci, box_bytes(op))?;
        if off >= hi || off + len <= lo {
            return None;
        }
        match op.kind {
            AsyncKind::Load { .. } => Some((op, Conflict::Load)),
            AsyncKind::Clc { .. } => Some((op, Conflict::Response)),
            AsyncKind::StAsync { .. } => Some((op, Conflict::StAsync)),
            AsyncKind::Store { .. } if write => Some((op, Conflict::Store)),
            AsyncKind::Store { .. } | AsyncKind::Tc05 { .. } => None,
        }
    })
}

/// The first in-flight tensor-core operation of CTA `ci` (a queued or committed
/// `tcgen05.mma`, or a `wgmma.mma_async` not yet retired) that reads a byte of
/// `[off, off + len)`: its line. The pair's MMAs, issued by the even CTA, read the odd CTA's
/// shared memory too, at the same offsets.
pub(crate) fn mma_reading(cl: &super::cta::Cluster, ci: usize, off: u32, len: u32) -> Option<u32> {
    let peer = ci ^ 1;
    if peer < cl.ctas.len()
        && let Some(line) = pair_mma_reading(cl, peer, off, len)
    {
        return Some(line);
    }
    own_mma_reading(cl, ci, off, len)
}

/// The first in-flight pair MMA (`cta_group::2`) issued by CTA `ci` that reads a byte of
/// `[off, off + len)` of either CTA of its pair.
fn pair_mma_reading(cl: &super::cta::Cluster, ci: usize, off: u32, len: u32) -> Option<u32> {
    let hit = |(ranges, line): ([(u32, u32); 2], u32)| {
        ranges
            .iter()
            .any(|&(lo, hi)| off < hi && lo < off + len)
            .then_some(line)
    };
    let committed = cl
        .ops
        .iter()
        .filter(|o| o.cta as usize == ci)
        .flat_map(|o| match &o.kind {
            AsyncKind::Tc05 { mmas, .. } => mmas.as_slice(),
            _ => &[],
        })
        .filter_map(|w| match w {
            super::tcgen05_cp::Tc05Work::Mma(m) if m.pair => Some(m.operands()),
            _ => None,
        });
    let queued = cl.ctas[ci].tc.queue.iter().filter_map(|(_, m)| match m {
        super::tcgen05_cp::Tc05Work::Mma(m) if m.pair => Some(m.operands()),
        _ => None,
    });
    committed.chain(queued).find_map(hit)
}

fn own_mma_reading(cl: &super::cta::Cluster, ci: usize, off: u32, len: u32) -> Option<u32> {
    let hit = |(ranges, line): ([(u32, u32); 2], u32)| {
        ranges
            .iter()
            .any(|&(lo, hi)| off < hi && lo < off + len)
            .then_some(line)
    };
    let cta = &cl.ctas[ci];
    let committed = cl
        .ops
        .iter()
        .filter(|o| o.cta as usize == ci)
        .flat_map(|o| match &o.kind {
            AsyncKind::Tc05 { mmas, .. } => mmas.as_slice(),
            _ => &[],
        });
    let queued = cta.tc.queue.iter().map(|(_, m)| m);
    committed
        .chain(queued)
        .find_map(|m| hit(m.operands()))
        .or_else(|| {
            cta.mma
                .iter()
                .flat_map(|w| w.pending())
                .find_map(|p| hit(p.operands()))
        })
}
