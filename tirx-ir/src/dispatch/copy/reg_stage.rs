//! `reg_stage` — a wgmma accumulator held in registers into a shared-memory staging tile,
//! converted, laid out for TMA stores.
//!
//! When: `copy(stage, acc)` on sm_90a, run by whole warpgroups; `acc` a `regs::<f32>([R, N])`
//! wgmma fragment (R a multiple of 64, N of the block width W); `stage` a shared tile of shape
//! `[N / W, R, W]` with swizzle B128, where W = 128 bytes / element size: 64 for bf16/f16, 32
//! for f32 — column blocks of 128-byte rows, each one TMA box
//! (`tma::store(d.tile(.., ..), stage[cb])`).
//! Before: `copy @d_s[%wg] <- @acc`
//! After: per thread t of the warpgroup (warp w = t/32, lane l), 16-bit elements: eight
//! row-chunk addresses `base + row(l)·128 + ((j ^ l/4) · 16) + 4·(l%4)`, then for each column
//! pair of the fragment `cvt.rn.bf16x2.f32` (or `.f16x2`) + `st.shared.b32` at that address
//! plus a constant offset (column block, row half, 64-row slice). f32: the pair is 8 bytes,
//! so a 16-byte chunk holds two lanes' pairs: four addresses
//! `base + row(l)·128 + (((2j + (l%4)/2) ^ l/4) · 16) + 8·(l%2)` and `st.shared.v2.f32`, no
//! conversion.
//! Layout: the fragment (PTX ISA §9.7.15.5.1.1, "WGMMA .m64nNk16 register fragment layout
//! for accumulator matrix D") puts columns 8j + 2(l%4) + {0, 1} of row 16w + l/4 (+8) in one
//! thread; in a 128-byte row that pair is 16-byte chunk j % 8 at byte 4(l%4), which the 128B
//! swizzle (PTX ISA §5.5.7) moves to chunk (j % 8) ^ (row % 8) = (j % 8) ^ (l / 4): the eight
//! lanes sharing a row phase write eight different chunks, so the stores are conflict-free.
//! For f32 the pair is chunk 2(j % 4) + (l%4)/2 at byte 8(l%2) of a 32-column block; the same
//! XOR with l/4 spreads the eight rows of a store over all chunks (a warp's 256 bytes take
//! the two wavefronts any 64-bit store needs).
//! The kernel follows with `fence::proxy_async()` and a barrier before the TMA store reads it.
//!
//! Scaled (`copy(stage, acc, alpha = a, beta = b)`, `a`, `b` scalar kernel arguments): each
//! value becomes `a·acc` (`mul.rn.f32`), and with `b` also `+ b·old` (`fma.rn.f32`), `old` read
//! from the same staging address first (`ld.shared.b32` and unpacked — a bf16 is the upper
//! half of an f32, an f16 goes through `cvt.f32.f16` — or `ld.shared.v2.f32`): the kernel puts
//! C there beforehand with TMA loads of the same boxes. The old value is read and added only
//! under the predicate `b != 0` (the bits of `b` without the sign), so with `b = 0` C is never
//! read and may hold anything, NaN included (BLAS's convention). PTX used: §9.7.3.5 mul,
//! §9.7.3.6 fma, §9.7.9.8 ld, §9.7.9.21 cvt.

use crate::abi::AbiParam;
use crate::abi::ElemType;
use crate::arena::Handle;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::inst::reg;
use crate::ir::{
    BinOp, CmpOp, Expr, Inst, Op, Operand as O, ScalarType as T, Scale, Space, Special, TileRef,
    Var,
};
use crate::lower::{Lower, add, mul};

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::RegStage,
    priority: 10,
    applies,
    lower,
};

/// (acc rows, acc cols) and checks of the staging layout.
fn shapes(cx_k: &crate::ir::Kernel, dst: &TileRef, src: &TileRef) -> Result<(u32, u32), Reject> {
    let (_, r, n) = crate::dispatch::mma::accumulator(cx_k, src, Space::Reg)?;
    let TileRef::Buf { buf, index } = dst else {
        return Err(Reject::NotBuffer {
            what: "the destination",
        });
    };
    let b = &cx_k.buffers[*buf];
    if b.space != Space::Shared {
        return Err(Reject::StagingSpace {
            buffer: b.name.clone(),
        });
    }
    let w = block_cols(b.elem);
    let dims = b.layout.shape.get(index.len()..).unwrap_or(&[]);
    if r % 64 != 0 || n % w != 0 {
        return Err(Reject::StagingShape {
            m: r,
            n,
            elem: b.elem,
            block: w,
        });
    }
    if dims != [n / w, r, w] || b.layout.swizzle != crate::abi::Swizzle::B128 {
        return Err(Reject::StagingLayout {
            buffer: b.name.clone(),
            want: [n / w, r, w],
            elem: b.elem,
            dims: dims.to_vec(),
            swizzle: b.layout.swizzle,
        });
    }
    Ok((r, n))
}

/// Columns of one staging block: one 128-byte swizzle row of `elem`.
fn block_cols(elem: ElemType) -> u32 {
    128 / elem.bytes()
}

fn applies(cx: &Cx) -> Result<(), Reject> {
    let Op::Copy {
        dst,
        src,
        bar: None,
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp {
            expected: "a copy without barrier",
        });
    };
    if !cx.k.target().has_wgmma() {
        return Err(Reject::NoWgmmaFragments {
            target: cx.k.target(),
        });
    }
    shapes(cx.k, dst, src)?;
    if !cx.threads.is_whole_warpgroups() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "the fragment is spread over whole warpgroups",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst, src, scale, ..
    } = op
    else {
        return Err(lw.internal("reg_stage on a non-copy"));
    };
    let scaling = scale.as_ref().map(|sc| Scaling::load(lw, sc)).transpose()?;
    let (rows, n) = shapes(lw.k, dst, src).map_err(|e| lw.error(e))?;
    let (TileRef::Buf { buf, index }, TileRef::Buf { buf: acc, .. }) = (dst, src) else {
        unreachable!("checked")
    };
    let elem = lw.k.buffers[*buf].elem;
    let frag = lw
        .frags
        .get(acc)
        .cloned()
        .ok_or_else(|| lw.internal("register fragment not allocated"))?;
    let base = lw.smem_addr(*buf, index)?;
    let t = lw.let_(
        "t",
        T::U32,
        Expr::bin(BinOp::Rem, Expr::Special(Special::TidX), Expr::u32(128)),
    );
    let w = Expr::bin(BinOp::Div, Expr::Var(t), Expr::u32(32));
    let l = Expr::bin(BinOp::Rem, Expr::Var(t), Expr::u32(32));
    let q = lw.let_("q", T::U32, Expr::bin(BinOp::Div, l.clone(), Expr::u32(4)));
    let row = add(mul(w, Expr::u32(16)), Expr::Var(q));
    let stage = Stage {
        frag,
        rows,
        n,
        row_base: add(base, mul(row, Expr::u32(128))),
        lane: l,
        q,
        scaling,
    };
    if elem == ElemType::F32 {
        stage.store_f32(lw);
    } else {
        stage.store_16bit(lw, elem);
    }
    Ok(())
}

/// One warpgroup's staging store: the fragment, its shape, and the thread's row address.
struct Stage {
    frag: Vec<Handle<Var>>,
    /// Accumulator rows (a multiple of 64) and columns.
    rows: u32,
    n: u32,
    /// `base + row(t)·128`: the start of the thread's first row in the tile.
    row_base: Expr,
    /// The lane `l` and its quad `q = l / 4` (the row within an 8-row swizzle atom).
    lane: Expr,
    q: Handle<Var>,
    /// `alpha`, `beta`, when the copy is scaled.
    scaling: Option<Scaling>,
}

/// The scalar factors of a scaled copy, loaded from the kernel parameters.
struct Scaling {
    alpha: Handle<Var>,
    /// `beta` and the predicate `beta != 0`.
    beta: Option<(Handle<Var>, Handle<Var>)>,
}

impl Scaling {
    fn load(lw: &mut Lower, sc: &Scale) -> Result<Scaling, Diagnostics> {
        let alpha = lw.scalar_param(&sc.alpha)?;
        let beta = match &sc.beta {
            None => None,
            Some(name) => {
                let bits = lw.var("beta_bits", T::U32);
                let p = lw.param(AbiParam::Scalar { name: name.clone() });
                lw.inst(Inst::ld_param("b32", bits, &p));
                let b = lw.var(name, T::F32);
                lw.inst(Inst::mov("b32", b, reg(bits)));
                let magnitude = Expr::bin(BinOp::And, Expr::Var(bits), Expr::u32(0x7FFF_FFFF));
                let nonzero = lw.let_(
                    "beta_nonzero",
                    T::Pred,
                    Expr::cmp(CmpOp::Ne, magnitude, Expr::u32(0)),
                );
                Some((b, nonzero))
            }
        };
        Ok(Scaling { alpha, beta })
    }

    /// `alpha·v` for the pair `(lo, hi)`, plus `beta·old` where `beta != 0`, `old` read by
    /// `read` (which returns the two old values as f32 under the predicate it is given).
    fn apply(
        &self,
        lw: &mut Lower,
        lo: Handle<Var>,
        hi: Handle<Var>,
        read: impl FnOnce(&mut Lower, Handle<Var>) -> (Handle<Var>, Handle<Var>),
    ) -> (Handle<Var>, Handle<Var>) {
        let out = [lo, hi].map(|v| {
            let d = lw.var("scaled", T::F32);
            lw.inst(Inst::binary("mul.rn.f32", d, reg(v), reg(self.alpha)));
            d
        });
        if let Some((beta, nonzero)) = self.beta {
            let old = read(lw, nonzero);
            for (d, c) in out.iter().zip([old.0, old.1]) {
                lw.inst(Inst::fma_rn_f32(*d, c, beta, *d).guarded(nonzero, false));
            }
        }
        (out[0], out[1])
    }
}

impl Stage {
    /// The fragment register holding the first column of pair `j` in row half `h` of 64-row
    /// slice `slice`, and the constant byte offset of that slice and half.
    fn pair(&self, slice: u32, h: u32, j: u32) -> (usize, u32) {
        let reg = (slice * (self.n / 2) + 4 * j + 2 * h) as usize;
        (reg, slice * 64 * 128 + h * 8 * 128)
    }

    /// 16-bit elements: `cvt.rn.{bf16,f16}x2.f32` + `st.shared.b32`, 64-column blocks.
    fn store_16bit(&self, lw: &mut Lower, elem: ElemType) {
        let thread_base = lw.let_(
            "stage_row",
            T::U32,
            add(
                self.row_base.clone(),
                mul(
                    Expr::bin(BinOp::Rem, self.lane.clone(), Expr::u32(4)),
                    Expr::u32(4),
                ),
            ),
        );
        let chunk_addr: Vec<_> = (0..8u32)
            .map(|j| {
                let x = Expr::bin(BinOp::Xor, Expr::Var(self.q), Expr::u32(j));
                lw.let_(
                    "stage_addr",
                    T::U32,
                    add(Expr::Var(thread_base), mul(x, Expr::u32(16))),
                )
            })
            .collect();
        for slice in 0..self.rows / 64 {
            for h in 0..2 {
                for j in 0..self.n / 8 {
                    let (f, fixed) = self.pair(slice, h, j);
                    let packed = lw.var("packed", T::U32);
                    let (mut lo, mut hi) = (self.frag[f], self.frag[f + 1]);
                    let off = (j / 8) * self.rows * 128 + fixed;
                    let addr = chunk_addr[(j % 8) as usize];
                    if let Some(sc) = &self.scaling {
                        (lo, hi) =
                            sc.apply(lw, lo, hi, |lw, p| unpack_16bit(lw, elem, addr, off, p));
                    }
                    lw.inst(Inst::cvt_rn_pack(elem.name(), packed, hi, lo));
                    lw.inst(Inst::st_shared("b32", addr, off as i64, reg(packed)));
                }
            }
        }
    }

    /// f32: `st.shared.v2.f32`, no conversion, 32-column blocks. Lane bits: `l % 2` picks the
    /// 8-byte half of a 16-byte chunk, `(l % 4) / 2` the odd chunk of a chunk pair.
    fn store_f32(&self, lw: &mut Lower) {
        let l = &self.lane;
        let lo = lw.let_(
            "stage_row",
            T::U32,
            add(
                self.row_base.clone(),
                mul(Expr::bin(BinOp::Rem, l.clone(), Expr::u32(2)), Expr::u32(8)),
            ),
        );
        let odd = Expr::bin(
            BinOp::Div,
            Expr::bin(BinOp::Rem, l.clone(), Expr::u32(4)),
            Expr::u32(2),
        );
        let chunk_addr: Vec<_> = (0..4u32)
            .map(|jj| {
                let chunk = add(Expr::u32(2 * jj), odd.clone());
                let x = Expr::bin(BinOp::Xor, chunk, Expr::Var(self.q));
                lw.let_(
                    "stage_addr",
                    T::U32,
                    add(Expr::Var(lo), mul(x, Expr::u32(16))),
                )
            })
            .collect();
        for slice in 0..self.rows / 64 {
            for h in 0..2 {
                for j in 0..self.n / 8 {
                    let (f, fixed) = self.pair(slice, h, j);
                    let off = (j / 4) * self.rows * 128 + fixed;
                    let addr = chunk_addr[(j % 4) as usize];
                    let (mut a, mut b) = (self.frag[f], self.frag[f + 1]);
                    if let Some(sc) = &self.scaling {
                        (a, b) = sc.apply(lw, a, b, |lw, p| {
                            let old = [lw.var("old", T::F32), lw.var("old", T::F32)];
                            let ld = Inst::ld_shared_v2_f32(old[0], old[1], addr, off as i64);
                            lw.inst(ld.guarded(p, false));
                            (old[0], old[1])
                        });
                    }
                    lw.inst(Inst::st_shared_v2_f32(addr, off as i64, a, b));
                }
            }
        }
    }
}

/// The two 16-bit values at `[addr + off]` (the first column in the low half), as f32, read
/// under predicate `p`.
fn unpack_16bit(
    lw: &mut Lower,
    elem: ElemType,
    addr: Handle<Var>,
    off: u32,
    p: Handle<Var>,
) -> (Handle<Var>, Handle<Var>) {
    let packed = lw.var("old_packed", T::U32);
    lw.inst(Inst::ld_shared_u32(packed, addr, off as i64).guarded(p, false));
    let (lo, hi) = (lw.var("old", T::F32), lw.var("old", T::F32));
    if elem == ElemType::Bf16 {
        // A bf16 is the upper 16 bits of the f32 of the same value.
        let (lo_bits, hi_bits) = (lw.var("old_bits", T::U32), lw.var("old_bits", T::U32));
        lw.inst(Inst::binary("shl.b32", lo_bits, reg(packed), O::Imm(16)));
        lw.inst(Inst::binary(
            "and.b32",
            hi_bits,
            reg(packed),
            O::Imm(0xFFFF_0000u32 as i32 as i64),
        ));
        lw.inst(Inst::mov("b32", lo, reg(lo_bits)));
        lw.inst(Inst::mov("b32", hi, reg(hi_bits)));
    } else {
        let (lo16, hi16, hi32) = (
            lw.var("old_half", T::B16),
            lw.var("old_half", T::B16),
            lw.var("old_bits", T::U32),
        );
        lw.inst(Inst::cvt("u16.u32", lo16, reg(packed)));
        lw.inst(Inst::binary("shr.u32", hi32, reg(packed), O::Imm(16)));
        lw.inst(Inst::cvt("u16.u32", hi16, reg(hi32)));
        lw.inst(Inst::cvt("f32.f16", lo, reg(lo16)));
        lw.inst(Inst::cvt("f32.f16", hi, reg(hi16)));
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use crate::abi::Swizzle;
    use crate::encode::swizzle::swizzle_offset;

    /// The address the lowering gives thread `t`'s fragment pair `(slice, h, j)` (byte offset
    /// from the staging tile's 1024-aligned base), for element size `bytes`, written as the
    /// lowering builds it.
    fn lowered_addr(bytes: u32, rows: u32, t: u32, slice: u32, h: u32, j: u32) -> u32 {
        let (w, l) = (t / 32, t % 32);
        let q = l / 4;
        let row_base = (16 * w + q) * 128;
        let block_bytes = rows * 128;
        let fixed = slice * 64 * 128 + h * 8 * 128;
        if bytes == 4 {
            let lo = row_base + (l % 2) * 8;
            let chunk = (2 * (j % 4) + (l % 4) / 2) ^ q;
            lo + chunk * 16 + (j / 4) * block_bytes + fixed
        } else {
            let base = row_base + (l % 4) * 4;
            base + ((q ^ (j % 8)) * 16) + (j / 8) * block_bytes + fixed
        }
    }

    /// Where the element (row, col) of the R×N accumulator lies in the staging tile
    /// `[N / W, R, W]` under the 128-byte swizzle.
    fn swizzled(bytes: u32, rows: u32, row: u32, col: u32) -> u32 {
        let w = 128 / bytes;
        let linear = (col / w) * rows * 128 + row * 128 + (col % w) * bytes;
        swizzle_offset(Swizzle::B128, linear)
    }

    #[test]
    fn every_fragment_pair_lands_on_its_swizzled_address() {
        for bytes in [2, 4] {
            let (rows, n) = (64, 128);
            for t in 0..128 {
                let (w, l) = (t / 32, t % 32);
                for slice in 0..rows / 64 {
                    for h in 0..2 {
                        for j in 0..n / 8 {
                            // PTX ISA §9.7.15.5.1.1: the pair's row and first column.
                            let row = 64 * slice + 16 * w + l / 4 + 8 * h;
                            let col = 8 * j + 2 * (l % 4);
                            assert_eq!(
                                lowered_addr(bytes, rows, t, slice, h, j),
                                swizzled(bytes, rows, row, col),
                                "bytes {bytes} thread {t} slice {slice} h {h} j {j}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_warps_f32_stores_spread_over_all_banks() {
        // One st.shared.v2.f32 of warp 0: 32 lanes × 8 bytes = 256 bytes, two wavefronts at
        // best; each bank must be hit exactly twice (once per wavefront).
        for j in 0..16 {
            let mut hits = [0u32; 32];
            for t in 0..32 {
                let a = lowered_addr(4, 64, t, 0, 0, j);
                hits[((a / 4) % 32) as usize] += 1;
                hits[((a / 4 + 1) % 32) as usize] += 1;
            }
            assert!(hits.iter().all(|&h| h == 2), "j {j}: {hits:?}");
        }
    }
}
