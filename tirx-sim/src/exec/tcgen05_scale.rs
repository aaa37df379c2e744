//! Block scaling of `tcgen05.mma` (PTX ISA §9.7.16.10.7 "Block Scaling"): the kinds
//! `kind::mxf8f6f4` (here), `kind::mxf4`, `kind::mxf4nvf4` compute
//! `(A · scale_A) · (B · scale_B) + D`, `scale_A` an M × SFA_N and `scale_B` an SFB_M × N
//! matrix in tensor memory: each row of A is cut into SFA_N chunks of K, each chunk multiplied
//! by its row's scale factor; each column of B likewise. With `.scale_vec::1X`
//! (`kind::mxf8f6f4`, §9.7.16.10.7.1 "Valid combinations of scale_vectorsize", Table
//! "Valid combinations of scale_vectorsize and shapes": scale_A M × 1, scale_B 1 × N) one
//! UE8M0 factor scales a row's (a column's) whole K = 32 of one instruction. With
//! `kind::mxf4nvf4` (K = 64) `.scale_vec::2X` cuts the instruction's K into two chunks of 32
//! and `::4X` into four of 16, chunk `j` scaled by byte `ID + j` of the same cell (so 2X
//! takes IDs 0 or 2 and 4X ID 0); the factors are UE8M0 or, with 4X, UE4M3 (an unsigned
//! E4M3, NVFP4's), by the descriptor's bit 23.
//!
//! **Where the factors are** (§9.7.16.10.7.2 "Scale Factor A ID", the layout for
//! `scale_vec::1X`, and §9.7.16.10.7.3 "Scale Factor B ID"): one factor per row, in a 1-byte
//! sub-column of the 32-bit TMEM cells; the instruction descriptor's scale-factor data ID
//! (bits 29–30 for A, 4–5 for B) names the byte. The ISA draws the matrix in a figure; as
//! read here (and as the 32-lane `tcgen05.cp` shapes that fill it imply) the rows are cut
//! into chunks of 32 placed side by side: row `m`'s factor is in lane `m % 32`, column
//! `col0 + m / 32` of the `[scale-A-tmem]` address, byte ID; B's column `n` likewise from
//! `[scale-B-tmem]`. "Scale factors for A and B matrices need to be duplicated to all 32
//! lane partitions of tensor memory" (§9.7.16.10.7): the emulator reads each factor in all
//! four 32-lane partitions (lanes `m % 32`, `32 + m % 32`, …) and diagnoses a factor that
//! differs between them, as it diagnoses a cell outside every allocation, one a
//! `tcgen05.st` wrote without its `tcgen05.wait::st`, or one a `tcgen05.cp` of another thread
//! has yet to write (queued or committed, not run: nothing ordered it before the MMA).
//!
//! **The CTA pair** (`.cta_group::2`): the ISA does not say where the peer's factors are.
//! Here each CTA's data path reads its own tensor memory at the instruction's addresses (the
//! pair's allocation has the same columns in both): the even CTA scales its 128 rows of A
//! and all N of B by its factors, the odd CTA its rows of A and all of B by its own — the
//! placement CUTLASS's 2-SM block-scaled mainloop loads and copies
//! (`sm100_blockscaled_mma_warpspecialized.hpp`: SFA per CTA rank, SFB whole in each CTA,
//! `tcgen05.cp.cta_group::2` by the leader).
//!
//! **Arithmetic.** Each element is its exact value times its factor (UE8M0: 2^(e − 127), a
//! power of two, so exact in f64), then the products are summed in f64 and added to the f32
//! accumulator with one rounding, as for the unscaled kinds.

use super::cta::Cluster;
use super::diag::SimError;
use super::machine::Machine;
use super::program::Addr;
use super::tcgen05::{Tc05Mma, mma_fault, pending_st};
use super::tcgen05_cp::pending_writer;
use super::tcgen05_kind::{ue4m3, ue8m0};

/// The scale factors of one block-scaled MMA: A's and B's first TMEM columns and the bytes
/// (data IDs) they sit in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScaleAt {
    a_col: u32,
    b_col: u32,
    a_id: u32,
    b_id: u32,
    /// Factors per row for one instruction (1, 2 or 4), in bytes `id..id + vec` of a cell.
    vec: u32,
    /// UE4M3 factors (else UE8M0).
    ue4m3: bool,
}

impl ScaleAt {
    /// With the kind's scale vector size and factor type.
    pub(crate) fn with_format(self, vec: u32, ue4m3: bool) -> ScaleAt {
        ScaleAt {
            vec: vec.max(1),
            ue4m3,
            ..self
        }
    }
}

impl Machine<'_> {
    /// The scale-factor operands of a block-scaled MMA issued by thread `t` of CTA `ci`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scale_at(
        &self,
        cl: &Cluster,
        ci: usize,
        t: u32,
        line: u32,
        (sfa, sfb): &(Addr, Addr),
        (a_id, b_id): (u32, u32),
        pair: bool,
    ) -> Result<ScaleAt, SimError> {
        // The pair's factors sit at the same addresses in both CTAs (the pair's allocation):
        // each CTA's data path reads its own (`apply_scales`).
        let _ = pair;
        let bad = |what: &str| self.protocol(cl, ci, t, line, what.to_owned());
        let (a, b) = (
            self.ea(cl, ci, t, sfa, line)? as u32,
            self.ea(cl, ci, t, sfb, line)? as u32,
        );
        if a >> 16 != 0 || b >> 16 != 0 {
            return Err(bad(
                "a scale-factor TMEM address with a lane offset: the factors fill lanes 0..32 \
                 of every lane partition (§9.7.16.10.7), so the address names lane 0",
            ));
        }
        Ok(ScaleAt {
            a_col: a & 0xffff,
            b_col: b & 0xffff,
            a_id,
            b_id,
            vec: 1,
            ue4m3: false,
        })
    }

    /// Multiplies row `i` of `a` (M rows) and row `j` of `b` (N rows, B's columns) by their
    /// scale factors read from CTA `src`'s tensor memory (the MMA issued in CTA `ci`): the
    /// issuing CTA's for one CTA; for the pair each CTA's own, its rows of A and all of B
    /// (`tcgen05_pair.rs`).
    pub(crate) fn apply_scales(
        &self,
        cl: &Cluster,
        (ci, who): (usize, u32),
        src: usize,
        mma: &Tc05Mma,
        at: &ScaleAt,
        (a, b): (&mut [Vec<f64>], &mut [Vec<f64>]),
    ) -> Result<(), SimError> {
        let (wa, wb) = if src == ci {
            ("A".to_owned(), "B".to_owned())
        } else {
            (
                format!("A (cluster rank {src}'s)"),
                format!("B (cluster rank {src}'s)"),
            )
        };
        for (rows, col, id, which) in [
            (a, at.a_col, at.a_id, wa.as_str()),
            (b, at.b_col, at.b_id, wb.as_str()),
        ] {
            for (r, row) in rows.iter_mut().enumerate() {
                // With 2X / 4X the instruction's K is cut into `vec` chunks, chunk `j` scaled
                // by byte `id + j` (§9.7.16.10.7.1).
                let chunk = row.len() / at.vec as usize;
                for (j, xs) in row.chunks_mut(chunk).enumerate() {
                    let rc = (r as u32, col, id + j as u32);
                    let byte = factor(cl, (ci, who), src, mma, rc, which)?;
                    let s = if at.ue4m3 { ue4m3(byte) } else { ue8m0(byte) };
                    xs.iter_mut().for_each(|x| *x *= s);
                }
            }
        }
        Ok(())
    }
}

/// The factor byte of row `r` of scale matrix `which` (columns from `col`, byte `id`) in CTA
/// `src`'s tensor memory: the same byte in all four lane partitions, each cell allocated and
/// not awaiting a `tcgen05.wait::st` or another thread's `tcgen05.cp`.
fn factor(
    cl: &Cluster,
    issuer: (usize, u32),
    src: usize,
    mma: &Tc05Mma,
    (r, col, id): (u32, u32, u32),
    which: &str,
) -> Result<u8, SimError> {
    let cta = &cl.ctas[src];
    let c = col + r / 32;
    let mut seen: Option<u8> = None;
    for part in 0..4 {
        let lane = 32 * part + r % 32;
        if let Some((at, by)) = pending_writer(cl, (src, issuer.1), lane, c) {
            let what = format!(
                "tcgen05.mma reads scale_{which} from lane {lane}, column {c} of tensor memory, \
                 which the tcgen05.cp of line {at} (thread {}) has not written yet: a copy by \
                 another thread is ordered before the MMA only by its tcgen05.commit and a wait \
                 on that barrier (PTX ISA §9.7.16.6.5 pipelines tcgen05.cp → tcgen05.mma within \
                 one thread)",
                cta.thread(by)
            );
            return Err(mma_fault(cl, issuer, mma, &what));
        }
        if let Some(at) = pending_st(cta, lane, c) {
            let what = format!(
                "tcgen05.mma reads scale_{which} from lane {lane}, column {c} of tensor memory, \
                 which the tcgen05.st of line {at} wrote without a tcgen05.wait::st"
            );
            return Err(mma_fault(cl, issuer, mma, &what));
        }
        let Some(w) = cta.tmem.word(lane, c) else {
            let what = format!(
                "tcgen05.mma reads scale_{which} from lane {lane}, column {c}: tensor memory \
                 outside every allocation"
            );
            return Err(mma_fault(cl, issuer, mma, &what));
        };
        let byte = (w >> (8 * id)) as u8;
        match seen {
            Some(s) if s != byte => {
                let what = format!(
                    "scale_{which}'s factor of row {r} (column {c}, byte {id}) is {s:#04x} in \
                     lane {} but {byte:#04x} in lane {lane}: block scaling needs the factors \
                     duplicated to all four 32-lane partitions (PTX ISA §9.7.16.10.7)",
                    r % 32
                );
                return Err(mma_fault(cl, issuer, mma, &what));
            }
            _ => seen = Some(byte),
        }
    }
    Ok(seen.unwrap_or(0xff))
}
