//! `exp2_poly3(x)`: `2^x` on the FMA and integer units, no MUFU — a Cody–Waite reduction, a
//! degree-3 minimax polynomial and an exponent built by a shift (the way FlashAttention-4,
//! arXiv 2603.05451, offloads part of its softmax exponentials from MUFU.EX2).
//!
//! Before: `compute @y = (exp2_poly3 @x)`
//! After (per register):
//! ```text
//! max.NaN.f32  c, x, -127.0          // clamp; NaN stays NaN (§9.7.3 max, sm_80+)
//! min.NaN.f32  c, c, 128.0           // (§9.7.3 min)
//! add.rm.f32   t, c, 0f4B40007F      // 1.5·2^23 + 127 + c rounded down: ulp 1, so the low
//!                                    // bits of t are floor(c) + 127 (§9.7.3 add, .rm)
//! sub.f32      n, t, 0f4B40007F      // floor(c), exact (§9.7.3 sub)
//! sub.f32      f, c, n               // f in [0, 1]
//! fma.rn.f32   p, f, C3, C2          // Horner: p = 1 + f·(C1 + f·(C2 + f·C3)) (§9.7.3 fma)
//! fma.rn.f32   p, p, f, C1
//! fma.rn.f32   p, p, f, 1.0
//! mov.b32      tb, t                 // (§9.7.9.1 mov)
//! shl.b32      sb, tb, 23            // (floor(c) + 127) mod 2^9 into the exponent field:
//!                                    // the f32 2^floor(c) (§9.7.8 shl)
//! mov.b32      s, sb
//! mul.rn.f32   y, p, s               // p · 2^n, exact for n in [-126, 127]; `.rn` so that
//!                                    // ptxas never fuses it into a following add (§9.7.3 mul)
//! ```
//!
//! Why a multiply by `2^n` rather than an integer add of `n << 23` into `p`'s bits: the
//! exponent field `n + 127` is 0 at the low clamp and 255 at the high one, so `s` is `+0`
//! (every `x < -126` flushes to 0, as `ex2.approx.ftz` does) or `+inf` (`x ≥ 128`), and a NaN
//! stays NaN through `p` — the add would need two more selects for the same ends. The floor
//! comes from the rounding of one `add.rm` instead of `cvt.rmi`/`cvt.rzi`, which become
//! conversions (FRND/F2I) off the FMA pipe at a fraction of its rate: the point of the
//! function is to stay on the FMA and integer units.
//!
//! The coefficients minimise the maximum relative error of `p(f)` against `2^f` on `[0, 1]`
//! with `p(0) = 1` fixed (so integers are exact powers of two and the clamps give exactly 0 and
//! inf): a Remez exchange in f64, reproduced by the test below, rounded to f32. The fit's
//! error is 8.56e-5 (f32 coefficients: 8.57e-5); `tests/exp2_poly.rs` measures the whole
//! sequence in the emulator.

use crate::arena::Handle;
use crate::inst::reg;
use crate::ir::{Inst, Operand, ScalarType as T, Var};
use crate::lower::Lower;

/// `C1, C2, C3` of `p(f) = 1 + C1·f + C2·f² + C3·f³`, as f32 bits (see the module docs).
pub const EXP2_POLY3: [u32; 3] = [0x3f31_f32c, 0x3e69_1bc5, 0x3d9d_d553];

/// `-127.0`, `128.0`: the clamp (n = -127 gives the exponent field 0, n = 128 gives 255).
const LO: u32 = 0xc2fe_0000;
const HI: u32 = 0x4300_0000;
/// `1.5·2^23 + 127`: adding it puts `c` where the f32 ulp is 1, away from the exponent
/// boundaries for every `c` in the clamp, with the bias already in the low bits.
const SHIFTER: u32 = 0x4b40_007f;
/// `1.0`.
const ONE: u32 = 0x3f80_0000;

fn f32c(bits: u32) -> Operand {
    Operand::F32Bits(bits)
}

/// Emits the sequence of the module docs for the f32 value `x`; returns the result register.
pub fn lower(lw: &mut Lower, x: Operand) -> Handle<Var> {
    let f32v = |lw: &mut Lower| lw.var("v", T::F32);
    let c0 = f32v(lw);
    lw.inst(Inst::binary("max.NaN.f32", c0, x, f32c(LO)));
    let c = f32v(lw);
    lw.inst(Inst::binary("min.NaN.f32", c, reg(c0), f32c(HI)));
    let t = f32v(lw);
    lw.inst(Inst::binary("add.rm.f32", t, reg(c), f32c(SHIFTER)));
    let n = f32v(lw);
    lw.inst(Inst::binary("sub.f32", n, reg(t), f32c(SHIFTER)));
    let f = f32v(lw);
    lw.inst(Inst::binary("sub.f32", f, reg(c), reg(n)));
    let [c1, c2, c3] = EXP2_POLY3;
    let p2 = f32v(lw);
    lw.inst(Inst::fma_f32(p2, reg(f), f32c(c3), f32c(c2)));
    let p1 = f32v(lw);
    lw.inst(Inst::fma_f32(p1, reg(p2), reg(f), f32c(c1)));
    let p = f32v(lw);
    lw.inst(Inst::fma_f32(p, reg(p1), reg(f), f32c(ONE)));
    let tb = lw.var("v", T::U32);
    lw.inst(Inst::mov("b32", tb, reg(t)));
    let sb = lw.var("v", T::U32);
    lw.inst(Inst::binary("shl.b32", sb, reg(tb), Operand::Imm(23)));
    let s = f32v(lw);
    lw.inst(Inst::mov("b32", s, reg(sb)));
    let y = f32v(lw);
    lw.inst(Inst::binary("mul.rn.f32", y, reg(p), reg(s)));
    y
}

#[cfg(test)]
mod tests {
    use super::EXP2_POLY3;

    /// Relative error of `1 + c1·f + c2·f² + c3·f³` against `2^f`.
    fn rel(c: [f64; 3], f: f64) -> f64 {
        (1.0 + f * (c[0] + f * (c[1] + f * c[2]))) * (-f).exp2() - 1.0
    }

    /// Gaussian elimination with partial pivoting of a 4×4 system (augmented).
    fn solve(mut a: [[f64; 5]; 4]) -> [f64; 4] {
        for col in 0..4 {
            let piv = (col..4)
                .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
                .expect("rows");
            a.swap(col, piv);
            let pivot = a[col];
            for (r, row) in a.iter_mut().enumerate() {
                if r != col {
                    let k = row[col] / pivot[col];
                    for (x, p) in row.iter_mut().zip(pivot).skip(col) {
                        *x -= k * p;
                    }
                }
            }
        }
        std::array::from_fn(|i| a[i][4] / a[i][i])
    }

    const GRID: u32 = 100_000;

    /// The alternating extrema of the error on a grid of (0, 1], one per sign run.
    fn extrema(c: [f64; 3]) -> Vec<(f64, f64)> {
        let mut ext: Vec<(f64, f64)> = Vec::new();
        for k in 1..=GRID {
            let f = f64::from(k) / f64::from(GRID);
            let e = rel(c, f);
            match ext.last_mut() {
                Some(l) if l.1.signum() == e.signum() => {
                    if e.abs() > l.1.abs() {
                        *l = (f, e);
                    }
                }
                _ => ext.push((f, e)),
            }
        }
        ext
    }

    /// The Remez exchange: at four reference points the error equioscillates,
    /// `rel(c, f_i) = (-1)^i E`, a linear system in (C1, C2, C3, E); the points move to the
    /// error's extrema until they stop moving. Returns the coefficients and the max error.
    fn remez() -> ([f64; 3], f64) {
        let mut refs = [0.1, 0.4, 0.75, 1.0];
        let mut c = [0.0; 3];
        for _ in 0..20 {
            let rows = std::array::from_fn(|i| {
                let f: f64 = refs[i];
                let w = (-f).exp2();
                let sign = if i % 2 == 0 { -1.0 } else { 1.0 };
                [f * w, f * f * w, f * f * f * w, sign, 1.0 - w]
            });
            let s = solve(rows);
            c = [s[0], s[1], s[2]];
            let ext = extrema(c);
            assert_eq!(
                ext.len(),
                4,
                "a degree-3 fit with p(0) fixed equioscillates 4 times"
            );
            refs = std::array::from_fn(|i| ext[i].0);
        }
        let max = extrema(c).iter().map(|e| e.1.abs()).fold(0.0, f64::max);
        (c, max)
    }

    #[test]
    fn the_coefficients_are_the_remez_fit_rounded_to_f32() {
        let (c, max) = remez();
        for (k, (fit, bits)) in c.iter().zip(EXP2_POLY3).enumerate() {
            assert_eq!((*fit as f32).to_bits(), bits, "C{}: fit {fit}", k + 1);
        }
        assert!((8.55e-5..8.57e-5).contains(&max), "fit error {max:e}");
        // Rounding the coefficients to f32 costs little.
        let c32 = EXP2_POLY3.map(|b| f64::from(f32::from_bits(b)));
        let max32 = extrema(c32).iter().map(|e| e.1.abs()).fold(0.0, f64::max);
        assert!(max32 < 8.57e-5, "f32 coefficients: {max32:e}");
    }
}
