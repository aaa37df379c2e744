//! `exp2_poly3` (docs/language.md §9, `tirx-ir/src/regtile/exp2_poly.rs`) measured for what it
//! is: a kernel computes `y1 = exp2_poly3(x)` and `y2 = exp2_approx(x)` elementwise over an
//! f32 tensor that sweeps the whole input range, and the emulator runs it; `gpu_exp2_poly`
//! runs the same kernel on the H200 and checks the same bounds.
//!
//! Bounds. The polynomial's fit (a Remez exchange, `p(0) = 1` fixed) has a maximum relative
//! error of 8.56e-5 on `[0, 1)`, 8.57e-5 with the coefficients rounded to f32. The rest of the
//! sequence is exact (the floor by `add.rm`, `f = x − n` but for negative `x` near 0, the
//! multiply by `2^n`) or one rounding of each of the three FMAs (≤ 2⁻²⁴ each), so the whole
//! function is within [`BOUND`] = 8.7e-5 of `2^x` for every `x` in `[−126, 128)` (the
//! result is normal there). FlashAttention-4's published coefficients measure 8.76e-5 (f64,
//! on a grid of [0, 1]), so the bound would catch a fit that is merely close. Against
//! `ex2.approx` (exactly rounded in the emulator, within 2 ulp on the GPU, §9.7.3 `ex2`) the
//! same bound holds. Ends: `x < −126` (−inf included) gives +0 as `ex2.approx.ftz` does,
//! `x ≥ 128` (+inf included) gives +inf, NaN gives NaN; integers give exact powers of two
//! and the function is monotone (it never decreases along the sweep).
//!
//! The SASS check (sm_90a and sm_100a): a kernel using only `exp2_poly3` has FFMA and no
//! MUFU at all, no FRND or F2I (the reduction stays on the FMA units), and no spills.

use tirx::prelude::*;
use tirx::runtime::{ElemType, TensorMeta};
use tirx_kernels::check::check_artifact;
use tirx_kernels::simulate::put;
use tirx_ptx::tools::{find_ptxas, tool_for_test};
use tirx_sim::Device;

use super::sim_exec::{report, sim_launch};

/// `y1 = exp2_poly3(x)`, `y2 = exp2_approx(x)`, elementwise over 64×64 tiles.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn exp2_both(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M, N)] y1: Tensor<f32>,
    #[shape(M, N)] y2: Tensor<f32>,
) {
    let t = regs::<f32>([64, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.y, cta.x));
    copy(y1.tile(cta.y, cta.x), exp2_poly3(t));
    copy(y2.tile(cta.y, cta.x), exp2_approx(t));
}

/// `y = exp2_poly3(x)` alone, for the SASS check, on Hopper and Blackwell.
#[tile_kernel(
    targets(sm_90a, sm_100a),
    threads = 128,
    grid = (cdiv(N, 64), cdiv(M, 64))
)]
pub fn exp2_poly_only(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([64, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.y, cta.x));
    copy(y.tile(cta.y, cta.x), exp2_poly3(t));
}

/// The maximum relative error the fit justifies (see the module docs).
pub(crate) const BOUND: f64 = 8.7e-5;

/// The input tensor's shape.
pub(crate) const SHAPE: [usize; 2] = [256, 1024];

/// The inputs: an ascending sweep of [−127.5, 128.4] in steps of 2⁻¹⁰ (every integer,
/// the error's extrema to ~1e-3 of `f`), then the special values
/// (infinities, NaN, zeros, subnormals, the clamp edges and their f32 neighbours, huge
/// values) padding the last row.
pub(crate) fn inputs() -> Vec<f32> {
    let n = SHAPE[0] * SHAPE[1];
    let special = specials();
    let sweep = n - special.len();
    // Exact: every step is representable, so each integer and half is hit.
    let mut x: Vec<f32> = (0..sweep).map(|i| -127.5 + i as f32 / 1024.0).collect();
    x.extend(special);
    x
}

fn specials() -> Vec<f32> {
    let next_down = |v: f32| {
        if v > 0.0 {
            f32::from_bits(v.to_bits() - 1)
        } else {
            f32::from_bits(v.to_bits() + 1)
        }
    };
    let mut v = vec![
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::NAN,
        0.0,
        -0.0,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        -1e-30,
        1e-30,
        -126.0,
        next_down(-126.0),
        -127.0,
        next_down(-127.0),
        -128.0,
        -1000.0,
        -1e30,
        f32::MIN,
        127.0,
        next_down(128.0),
        128.0,
        128.5,
        1e30,
        f32::MAX,
        next_down(1.0),
        next_down(-0.5),
        -f32::EPSILON,
    ];
    v.resize(64, 0.5);
    v
}

/// The largest relative errors of one run, over the inputs whose `2^x` is a normal f32.
#[derive(Debug, Default)]
pub(crate) struct Errors {
    /// `exp2_poly3` against f64 `2^x`.
    pub poly_vs_exact: f64,
    /// `exp2_poly3` against the run's `ex2.approx`.
    pub poly_vs_approx: f64,
    /// `ex2.approx` against f64 `2^x`.
    pub approx_vs_exact: f64,
}

/// Checks `y1 = exp2_poly3(x)` and `y2 = exp2_approx(x)` against the module docs' bounds and
/// end values; returns the errors, or the first input that breaks a rule.
pub(crate) fn measure(x: &[f32], y1: &[f32], y2: &[f32]) -> Result<Errors, String> {
    let mut e = Errors::default();
    let rel = |got: f32, want: f64| (f64::from(got) - want).abs() / want;
    let mut last = (f32::NEG_INFINITY, 0.0f32);
    for ((&x, &p), &a) in x.iter().zip(y1).zip(y2) {
        let want = f64::from(x).exp2();
        let fail = |what: &str| Err(format!("x = {x:e} ({:#010x}): {what}", x.to_bits()));
        if x.is_nan() {
            if !p.is_nan() {
                return fail(&format!("exp2_poly3 gave {p:e}, not NaN"));
            }
            continue;
        }
        if x < -126.0 {
            if p.to_bits() != 0 {
                return fail(&format!("exp2_poly3 gave {p:e}, not +0"));
            }
        } else if x >= 128.0 {
            if p != f32::INFINITY {
                return fail(&format!("exp2_poly3 gave {p:e}, not +inf"));
            }
        } else {
            let r = rel(p, want);
            if r.is_nan() || r > BOUND {
                return fail(&format!(
                    "exp2_poly3 gave {p:e}, rel. error {r:.3e} > {BOUND:e}"
                ));
            }
            if x == x.trunc() && f64::from(p) != want {
                return fail(&format!("exp2_poly3 of an integer gave {p:e}"));
            }
            e.poly_vs_exact = e.poly_vs_exact.max(r);
            if f64::from(a) >= f64::from(f32::MIN_POSITIVE) && a.is_finite() {
                e.poly_vs_approx = e.poly_vs_approx.max(rel(p, f64::from(a)));
                e.approx_vs_exact = e.approx_vs_exact.max(rel(a, want));
            }
        }
        if x > last.0 && p < last.1 {
            return fail(&format!(
                "not monotone: {p:e} after {:e} at {:e}",
                last.1, last.0
            ));
        }
        if x >= last.0 {
            last = (x, p);
        }
    }
    if e.poly_vs_approx > BOUND {
        return Err(format!(
            "exp2_poly3 against ex2.approx: {:.3e} > {BOUND:e}",
            e.poly_vs_approx
        ));
    }
    Ok(e)
}

fn f32_tensor(dev: &mut Device, v: &[f32]) -> TensorMeta {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    put(dev, &bytes, ElemType::F32, &SHAPE)
}

fn read_f32(dev: &Device, t: &TensorMeta) -> Vec<f32> {
    let n: usize = t.shape.iter().product();
    dev.read(t.addr, n * 4)
        .expect("the tensor's own allocation")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn exp2_poly3_is_within_its_fit_over_the_whole_range_in_the_emulator() {
    let x = inputs();
    let mut dev = Device::new();
    let tx = f32_tensor(&mut dev, &x);
    let poison = vec![f32::from_bits(0x7fbf_ffff); x.len()];
    let (t1, t2) = (f32_tensor(&mut dev, &poison), f32_tensor(&mut dev, &poison));
    let art = &exp2_both::KERNEL.artifacts[0];
    let stats = sim_launch(art, &mut dev, &[tx, t1.clone(), t2.clone()], &[], 1)
        .unwrap_or_else(|e| panic!("exp2_both: {e}"));
    report("exp2_both", &[stats]);
    let (y1, y2) = (read_f32(&dev, &t1), read_f32(&dev, &t2));
    let e = measure(&x, &y1, &y2).unwrap_or_else(|m| panic!("{m}"));
    println!(
        "exp2_poly3 max relative error over [-126, 128): {:.4e} against 2^x (f64), {:.4e} \
         against ex2.approx; ex2.approx against 2^x: {:.4e}",
        e.poly_vs_exact, e.poly_vs_approx, e.approx_vs_exact
    );
    // The sweep reaches the fit's extrema: the measured error is the fit's, not less.
    assert!(e.poly_vs_exact > 8.5e-5, "{e:?}");
}

#[test]
fn exp2_poly3_lowers_to_fma_units_only() {
    assert_eq!(exp2_poly_only::KERNEL.artifacts.len(), 2);
    let ptx = exp2_poly_only::KERNEL.artifacts[0].ptx;
    for want in [
        "max.NaN.f32",
        "min.NaN.f32",
        "add.rm.f32",
        "fma.rn.f32",
        "shl.b32",
        "mul.rn.f32",
    ] {
        assert!(ptx.contains(want), "no `{want}` in\n{ptx}");
    }
    for not in ["ex2.approx", "cvt.rmi", "cvt.rzi", "cvt.rni"] {
        assert!(!ptx.contains(not), "`{not}` in\n{ptx}");
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for a in exp2_poly_only::KERNEL.artifacts {
        let c = check_artifact(exp2_poly_only::KERNEL.name, a).expect("assembles");
        println!(
            "exp2_poly_only ({}): {} registers, {} spill bytes, SASS {:?}",
            c.target, c.registers, c.spills, c.sass
        );
        assert!(c.problems.is_empty(), "{}: {:?}", c.target, c.problems);
        assert_eq!(c.spills, 0, "{}", c.target);
        assert!(
            c.sass.contains_key("FFMA"),
            "{}: {:?}",
            c.target,
            c.sass.keys()
        );
        for not in ["MUFU", "MUFU.EX2", "FRND", "F2I"] {
            assert!(
                !c.sass.contains_key(not),
                "{}: {not} in {:?}",
                c.target,
                c.sass.keys()
            );
        }
    }
    // The function that does use MUFU, for contrast.
    let both =
        check_artifact(exp2_both::KERNEL.name, &exp2_both::KERNEL.artifacts[0]).expect("assembles");
    assert!(both.sass.contains_key("MUFU.EX2"), "{:?}", both.sass.keys());
}

/// FA4's split of the exponentials: a thread-per-row tile (`blocked(vec = 64)`: each of the
/// 64 threads holds one whole row of 64 columns) sends columns 48.. to `exp2_poly3` and the
/// rest to `exp2_approx` with a `select` on the column index, which the build decides per
/// register (every thread holds the same columns), so each side is computed only for its own
/// columns.
#[tile_kernel(target = sm_90a, threads = 64, grid = (1, cdiv(M, 64)))]
pub fn exp2_split(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([64, 64], layout = blocked(vec = 64));
    copy(t, x.tile(cta.y, 0));
    copy(
        y.tile(cta.y, 0),
        select(col_index(t) < 48, exp2_approx(t), exp2_poly3(t)),
    );
}

#[test]
fn a_select_on_a_known_column_computes_one_side_per_column() {
    let ptx = exp2_split::KERNEL.artifacts[0].ptx;
    // 48 columns on MUFU, 16 through the polynomial (one `add.rm` floor each), no `selp`.
    assert_eq!(ptx.matches("ex2.approx").count(), 48, "{ptx}");
    assert_eq!(ptx.matches("add.rm.f32").count(), 16, "{ptx}");
    assert!(!ptx.contains("selp"), "{ptx}");
    let (m, n) = (128usize, 64usize);
    let x: Vec<f32> = (0..m * n).map(|i| (i % 997) as f32 / 50.0 - 9.0).collect();
    let mut dev = Device::new();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let tx = put(&mut dev, &bytes(&x), ElemType::F32, &[m, n]);
    let ty = put(
        &mut dev,
        &bytes(&vec![f32::NAN; m * n]),
        ElemType::F32,
        &[m, n],
    );
    let art = &exp2_split::KERNEL.artifacts[0];
    sim_launch(art, &mut dev, &[tx, ty.clone()], &[], 1).unwrap_or_else(|e| panic!("{e}"));
    let y: Vec<f32> = dev
        .read(ty.addr, m * n * 4)
        .expect("the tensor's own allocation")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (i, (&xi, &yi)) in x.iter().zip(&y).enumerate() {
        let want = 2f64.powf(f64::from(xi));
        let rel = (f64::from(yi) - want).abs() / want;
        assert!(rel <= BOUND, "element {i}: 2^{xi} = {yi}, want {want}");
    }
}
