//! Constructors for every PTX instruction the lowering emits, named after the mnemonic.
//!
//! Each cites the PTX ISA section (PTX ISA 9.0, docs.nvidia.com/cuda/parallel-thread-execution)
//! that defines its syntax and semantics. Shared-memory addresses are 32-bit shared-window
//! addresses (`.shared::cta` / `.shared::cluster` with a `u32` register), global addresses are
//! 64-bit generic addresses.

use crate::arena::Handle;
use crate::ir::{Inst, Operand, Var};

mod clc;
mod tile;

fn inst(opcode: impl Into<String>, dsts: Vec<Operand>, srcs: Vec<Operand>) -> Inst {
    Inst {
        opcode: opcode.into(),
        dsts,
        srcs,
        guard: None,
    }
}

/// `base.cta_group::{1,2}rest`: the opcode of a tcgen05 instruction for one CTA or the pair.
fn op_group(base: &str, pair: bool, rest: &str) -> String {
    format!("{base}.cta_group::{}{rest}", if pair { 2 } else { 1 })
}

/// A register operand.
pub fn reg(v: Handle<Var>) -> Operand {
    Operand::Reg(v)
}

/// `[v + off]`.
pub fn mem(v: Handle<Var>, off: i64) -> Operand {
    Operand::Mem(Box::new(Operand::Reg(v)), off)
}

/// The opcode of [`Inst::tirx_check`]'s note (printed as a PTX comment).
pub const TIRX_CHECK: &str = "tirx.check";

impl Inst {
    /// Guards the instruction with `@p` (or `@!p`).
    pub fn guarded(mut self, p: Handle<Var>, negate: bool) -> Inst {
        self.guard = Some(if negate {
            Operand::NotReg(p)
        } else {
            Operand::Reg(p)
        });
        self
    }

    /// Generic arithmetic / logic `op.ty d, a, b` (§9.7.1 integer, §9.7.3 floating point,
    /// §9.7.8 logic and shift). `op_ty` is e.g. `add.u32`, `mul.lo.u32`, `shl.b32`.
    pub fn binary(op_ty: &str, d: Handle<Var>, a: Operand, b: Operand) -> Inst {
        inst(op_ty, vec![reg(d)], vec![a, b])
    }

    /// `mov.ty d, a` (§9.7.9.1).
    pub fn mov(ty: &str, d: Handle<Var>, a: Operand) -> Inst {
        inst(format!("mov.{ty}"), vec![reg(d)], vec![a])
    }

    /// `setp.cmp.ty p, a, b` (§9.7.7.1 setp).
    pub fn setp(cmp: &str, ty: &str, p: Handle<Var>, a: Operand, b: Operand) -> Inst {
        inst(format!("setp.{cmp}.{ty}"), vec![reg(p)], vec![a, b])
    }

    /// `cvt.u64.u32 d, a` (§9.7.9.21 cvt).
    pub fn cvt(to_from: &str, d: Handle<Var>, a: Operand) -> Inst {
        inst(format!("cvt.{to_from}"), vec![reg(d)], vec![a])
    }

    /// `ld.param.ty d, [name]` (§9.7.9.8 ld, state space `.param`, §5.1.6).
    pub fn ld_param(ty: &str, d: Handle<Var>, name: &str) -> Inst {
        inst(
            format!("ld.param.{ty}"),
            vec![reg(d)],
            vec![Operand::Mem(Box::new(Operand::Sym(name.into())), 0)],
        )
    }

    /// `ld.shared.u32 d, [addr]` (§9.7.9.8 ld).
    pub fn ld_shared_u32(d: Handle<Var>, addr: Handle<Var>, off: i64) -> Inst {
        inst("ld.shared.u32", vec![reg(d)], vec![mem(addr, off)])
    }

    /// `st.global.ty [addr+off], v` (§9.7.9.10 st).
    pub fn st_global(ty: &str, addr: Handle<Var>, off: i64, v: Operand) -> Inst {
        inst(format!("st.global.{ty}"), vec![], vec![mem(addr, off), v])
    }

    /// `cvt.rn.bf16.f32` / `cvt.rn.f16.f32` into a b16 register (§9.7.9.21 cvt; bf16 needs
    /// sm_80+).
    pub fn cvt_rn_f32_to(half: &str, d: Handle<Var>, a: Handle<Var>) -> Inst {
        inst(format!("cvt.rn.{half}.f32"), vec![reg(d)], vec![reg(a)])
    }

    /// `cvt.rn.bf16x2.f32 d, hi, lo` / `cvt.rn.f16x2.f32 d, hi, lo` (§9.7.9.21 cvt; both
    /// packed forms need sm_80+ and PTX 7.0): two f32 values rounded to nearest even and packed
    /// into one 32-bit register, the first source `hi` in the upper half (the higher address
    /// in memory).
    pub fn cvt_rn_pack(half: &str, d: Handle<Var>, hi: Handle<Var>, lo: Handle<Var>) -> Inst {
        inst(
            format!("cvt.rn.{half}x2.f32"),
            vec![reg(d)],
            vec![reg(hi), reg(lo)],
        )
    }

    /// `cvt.rn.satfinite.e4m3x2.f32 d, hi, lo` / `….e5m2x2.f32` (§9.7.9.21 cvt; sm_89+, PTX
    /// 7.8; `.satfinite` is required): two f32 values rounded to nearest even into OCP FP8 and
    /// packed into a 16-bit register, `hi` in the upper byte. Beyond the largest finite value
    /// (448, 57344), infinities included, the result saturates to it; NaN stays NaN.
    pub fn cvt_rn_satfinite_fp8x2(fp8: &str, d: Handle<Var>, hi: Operand, lo: Operand) -> Inst {
        inst(
            format!("cvt.rn.satfinite.{fp8}x2.f32"),
            vec![reg(d)],
            vec![hi, lo],
        )
    }

    /// `cvt.rn.satfinite.e2m1x2.f32 d, hi, lo` (§9.7.9.21 cvt; sm_100a+, PTX 8.6;
    /// `.satfinite` is required): two f32 values rounded to nearest even into OCP FP4 E2M1
    /// (±{0, 0.5, 1, 1.5, 2, 3, 4, 6}) and packed into an 8-bit register, `hi` in the upper
    /// nibble. Beyond ±6, infinities included, the result saturates to ±6.
    pub fn cvt_rn_satfinite_e2m1x2(d: Handle<Var>, hi: Operand, lo: Operand) -> Inst {
        inst("cvt.rn.satfinite.e2m1x2.f32", vec![reg(d)], vec![hi, lo])
    }

    /// `st.shared.ty [addr+off], v` (§9.7.9.10 st).
    pub fn st_shared(ty: &str, addr: Handle<Var>, off: i64, v: Operand) -> Inst {
        inst(format!("st.shared.{ty}"), vec![], vec![mem(addr, off), v])
    }

    /// `st.shared.v2.f32 [addr+off], {a, b}` (§9.7.9.10 st, vector `.v2` of `.f32`): two
    /// f32 values to 8-byte-aligned shared memory in one store.
    pub fn st_shared_v2_f32(addr: Handle<Var>, off: i64, a: Handle<Var>, b: Handle<Var>) -> Inst {
        inst(
            "st.shared.v2.f32",
            vec![],
            vec![mem(addr, off), Operand::Vector(vec![reg(a), reg(b)])],
        )
    }

    /// `ld.shared.v2.f32 {a, b}, [addr+off]` (§9.7.9.8 ld, vector `.v2` of `.f32`).
    pub fn ld_shared_v2_f32(a: Handle<Var>, b: Handle<Var>, addr: Handle<Var>, off: i64) -> Inst {
        inst(
            "ld.shared.v2.f32",
            vec![Operand::Vector(vec![reg(a), reg(b)])],
            vec![mem(addr, off)],
        )
    }

    /// `fma.rn.f32 d, a, b, c`: d = a·b + c with one rounding, to nearest even (§9.7.3.6
    /// fma, floating point).
    pub fn fma_rn_f32(d: Handle<Var>, a: Handle<Var>, b: Handle<Var>, c: Handle<Var>) -> Inst {
        inst("fma.rn.f32", vec![reg(d)], vec![reg(a), reg(b), reg(c)])
    }

    /// `st.global.v2.f32 [addr+off], {a, b}` (§9.7.9.10 st): needs 8-byte alignment.
    pub fn st_global_v2_f32(addr: Handle<Var>, off: i64, a: Handle<Var>, b: Handle<Var>) -> Inst {
        inst(
            "st.global.v2.f32",
            vec![],
            vec![mem(addr, off), Operand::Vector(vec![reg(a), reg(b)])],
        )
    }

    /// `mov.u64 d, param; cvta.param.u64 d, d` — the generic address of a by-value kernel
    /// parameter (§9.7.9.18 cvta with `.param`, PTX 7.7+). TMA must read the tensor map through
    /// this address.
    pub fn cvta_param(d: Handle<Var>, param: &str) -> [Inst; 2] {
        [
            inst("mov.u64", vec![reg(d)], vec![Operand::Sym(param.into())]),
            inst("cvta.param.u64", vec![reg(d)], vec![reg(d)]),
        ]
    }

    /// `elect.sync %r|%p, 0xffffffff` (§9.7.13.12 elect.sync, sm_90+): one lane of the warp
    /// gets `p` true; `lane` receives the elected lane's index.
    pub fn elect_sync(lane: Handle<Var>, p: Handle<Var>) -> Inst {
        let pair = Operand::Pair(Box::new(reg(lane)), Box::new(reg(p)));
        inst("elect.sync", vec![pair], vec![Operand::Imm(0xffff_ffff)])
    }

    /// `bar.sync 0` (§9.7.13.4 bar/barrier): all threads of the CTA.
    pub fn bar_sync() -> Inst {
        inst("bar.sync", vec![], vec![Operand::Imm(0)])
    }

    /// `bar.sync id, threads` or, with `arrive`, `bar.arrive id, threads` (§9.7.13.4
    /// bar/barrier): a named barrier among `threads` threads (a multiple of the warp size);
    /// `bar.arrive` counts the executing warp's threads without waiting for the barrier.
    pub fn bar_named(id: Operand, threads: u32, arrive: bool) -> Inst {
        let op = if arrive { "bar.arrive" } else { "bar.sync" };
        inst(op, vec![], vec![id, Operand::Imm(threads as i64)])
    }

    /// `mbarrier.init.shared::cta.b64 [addr], count` (§9.7.13.15.9 mbarrier.init).
    pub fn mbarrier_init(addr: Handle<Var>, off: i64, count: u32) -> Inst {
        inst(
            "mbarrier.init.shared::cta.b64",
            vec![],
            vec![mem(addr, off), Operand::Imm(count as i64)],
        )
    }

    /// `mbarrier.arrive.shared::cta.b64 _, [addr]` (§9.7.13.15.13 mbarrier.arrive).
    pub fn mbarrier_arrive(addr: Handle<Var>) -> Inst {
        inst(
            "mbarrier.arrive.shared::cta.b64",
            vec![Operand::Sym("_".into())],
            vec![mem(addr, 0)],
        )
    }

    /// `mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], bytes` (§9.7.13.15.13, the
    /// `.expect_tx` form; PTX 8.0, sm_90+): arrive once and raise the tx-count by `bytes`.
    pub fn mbarrier_arrive_expect_tx(addr: Handle<Var>, bytes: u32) -> Inst {
        inst(
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            vec![Operand::Sym("_".into())],
            vec![mem(addr, 0), Operand::Imm(bytes as i64)],
        )
    }

    /// `mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity` (§9.7.13.15.16
    /// mbarrier.test_wait/try_wait): `p` true once the phase with that parity completed.
    pub fn mbarrier_try_wait_parity(p: Handle<Var>, addr: Handle<Var>, parity: Operand) -> Inst {
        inst(
            "mbarrier.try_wait.parity.shared::cta.b64",
            vec![reg(p)],
            vec![mem(addr, 0), parity],
        )
    }

    /// `mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [addr], parity`
    /// (§9.7.13.15.16, the `.acquire.cluster` form; PTX 8.0, sm_90): the wait of a barrier
    /// that peers' `st.async` complete, whose complete-tx releases at cluster scope
    /// (§9.7.9.12) — the acquire pairs with it at the same scope.
    pub fn mbarrier_try_wait_parity_cluster(
        p: Handle<Var>,
        addr: Handle<Var>,
        parity: Operand,
    ) -> Inst {
        inst(
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
            vec![reg(p)],
            vec![mem(addr, 0), parity],
        )
    }

    /// `fence.mbarrier_init.release.cluster` (§9.7.13.4 membar/fence): makes barrier inits
    /// visible to the async proxy and other CTAs of the cluster.
    pub fn fence_mbarrier_init() -> Inst {
        inst("fence.mbarrier_init.release.cluster", vec![], vec![])
    }

    /// `fence.proxy.async.shared::cta` (§9.7.13.4): orders generic-proxy shared-memory
    /// accesses with later async-proxy (TMA, tensor core) accesses.
    pub fn fence_proxy_async() -> Inst {
        inst("fence.proxy.async.shared::cta", vec![], vec![])
    }

    /// `griddepcontrol.wait` (PTX ISA §9.7.13, `griddepcontrol`, sm_90): waits until every prerequisite grid
    /// of a programmatic dependent launch has completed and its memory operations are
    /// performed and visible to this grid.
    pub fn griddepcontrol_wait() -> Inst {
        inst("griddepcontrol.wait", vec![], vec![])
    }

    /// `griddepcontrol.launch_dependents` (§9.7.13, `griddepcontrol`): signals that the dependents of this
    /// grid may be scheduled once every CTA of it has signalled or completed.
    pub fn griddepcontrol_launch_dependents() -> Inst {
        inst("griddepcontrol.launch_dependents", vec![], vec![])
    }

    /// `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes
    /// [dst], [map, {coords}], [mbar]` (§9.7.9.25.5.1 cp.async.bulk.tensor): a TMA load that
    /// completes `box bytes` of tx-count on `mbar`.
    pub fn cp_async_bulk_tensor_load(
        dst: Handle<Var>,
        map: Handle<Var>,
        coords: Vec<Operand>,
        mbar: Handle<Var>,
    ) -> Inst {
        let n = coords.len();
        inst(
            format!(
                "cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes"
            ),
            vec![],
            vec![
                mem(dst, 0),
                Operand::TensorMem(Box::new(reg(map)), coords),
                mem(mbar, 0),
            ],
        )
    }

    /// The CTA pair's TMA load, `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::
    /// complete_tx::bytes.cta_group::2 [dst], [map, {…}], [mbar]` (§9.7.9.25.5.1): the box
    /// lands in this CTA's shared memory at `dst`, and with `.cta_group::2` the mbarrier
    /// `mbar` (a `.shared::cluster` address) may be in the peer CTA of the pair.
    pub fn cp_async_bulk_tensor_load_pair(
        dst: Handle<Var>,
        map: Handle<Var>,
        coords: Vec<Operand>,
        mbar: Handle<Var>,
    ) -> Inst {
        let n = coords.len();
        inst(
            format!(
                "cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"
            ),
            vec![],
            vec![
                mem(dst, 0),
                Operand::TensorMem(Box::new(reg(map)), coords),
                mem(mbar, 0),
            ],
        )
    }

    /// The CTA pair's multicast TMA load, `cp.async.bulk.tensor.Nd.shared::cluster.global.
    /// mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2 [dst], [map, {…}], [mbar],
    /// mask` (§9.7.9.25.5.1): the box lands at `dst`'s offset in every CTA of `mask`, and each
    /// of them completes its bytes on the mbarrier at `mbar`'s offset in the CTA of its own pair
    /// that `mbar` names (rank parity), as `.cta_group::2` allows.
    pub fn cp_async_bulk_tensor_load_pair_multicast(
        dst: Handle<Var>,
        map: Handle<Var>,
        coords: Vec<Operand>,
        mbar: Handle<Var>,
        mask: Handle<Var>,
    ) -> Inst {
        let n = coords.len();
        inst(
            format!(
                "cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
            ),
            vec![],
            vec![
                mem(dst, 0),
                Operand::TensorMem(Box::new(reg(map)), coords),
                mem(mbar, 0),
                reg(mask),
            ],
        )
    }

    /// The `.multicast::cluster` form of the TMA load (§9.7.9.25.5.1): the box lands at the
    /// same shared-memory offset in every CTA of `mask` and completes tx-count on the barrier
    /// at `mbar`'s offset in each of them. `mask` is a 16-bit register.
    pub fn cp_async_bulk_tensor_load_multicast(
        dst: Handle<Var>,
        map: Handle<Var>,
        coords: Vec<Operand>,
        mbar: Handle<Var>,
        mask: Handle<Var>,
    ) -> Inst {
        let n = coords.len();
        inst(
            format!(
                "cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            ),
            vec![],
            vec![
                mem(dst, 0),
                Operand::TensorMem(Box::new(reg(map)), coords),
                mem(mbar, 0),
                reg(mask),
            ],
        )
    }

    /// `mapa.shared::cluster.u32 d, addr, rank` (§9.7.9.15 mapa): the address of the same
    /// shared-memory location in CTA `rank` of the cluster.
    pub fn mapa(d: Handle<Var>, addr: Handle<Var>, rank: Operand) -> Inst {
        inst(
            "mapa.shared::cluster.u32",
            vec![reg(d)],
            vec![reg(addr), rank],
        )
    }

    /// `mbarrier.arrive.shared::cluster.b64 _, [addr]` (§9.7.13.15.13): an arrival on a
    /// barrier of another CTA of the cluster, with the default `.release.cta` semantics. The
    /// `.release.cluster` form costs a cluster-scope fence per arrival (measured on the H200:
    /// "membar" stalls, 0.72× the throughput); the consumers it signals only read the stage
    /// through the tensor core, whose completion `wgmma.wait_group` already established.
    pub fn mbarrier_arrive_remote(addr: Handle<Var>) -> Inst {
        inst(
            "mbarrier.arrive.shared::cluster.b64",
            vec![Operand::Sym("_".into())],
            vec![mem(addr, 0)],
        )
    }

    /// `barrier.cluster.arrive.release.aligned` then `barrier.cluster.wait.acquire.aligned`
    /// (§9.7.13.5 barrier.cluster): every thread of every CTA in the cluster.
    pub fn barrier_cluster() -> [Inst; 2] {
        [
            inst("barrier.cluster.arrive.release.aligned", vec![], vec![]),
            inst("barrier.cluster.wait.acquire.aligned", vec![], vec![]),
        ]
    }

    /// `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [map, {coords}], [src]`
    /// (§9.7.9.25.5.1): a TMA store, completed through the bulk async-group.
    pub fn cp_async_bulk_tensor_store(
        map: Handle<Var>,
        coords: Vec<Operand>,
        src: Handle<Var>,
    ) -> Inst {
        let n = coords.len();
        inst(
            format!("cp.async.bulk.tensor.{n}d.global.shared::cta.bulk_group"),
            vec![],
            vec![Operand::TensorMem(Box::new(reg(map)), coords), mem(src, 0)],
        )
    }

    /// `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group [map, {coords}],
    /// [src]` (§9.7.9.25.5.2): a TMA reduce-store, each element of the box combined with the
    /// global one by `op` (`add`/`min`/`max`) atomically, in the tensor map's type.
    pub fn cp_reduce_async_bulk_tensor(
        op: &str,
        map: Handle<Var>,
        coords: Vec<Operand>,
        src: Handle<Var>,
    ) -> Inst {
        let n = coords.len();
        inst(
            format!("cp.reduce.async.bulk.tensor.{n}d.global.shared::cta.{op}.tile.bulk_group"),
            vec![],
            vec![Operand::TensorMem(Box::new(reg(map)), coords), mem(src, 0)],
        )
    }

    /// `cp.async.bulk.commit_group` (§9.7.9.25.6.1).
    pub fn cp_async_bulk_commit_group() -> Inst {
        inst("cp.async.bulk.commit_group", vec![], vec![])
    }

    /// `cp.async.bulk.wait_group[.read] n` (§9.7.9.25.6.2).
    pub fn cp_async_bulk_wait_group(n: u32, read: bool) -> Inst {
        let op = if read {
            "cp.async.bulk.wait_group.read"
        } else {
            "cp.async.bulk.wait_group"
        };
        inst(op, vec![], vec![Operand::Imm(n as i64)])
    }

    /// `wgmma.fence.sync.aligned` (§9.7.15.7.1).
    pub fn wgmma_fence() -> Inst {
        inst("wgmma.fence.sync.aligned", vec![], vec![])
    }

    /// `wgmma.commit_group.sync.aligned` (§9.7.15.7.3).
    pub fn wgmma_commit_group() -> Inst {
        inst("wgmma.commit_group.sync.aligned", vec![], vec![])
    }

    /// `wgmma.wait_group.sync.aligned n` (§9.7.15.7.4).
    pub fn wgmma_wait_group(n: u32) -> Inst {
        inst(
            "wgmma.wait_group.sync.aligned",
            vec![],
            vec![Operand::Imm(n as i64)],
        )
    }

    /// `wgmma.mma_async.sync.aligned.m64nNk16.f32.<ab>.<ab> {d}, adesc, bdesc, p, 1, 1, ta, tb`
    /// (§9.7.15.5.2 wgmma.mma_async): A and B from shared-memory descriptors, each K-major
    /// (`imm-trans-a` = `trans_a`, `imm-trans-b` = `trans_b` = 0) or MN-major (1,
    /// §9.7.15.5.1.2: imm-trans-a = 1 reads A M-major, imm-trans-b = 1 reads B N-major — "If
    /// the value of the argument imm-trans-b is 1, then N-major is used for matrix B"; the
    /// transposes exist only for `.f16`/`.bf16`, A's only from shared memory, which the
    /// caller checks), scale-d
    /// predicate `p` (false: D = A·B, true: D += A·B).
    pub fn wgmma_mma_async(
        n: u32,
        ab: &str,
        d: &[Handle<Var>],
        adesc: Handle<Var>,
        bdesc: Handle<Var>,
        p: Handle<Var>,
        (trans_a, trans_b): (u32, u32),
    ) -> Inst {
        inst(
            format!("wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab}"),
            vec![Operand::Vector(d.iter().map(|&v| reg(v)).collect())],
            vec![
                reg(adesc),
                reg(bdesc),
                reg(p),
                Operand::Imm(1),
                Operand::Imm(1),
                Operand::Imm(i64::from(trans_a)),
                Operand::Imm(i64::from(trans_b)),
            ],
        )
    }

    /// The FP8 form `wgmma.mma_async.sync.aligned.m64nNk32.f32.<a>.<b> {d}, adesc, bdesc, p, 1,
    /// 1` (§9.7.15.5.2 wgmma.mma_async, the `.e4m3`/`.e5m2` syntax: `.atype` and `.btype` each
    /// `.e4m3` or `.e5m2`, K = 32, no `imm-trans-a`/`imm-trans-b` operands — both operands are
    /// read K-major, §9.7.15.5.1.2: "matrices A and B are K-major" for the types other than
    /// `.f16`/`.bf16`), scale-d predicate `p`.
    pub fn wgmma_mma_async_fp8(
        n: u32,
        (a, b): (&str, &str),
        d: &[Handle<Var>],
        adesc: Handle<Var>,
        bdesc: Handle<Var>,
        p: Handle<Var>,
    ) -> Inst {
        inst(
            format!("wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{a}.{b}"),
            vec![Operand::Vector(d.iter().map(|&v| reg(v)).collect())],
            vec![
                reg(adesc),
                reg(bdesc),
                reg(p),
                Operand::Imm(1),
                Operand::Imm(1),
            ],
        )
    }

    /// The register-A form `wgmma.mma_async.sync.aligned.m64nNk16.f32.ab.ab {d…}, {a0, a1,
    /// a2, a3}, bdesc, p, 1, 1, tb` (§9.7.15.5.2: A in four `b32` registers of packed 16-bit
    /// pairs; no `imm-trans-a`).
    pub fn wgmma_mma_async_rs(
        n: u32,
        ab: &str,
        d: &[Handle<Var>],
        a: &[Handle<Var>],
        bdesc: Handle<Var>,
        p: Handle<Var>,
        trans_b: u32,
    ) -> Inst {
        inst(
            format!("wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab}"),
            vec![Operand::Vector(d.iter().map(|&v| reg(v)).collect())],
            vec![
                Operand::Vector(a.iter().map(|&v| reg(v)).collect()),
                reg(bdesc),
                reg(p),
                Operand::Imm(1),
                Operand::Imm(1),
                Operand::Imm(i64::from(trans_b)),
            ],
        )
    }

    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 count` (§9.7.19.6 setmaxnreg, sm_90a and sm_100a): all
    /// threads of the warpgroup raise or lower their register count.
    pub fn setmaxnreg(inc: bool, count: u32) -> Inst {
        let op = if inc {
            "setmaxnreg.inc.sync.aligned.u32"
        } else {
            "setmaxnreg.dec.sync.aligned.u32"
        };
        inst(op, vec![], vec![Operand::Imm(count as i64)])
    }

    /// `tcgen05.alloc.cta_group::{1,2}.sync.aligned.shared::cta.b32 [slot], ncols`
    /// (§9.7.16.7.1): the whole warp allocates `ncols` TMEM columns and writes the base
    /// address to `slot`; with `pair` (`cta_group::2`, §9.7.16.5) one warp in each CTA of the
    /// pair does so together and both get the same columns.
    pub fn tcgen05_alloc(slot: Handle<Var>, ncols: u32, pair: bool) -> Inst {
        inst(
            op_group("tcgen05.alloc", pair, ".sync.aligned.shared::cta.b32"),
            vec![],
            vec![mem(slot, 0), Operand::Imm(ncols as i64)],
        )
    }

    /// `tcgen05.relinquish_alloc_permit.cta_group::{1,2}.sync.aligned` (§9.7.16.7.1).
    pub fn tcgen05_relinquish_alloc_permit(pair: bool) -> Inst {
        let op = op_group("tcgen05.relinquish_alloc_permit", pair, ".sync.aligned");
        inst(op, vec![], vec![])
    }

    /// `tcgen05.dealloc.cta_group::{1,2}.sync.aligned.b32 taddr, ncols` (§9.7.16.7.1).
    pub fn tcgen05_dealloc(taddr: Handle<Var>, ncols: u32, pair: bool) -> Inst {
        inst(
            op_group("tcgen05.dealloc", pair, ".sync.aligned.b32"),
            vec![],
            vec![reg(taddr), Operand::Imm(ncols as i64)],
        )
    }

    /// `tcgen05.mma.cta_group::{1,2}.kind::{f16,tf32,f8f6f4} [d], adesc, bdesc, idesc, p`
    /// (§9.7.16.10.9 tcgen05.mma; the kind from the operand types, §9.7.16.10.1): D in TMEM
    /// at `d`; `p` false overwrites D. With `pair` the CTA pair's MMA (§9.7.16.5): the
    /// descriptors address each CTA's half in its own shared memory.
    pub fn tcgen05_mma(
        d: Handle<Var>,
        (adesc, bdesc, idesc): (Handle<Var>, Handle<Var>, Handle<Var>),
        p: Handle<Var>,
        (kind, pair): (crate::encode::tcgen05::Kind, bool),
    ) -> Inst {
        inst(
            op_group("tcgen05.mma", pair, kind.ptx()),
            vec![],
            vec![mem(d, 0), reg(adesc), reg(bdesc), reg(idesc), reg(p)],
        )
    }

    /// `tcgen05.mma.cta_group::1{modifiers} [d], adesc, bdesc, idesc, [sfa], [sfb], p`, the
    /// modifiers `.kind::mxf8f6f4.block_scale.scale_vec::1X` or `.kind::mxf4nvf4.block_scale
    /// .scale_vec::{2X|4X}` (§9.7.16.10.9 tcgen05.mma; §9.7.16.10.7 block scaling): D
    /// (+)= (A·scale_A)(B·scale_B) with 1, 2 or 4 factors per row of A and of B for the
    /// instruction's K (32 for FP8, 64 for FP4), read from tensor memory at `sfa` / `sfb`
    /// from the byte the descriptor's scale-factor data IDs name.
    pub fn tcgen05_mma_block_scale(
        d: Handle<Var>,
        (adesc, bdesc, idesc): (Handle<Var>, Handle<Var>, Handle<Var>),
        (sfa, sfb): (Handle<Var>, Handle<Var>),
        p: Handle<Var>,
        (modifiers, pair): (&str, bool),
    ) -> Inst {
        let group = if pair { 2 } else { 1 };
        inst(
            format!("tcgen05.mma.cta_group::{group}{modifiers}"),
            vec![],
            vec![
                mem(d, 0),
                reg(adesc),
                reg(bdesc),
                reg(idesc),
                mem(sfa, 0),
                mem(sfb, 0),
                reg(p),
            ],
        )
    }

    /// `tcgen05.mma.cta_group::1.kind::f16 [d], [a], bdesc, idesc, p` (§9.7.16.10.9
    /// tcgen05.mma, the `[a-tmem]` form): A read from tensor memory at address `a` (row `m`
    /// in lane `m`, 16-bit elements two to a 32-bit column), B from shared memory.
    /// With `pair`, `tcgen05.mma.cta_group::2`: the CTA pair's MMA, each CTA's A half read
    /// from its own tensor memory at the same address.
    pub fn tcgen05_mma_tmem_a(
        d: Handle<Var>,
        a: Handle<Var>,
        bdesc: Handle<Var>,
        idesc: Handle<Var>,
        (p, pair): (Handle<Var>, bool),
    ) -> Inst {
        inst(
            op_group("tcgen05.mma", pair, ".kind::f16"),
            vec![],
            vec![mem(d, 0), mem(a, 0), reg(bdesc), reg(idesc), reg(p)],
        )
    }

    /// `tcgen05.cp.cta_group::1.128x256b [taddr], sdesc` (§9.7.16.9.2 tcgen05.cp): 128
    /// lanes × 256 bits from the shared-memory matrix `sdesc` describes, row `r` into lane
    /// `r` of the columns from `taddr`; asynchronous, tracked by the thread's next
    /// `tcgen05.commit`.
    pub fn tcgen05_cp_128x256b(taddr: Handle<Var>, sdesc: Handle<Var>, pair: bool) -> Inst {
        let op = if pair {
            "tcgen05.cp.cta_group::2.128x256b"
        } else {
            "tcgen05.cp.cta_group::1.128x256b"
        };
        inst(op, vec![], vec![mem(taddr, 0), reg(sdesc)])
    }

    /// `tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr], sdesc` (§9.7.16.9.2 tcgen05.cp,
    /// §9.7.16.2.3 shapes): 32 lanes × 128 bits from the matrix `sdesc` describes, row `r`
    /// into lane `r` of each of the four 32-lane quarters (the `.warpx4` multicast) at the
    /// columns from `taddr` — how block-scale factors reach every lane partition
    /// (§9.7.16.10.7); asynchronous, tracked by the thread's next `tcgen05.commit`. With
    /// `pair` the `.cta_group::2` form: "copied into the Tensor Memory of both the current and
    /// the peer CTAs" (§9.7.16.9.2), each from its own shared memory at the descriptor's
    /// address (see `dispatch::copy::tcgen05_cp`).
    pub fn tcgen05_cp_32x128b_warpx4(taddr: Handle<Var>, sdesc: Handle<Var>, pair: bool) -> Inst {
        let op = if pair {
            "tcgen05.cp.cta_group::2.32x128b.warpx4"
        } else {
            "tcgen05.cp.cta_group::1.32x128b.warpx4"
        };
        inst(op, vec![], vec![mem(taddr, 0), reg(sdesc)])
    }

    /// `tcgen05.cp.cta_group::N.64x128b.warpx2::02_13 [taddr], sdesc` (§9.7.16.9.2
    /// tcgen05.cp, §9.7.16.2.3 shapes): 64 rows × 128 bits from the matrix `sdesc`
    /// describes, each row written twice — rows 0-31 to the lane quarters of warps 0 and 2,
    /// rows 32-63 to those of warps 1 and 3, so row `r` lands in lanes `r` and `64 + r` — at
    /// the 4 columns from `taddr`: the CTA pair's M = 128 A in tensor memory, which its 2x2
    /// data path reads from both lane halves (§9.7.16.10.5.2). With `pair` the
    /// `.cta_group::2` form, each CTA's TMEM from its own shared memory.
    pub fn tcgen05_cp_64x128b_warpx2(taddr: Handle<Var>, sdesc: Handle<Var>, pair: bool) -> Inst {
        inst(
            op_group("tcgen05.cp", pair, ".64x128b.warpx2::02_13"),
            vec![],
            vec![mem(taddr, 0), reg(sdesc)],
        )
    }

    /// `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar]`
    /// (§9.7.16.10.10 tcgen05.commit): one arrival on `mbar` once all prior async tcgen05
    /// operations of this thread complete.
    pub fn tcgen05_commit(mbar: Handle<Var>) -> Inst {
        inst(
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
            vec![],
            vec![mem(mbar, 0)],
        )
    }

    /// `tcgen05.shift.cta_group::N.down [taddr]` (PTX ISA §9.7.16.9.3 tcgen05.shift): the
    /// 31 rows below `taddr`'s 32-aligned lane, 256 bits each, move down one lane.
    pub fn tcgen05_shift(taddr: Handle<Var>, pair: bool) -> Inst {
        let op = if pair {
            "tcgen05.shift.cta_group::2.down"
        } else {
            "tcgen05.shift.cta_group::1.down"
        };
        inst(op, vec![], vec![mem(taddr, 0)])
    }

    /// `tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster
    /// .b64 [mbar], mask` (§9.7.16.10.10 tcgen05.commit): the pair's MMAs complete, then one
    /// arrival on the mbarrier at `mbar`'s offset in every CTA of the 16-bit `mask`.
    pub fn tcgen05_commit_pair(mbar: Handle<Var>, mask: Handle<Var>) -> Inst {
        inst(
            "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
            vec![],
            vec![mem(mbar, 0), reg(mask)],
        )
    }

    /// `tcgen05.ld.sync.aligned.32x32b.xN.b32 {r…}, [taddr]` (§9.7.16.8.3 tcgen05.ld): each
    /// thread of the warp reads N consecutive 32-bit columns of its lane (lane = warp's
    /// quarter × 32 + lane id).
    pub fn tcgen05_ld_32x32b(regs: &[Handle<Var>], taddr: Handle<Var>) -> Inst {
        Inst::tcgen05_ld(crate::ir::TmemShape::S32x32b, false, regs, taddr, 0)
    }

    /// `tcgen05.ld.sync.aligned.<shape>.xN{.pack::16b}.b32 {r…}, [taddr]{, split}`
    /// (§9.7.16.8.3 tcgen05.ld; the shapes §9.7.16.2.3): N is the registers over the shape's
    /// registers per `.x1`; `split` is `immHalfSplitoff`, written for `16x32bx2` only.
    pub fn tcgen05_ld(
        shape: crate::ir::TmemShape,
        pack: bool,
        regs: &[Handle<Var>],
        taddr: Handle<Var>,
        split: u32,
    ) -> Inst {
        let mut srcs = vec![mem(taddr, 0)];
        if shape == crate::ir::TmemShape::S16x32bx2 {
            srcs.push(Operand::Imm(i64::from(split)));
        }
        inst(
            format!(
                "tcgen05.ld.sync.aligned.{}.x{}{}.b32",
                shape.name(),
                regs.len() as u32 / shape.regs_per_rep(),
                if pack { ".pack::16b" } else { "" }
            ),
            vec![Operand::Vector(regs.iter().map(|&v| reg(v)).collect())],
            srcs,
        )
    }

    /// `tcgen05.st.sync.aligned.<shape>.xN{.unpack::16b}.b32 [taddr]{, split}, {v…}`
    /// (§9.7.16.8.4 tcgen05.st; the shapes §9.7.16.2.3), the store twin of [`Inst::tcgen05_ld`].
    pub fn tcgen05_st(
        shape: crate::ir::TmemShape,
        unpack: bool,
        taddr: Handle<Var>,
        regs: &[Handle<Var>],
        split: u32,
    ) -> Inst {
        let mut srcs = vec![mem(taddr, 0)];
        if shape == crate::ir::TmemShape::S16x32bx2 {
            srcs.push(Operand::Imm(i64::from(split)));
        }
        srcs.push(Operand::Vector(regs.iter().map(|&v| reg(v)).collect()));
        inst(
            format!(
                "tcgen05.st.sync.aligned.{}.x{}{}.b32",
                shape.name(),
                regs.len() as u32 / shape.regs_per_rep(),
                if unpack { ".unpack::16b" } else { "" }
            ),
            vec![],
            srcs,
        )
    }

    /// `tcgen05.wait::ld.sync.aligned` (§9.7.16.8.5 tcgen05.wait).
    pub fn tcgen05_wait_ld() -> Inst {
        inst("tcgen05.wait::ld.sync.aligned", vec![], vec![])
    }

    /// `tcgen05.st.sync.aligned.32x32b.xN.b32 [taddr], {v0 … vN-1}` (§9.7.16.8.4 tcgen05.st:
    /// thread i of the warp writes lane base+i, register j column base+j).
    pub fn tcgen05_st_32x32b(taddr: Handle<Var>, regs: &[Handle<Var>]) -> Inst {
        Inst::tcgen05_st(crate::ir::TmemShape::S32x32b, false, taddr, regs, 0)
    }

    /// `tcgen05.wait::st.sync.aligned` (§9.7.16.8.5 tcgen05.wait): every prior `tcgen05.st`
    /// of the thread is complete.
    pub fn tcgen05_wait_st() -> Inst {
        inst("tcgen05.wait::st.sync.aligned", vec![], vec![])
    }

    /// `tcgen05.fence::before_thread_sync` / `::after_thread_sync` (§9.7.16.6.4 tcgen05
    /// fences): order tcgen05 operations across a thread synchronisation.
    pub fn tcgen05_fence(after: bool) -> Inst {
        let op = if after {
            "tcgen05.fence::after_thread_sync"
        } else {
            "tcgen05.fence::before_thread_sync"
        };
        inst(op, vec![], vec![])
    }

    /// Not an instruction: the note `// tirx.check KIND TENSOR N…` the PTX writer prints as
    /// a comment (§4.2) before the instruction it describes, for the emulator. `gather`: the
    /// next instruction is the `setp` bounding dimension `N` (outermost first) of `tensor`;
    /// `tma`: the next is a TMA load whose coordinates at positions `N…` (as written,
    /// innermost first) are data-dependent. ptxas and the driver ignore it.
    pub fn tirx_check(kind: &str, tensor: &str, ns: &[i64]) -> Inst {
        let mut srcs = vec![Operand::Sym(kind.into()), Operand::Sym(tensor.into())];
        srcs.extend(ns.iter().map(|&n| Operand::Imm(n)));
        inst(TIRX_CHECK, vec![], srcs)
    }

    /// `ld.global.ty d, [addr+off]` (§9.7.9.8 ld): `addr` a 64-bit global address.
    pub fn ld_global(ty: &str, d: Handle<Var>, addr: Handle<Var>, off: i64) -> Inst {
        inst(
            format!("ld.global.{ty}"),
            vec![reg(d)],
            vec![mem(addr, off)],
        )
    }
}
