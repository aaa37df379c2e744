//! Constructors for the instructions register tiles lower to: floating-point arithmetic and
//! the approximate transcendentals, selects, conversions between f32 and the 16-bit floats,
//! lane shuffles and vector loads and stores. Each cites its PTX ISA 9.0 section.

use super::{inst, mem, reg};
use crate::arena::Handle;
use crate::ir::{Inst, Operand, Var};

impl Inst {
    /// A one-source instruction `op d, a`: `neg.f32`, `abs.f32` (§9.7.3.9, §9.7.3.10),
    /// `ex2.approx.ftz.f32` (§9.7.3.21, whose text gives the error bound),
    /// `lg2.approx.ftz.f32` (§9.7.3.20), `rsqrt.approx.ftz.f32` (§9.7.3.18),
    /// `rcp.approx.ftz.f32` / `rcp.rn.f32` (§9.7.3.16), `sqrt.rn.f32` (§9.7.3.17),
    /// `tanh.approx.f32` (§9.7.3.23, sm_75+), `not.pred` (§9.7.8.4).
    pub fn unary(op_ty: &str, d: Handle<Var>, a: Operand) -> Inst {
        inst(op_ty, vec![reg(d)], vec![a])
    }

    /// `fma.rn.f32 d, a, b, c` on operands (§9.7.3.6).
    pub fn fma_f32(d: Handle<Var>, a: Operand, b: Operand, c: Operand) -> Inst {
        inst("fma.rn.f32", vec![reg(d)], vec![a, b, c])
    }

    /// `selp.ty d, a, b, p`: `d = p ? a : b` (§9.7.7.3 selp).
    pub fn selp(ty: &str, d: Handle<Var>, a: Operand, b: Operand, p: Handle<Var>) -> Inst {
        inst(format!("selp.{ty}"), vec![reg(d)], vec![a, b, reg(p)])
    }

    /// `cvt.f32.bf16 d, h` / `cvt.f32.f16 d, h`: widen a 16-bit float, exactly (§9.7.9.21
    /// cvt; the `.bf16` source needs sm_90 / PTX 7.8).
    pub fn cvt_f32_from(half: &str, d: Handle<Var>, h: Handle<Var>) -> Inst {
        inst(format!("cvt.f32.{half}"), vec![reg(d)], vec![reg(h)])
    }

    /// `mov.b32 {lo, hi}, r`: split a 32-bit register into its low and high halves
    /// (§9.7.9.1 mov, vector unpacking form).
    pub fn unpack_b32(lo: Handle<Var>, hi: Handle<Var>, r: Handle<Var>) -> Inst {
        inst(
            "mov.b32",
            vec![Operand::Vector(vec![reg(lo), reg(hi)])],
            vec![reg(r)],
        )
    }

    /// `mov.b64 {lo, hi}, r`: a 64-bit register's two 32-bit halves (§9.7.9.1 mov, vector
    /// unpacking form), `lo` the low half.
    pub fn unpack_b64(lo: Handle<Var>, hi: Handle<Var>, r: Handle<Var>) -> Inst {
        inst(
            "mov.b64",
            vec![Operand::Vector(vec![reg(lo), reg(hi)])],
            vec![reg(r)],
        )
    }

    /// `mov.b64 r, {lo, hi}`: two 32-bit halves into a 64-bit register (§9.7.9.1 mov).
    pub fn pack_b64(r: Handle<Var>, lo: Handle<Var>, hi: Handle<Var>) -> Inst {
        inst(
            "mov.b64",
            vec![reg(r)],
            vec![Operand::Vector(vec![reg(lo), reg(hi)])],
        )
    }

    /// `red.<q> [addr+off], v` with `q` = `sem.scope.global.op.type` (§9.7.13.6 red): an
    /// atomic reduction into global memory, no result.
    pub fn red_global(q: &str, addr: Handle<Var>, off: i64, v: Operand) -> Inst {
        inst(format!("red.{q}"), vec![], vec![mem(addr, off), v])
    }

    /// `red.<q> [addr+off], {v…}` with `q` naming the vector (`relaxed.gpu.global.add.v4.f32`,
    /// `….add.noftz.v2.bf16x2`): the vector forms of §9.7.13.6 red (PTX ISA 8.1, sm_90), the
    /// address aligned to the vector's size.
    pub fn red_global_vec(q: &str, addr: Handle<Var>, off: i64, vs: &[Handle<Var>]) -> Inst {
        let v = Operand::Vector(vs.iter().map(|v| reg(*v)).collect());
        inst(format!("red.{q}"), vec![], vec![mem(addr, off), v])
    }

    /// `atom.<q> d, [addr+off], v` (§9.7.13.5 atom): the same, `d` receiving the old value.
    pub fn atom_global(q: &str, d: Handle<Var>, addr: Handle<Var>, off: i64, v: Operand) -> Inst {
        inst(format!("atom.{q}"), vec![reg(d)], vec![mem(addr, off), v])
    }

    /// `mov.b32 r, {lo, hi}`: pack two 16-bit halves (§9.7.9.1 mov, vector packing form).
    pub fn pack_b32(r: Handle<Var>, lo: Handle<Var>, hi: Handle<Var>) -> Inst {
        inst(
            "mov.b32",
            vec![reg(r)],
            vec![Operand::Vector(vec![reg(lo), reg(hi)])],
        )
    }

    /// `mov.b32 r, {b0, b1, b2, b3}` (§9.7.9.1 mov, packing form): four `.b8` registers into
    /// one word, `b0` the low byte (the lowest address when stored).
    pub fn pack_b32_bytes(r: Handle<Var>, b: [Handle<Var>; 4]) -> Inst {
        inst(
            "mov.b32",
            vec![reg(r)],
            vec![Operand::Vector(b.iter().map(|&x| reg(x)).collect())],
        )
    }

    /// `shfl.sync.idx.b32 d, a, 0, 0x1f, 0xffffffff` (§9.7.9.6 shfl.sync): every lane reads
    /// lane 0's `a`; every lane of the warp takes part. Of a value that is already the same
    /// in every lane (`%tid.x / 128`), it tells ptxas so: the result may live in a uniform
    /// register (what a wgmma descriptor needs) instead of being moved there per use.
    pub fn shfl_idx0(d: Handle<Var>, a: Handle<Var>) -> Inst {
        inst(
            "shfl.sync.idx.b32",
            vec![reg(d)],
            vec![
                reg(a),
                Operand::Imm(0),
                Operand::Imm(0x1f),
                Operand::Imm(0xffff_ffff),
            ],
        )
    }

    /// `shfl.sync.bfly.b32 d, a, lanemask, 0x1f, 0xffffffff` (§9.7.9.6 shfl.sync): lane `l`
    /// reads `a` of lane `l ^ lanemask`; every lane of the warp takes part.
    pub fn shfl_bfly(d: Handle<Var>, a: Handle<Var>, lanemask: u32) -> Inst {
        inst(
            "shfl.sync.bfly.b32",
            vec![reg(d)],
            vec![
                reg(a),
                Operand::Imm(lanemask as i64),
                Operand::Imm(0x1f),
                Operand::Imm(0xffff_ffff),
            ],
        )
    }

    /// `vote.sync.{any,all}.pred d, p, 0xffffffff` or `vote.sync.ballot.b32 d, p, 0xffffffff`
    /// (§9.7.13 "Parallel Synchronization and Communication Instructions: vote.sync"): every
    /// lane of the warp takes part (the full member mask) and every lane gets the result.
    pub fn vote_sync(mode: crate::ir::VoteKind, d: Handle<Var>, p: Handle<Var>) -> Inst {
        let op = match mode {
            crate::ir::VoteKind::Any => "vote.sync.any.pred",
            crate::ir::VoteKind::All => "vote.sync.all.pred",
            crate::ir::VoteKind::Ballot => "vote.sync.ballot.b32",
        };
        inst(op, vec![reg(d)], vec![reg(p), Operand::Imm(0xffff_ffff)])
    }

    /// `ld.global.vN.ty {d…}, [addr+off]` (§9.7.9.8 ld, vector forms `.v2`/`.v4`; a single
    /// register for N = 1): the address must be aligned to the whole vector.
    pub fn ld_global_vec(ty: &str, ds: &[Handle<Var>], addr: Handle<Var>, off: i64) -> Inst {
        let (op, dsts) = match ds {
            [d] => (format!("ld.global.{ty}"), vec![reg(*d)]),
            _ => (
                format!("ld.global.v{}.{ty}", ds.len()),
                vec![Operand::Vector(ds.iter().map(|d| reg(*d)).collect())],
            ),
        };
        inst(op, dsts, vec![mem(addr, off)])
    }

    /// `st.global.vN.ty [addr+off], {v…}` (§9.7.9.10 st, vector forms).
    pub fn st_global_vec(ty: &str, addr: Handle<Var>, off: i64, vs: &[Handle<Var>]) -> Inst {
        let (op, v) = match vs {
            [v] => (format!("st.global.{ty}"), reg(*v)),
            _ => (
                format!("st.global.v{}.{ty}", vs.len()),
                Operand::Vector(vs.iter().map(|v| reg(*v)).collect()),
            ),
        };
        inst(op, vec![], vec![mem(addr, off), v])
    }

    /// `ld.shared.f32 d, [addr+off]` (§9.7.9.8 ld).
    pub fn ld_shared_f32(d: Handle<Var>, addr: Handle<Var>, off: i64) -> Inst {
        inst("ld.shared.f32", vec![reg(d)], vec![mem(addr, off)])
    }

    /// `ld.shared.vN.ty {d…}, [addr+off]`, or the scalar form for one register (§9.7.9.8 ld,
    /// vector forms: the address aligned to the vector's size).
    pub fn ld_shared_vec(ty: &str, ds: &[Handle<Var>], addr: Handle<Var>, off: i64) -> Inst {
        let (op, dsts) = match ds {
            [d] => (format!("ld.shared.{ty}"), vec![reg(*d)]),
            _ => (
                format!("ld.shared.v{}.{ty}", ds.len()),
                vec![Operand::Vector(ds.iter().map(|d| reg(*d)).collect())],
            ),
        };
        inst(op, dsts, vec![mem(addr, off)])
    }

    /// `st.shared.vN.ty [addr+off], {v…}`, or the scalar form (§9.7.9.10 st, vector forms).
    pub fn st_shared_vec(ty: &str, addr: Handle<Var>, off: i64, vs: &[Handle<Var>]) -> Inst {
        let (op, v) = match vs {
            [v] => (format!("st.shared.{ty}"), reg(*v)),
            _ => (
                format!("st.shared.v{}.{ty}", vs.len()),
                Operand::Vector(vs.iter().map(|v| reg(*v)).collect()),
            ),
        };
        inst(op, vec![], vec![mem(addr, off), v])
    }

    /// `ld.shared::cluster.f32 d, [addr+off]` (§9.7.9.8 ld: a `.shared::cluster` address from
    /// `mapa` names shared memory of another CTA of the cluster — distributed shared memory).
    pub fn ld_shared_cluster_f32(d: Handle<Var>, addr: Handle<Var>, off: i64) -> Inst {
        Inst::ld_shared_cluster("f32", d, addr, off)
    }

    /// `ld.shared::cluster.ty d, [addr+off]` of a 32-bit `ty` (`f32`, `s32`, `u32`): the
    /// scalar form of [`Inst::ld_shared_cluster_f32`].
    pub fn ld_shared_cluster(ty: &str, d: Handle<Var>, addr: Handle<Var>, off: i64) -> Inst {
        inst(
            format!("ld.shared::cluster.{ty}"),
            vec![reg(d)],
            vec![mem(addr, off)],
        )
    }

    /// `st.async.shared::cluster.mbarrier::complete_tx::bytes.ty [addr+off], v, [mbar]`
    /// (§9.7.9.12 st.async; PTX 8.1, sm_90): stores `v` (`.b32` or `.b64`) into the shared
    /// memory of a CTA of the cluster (`addr` from `mapa`) and performs complete-tx of its
    /// bytes on the mbarrier `mbar` of that same CTA. The store is weak; the complete-tx has
    /// `.release` semantics at `.cluster` scope, so a thread that observes the phase complete
    /// (`mbarrier.try_wait`) sees the value.
    pub fn st_async(ty: &str, addr: Handle<Var>, off: i64, v: Operand, mbar: Handle<Var>) -> Inst {
        inst(
            format!("st.async.shared::cluster.mbarrier::complete_tx::bytes.{ty}"),
            vec![],
            vec![mem(addr, off), v, mem(mbar, 0)],
        )
    }

    /// `ldmatrix.sync.aligned.m8n8.xN.shared.b16 {d…}, [addr]` (§9.7.14.5.15 ldmatrix): N
    /// 8×8 matrices of 16-bit elements; lanes 8q … 8q+7 give the addresses of matrix q's eight
    /// rows (16 contiguous bytes each), and lane `l` receives in `d[q]` elements
    /// `(l / 4, 2(l % 4))` and `(l / 4, 2(l % 4) + 1)` of matrix q, the lower column in the
    /// lower half. Every lane of the warp executes it.
    /// `trans`: `.trans`, each matrix delivered transposed (lane `l` gets rows `2(l % 4)`
    /// and `2(l % 4) + 1` of column `l / 4`).
    pub fn ldmatrix(ds: &[Handle<Var>], addr: Handle<Var>, trans: bool) -> Inst {
        let t = if trans { ".trans" } else { "" };
        inst(
            format!("ldmatrix.sync.aligned.m8n8.x{}{t}.shared.b16", ds.len()),
            vec![Operand::Vector(ds.iter().map(|d| reg(*d)).collect())],
            vec![mem(addr, 0)],
        )
    }

    /// `stmatrix.sync.aligned.m8n8.xN.shared.b16 [addr], {v…}` (§9.7.14.5.16 stmatrix,
    /// sm_90+): the inverse of [`Inst::ldmatrix`], with the same lane roles (`trans`: `.trans`).
    pub fn stmatrix(addr: Handle<Var>, vs: &[Handle<Var>], trans: bool) -> Inst {
        let t = if trans { ".trans" } else { "" };
        inst(
            format!("stmatrix.sync.aligned.m8n8.x{}{t}.shared.b16", vs.len()),
            vec![],
            vec![
                mem(addr, 0),
                Operand::Vector(vs.iter().map(|v| reg(*v)).collect()),
            ],
        )
    }
}
