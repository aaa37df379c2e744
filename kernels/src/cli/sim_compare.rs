//! `tirx sim-compare --gpu DIR [--case SUBSTR]`: regenerate every case's inputs, run the
//! emulator, and compare its output with the GPU's from `tirx sim-dump` (issue #10,
//! validation step 1). No GPU needed. Prints a Markdown table; exits nonzero on any failure
//! (a case missing from the dump, a dump made from other PTX or other inputs, a GPU or
//! emulator error, or a difference over its bound).
//!
//! What is comparable, per kind ([`Rule`]):
//! - **Copies: bit-exact.** Nothing is computed.
//! - **Row kernels and `silu_mul`: at most 1 bf16 ulp apart.** Both sides run the same PTX
//!   instructions in the same order (the reductions' shuffle trees are in the PTX), so the
//!   f32 values before the final `cvt.rn.bf16` differ only by (a) the `.approx` functions —
//!   the emulator rounds the exact function once, the GPU's MUFU is within the ISA's stated
//!   error (PTX ISA §9.7.3: `ex2.approx.f32` 2 ulp, `rcp.approx.f32` 1 ulp, `rsqrt.approx.f32`
//!   relative 2⁻²²·⁹) — and (b) `add.f32`/`mul.f32` without a rounding modifier, which ptxas
//!   may contract into an `fma` (§9.7.3.1), each worth ≤ 1 f32 ulp. A row's result is a few
//!   such factors deep, so the two f32 values are within ~2⁻²⁰ relative, far below a bf16
//!   ulp (2⁻⁸ relative): rounded to bf16 they are equal or adjacent. Where the result
//!   cancels (LayerNorm's `·w + b` near zero) the ulp is taken at the row's cancellation
//!   floor `2⁻³·rms` (the floor of `rows::reference::check`) instead of at the tiny value.
//!   The metric is `|gpu − emu| / ulp_bf16(max(|emu|, floor))`; the bound is 1.
//! - **GEMMs: within twice the accumulation-order bound.** `tests/sim_gemm.rs` bounds each
//!   side's distance from the exact f64 value `w` by `acc = (K + 2)·2⁻²³·(|α|·Σ|a·b| + |β·c|)`
//!   (f32 accumulation in any order, each addition's error ≤ 2⁻²³ of the running magnitude
//!   even with a truncating adder, plus α/β) plus half an ulp of D's type at `|w| + acc`; two
//!   results each within that of `w` are within twice it of each other. Bias + activation
//!   epilogues widen `acc` as sim_gemm does (slope ≤ 1.2, 4 f32 ulps for the activation);
//!   GELU adds `2⁻¹¹·|x|` for the GPU's `tanh.approx.f32` (relative error 2⁻¹⁰·⁹⁸⁷, times
//!   `0.5·|x|`), which the emulator computes exactly; a residual adds one f32 rounding of the
//!   sum. The metric is `|gpu − emu| / bound`;
//!   the bound is 1. The table also gives each side's worst distance from `w` in units of
//!   its own one-sided bound.

use super::sim_cases::{
    CaseData, Fnv, cases, decode, fp8_block_scales, fp8_scale, gemm_scale, inputs,
};
use super::sim_dump::{Entry, Manifest, hex};
use half::bf16;
use tirx::KernelArtifact;
use tirx::problem::{Epilogue, GemmProblem, Problem};
use tirx::runtime::{DeviceLimits, ElemType, TensorMeta};
use tirx_kernels::rows::reference::FLOOR;
use tirx_sim::{Device, Stats};

/// `tirx sim-compare`'s arguments.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// The folder `tirx sim-dump --out` wrote.
    #[arg(long)]
    gpu: std::path::PathBuf,
    /// Only the cases whose label contains this (repeatable).
    #[arg(long = "case")]
    only: Vec<String>,
}

/// How one case is judged (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// Bit-exact.
    Exact,
    /// bf16 rows of `cols`: ≤ 1 ulp at max(|emu|, 2⁻³·rms of the row).
    Ulp {
        /// Row length.
        cols: usize,
    },
    /// A GEMM: per element ≤ the given two-sided bound.
    Gemm,
    /// Attention: per element |gpu − emu| ≤ this (each side is within half of it of the f64
    /// reference, `tests/sim_attention.rs` and `tests/gpu_attention.rs`; the exp2 of the
    /// hardware and of the emulator may differ in the last bits, and P is rounded to 16 bits
    /// after them).
    Abs(f64),
}

/// A comparison's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Elements with identical bits.
    pub identical: usize,
    /// Elements compared.
    pub total: usize,
    /// The worst metric (mismatching elements for `Exact`; ulps; fraction of the bound).
    pub worst: f64,
    /// The bound on `worst`.
    pub bound: f64,
    /// Where the worst is and what it was, for the table.
    pub note: String,
}

impl Outcome {
    /// Whether the comparison passed.
    pub fn ok(&self) -> bool {
        self.worst <= self.bound
    }
}

/// Bit-exact: the count of differing elements of `width` bytes must be 0.
pub fn compare_exact(gpu: &[u8], emu: &[u8], width: usize) -> Outcome {
    let pairs = gpu.chunks(width).zip(emu.chunks(width));
    let total = gpu.len().max(emu.len()) / width.max(1);
    let first = pairs.clone().position(|(g, e)| g != e);
    let identical = pairs.filter(|(g, e)| g == e).count();
    Outcome {
        identical,
        total,
        worst: (total - identical) as f64,
        bound: 0.0,
        note: first.map_or(String::new(), |i| {
            format!("first difference at element {i}")
        }),
    }
}

/// One bf16 ulp at `v` (the spacing of bf16 values in `v`'s binade).
pub fn bf16_ulp(v: f64) -> f64 {
    let v = v.abs().max(f64::from(f32::MIN_POSITIVE));
    let exp = v.log2().floor();
    (exp - 7.0).exp2()
}

/// Rows of `cols` bf16 values: the worst `|g − e| / ulp(max(|e|, 2⁻³·rms(e row)))`.
pub fn compare_ulp(gpu: &[bf16], emu: &[bf16], cols: usize) -> Outcome {
    let cols = cols.max(1);
    let (mut worst, mut at, mut identical) = (0.0f64, String::new(), 0);
    for (r, (g, e)) in gpu.chunks(cols).zip(emu.chunks(cols)).enumerate() {
        let rms = (e.iter().map(|v| v.to_f64().powi(2)).sum::<f64>() / e.len() as f64).sqrt();
        for (c, (g, e)) in g.iter().zip(e).enumerate() {
            identical += usize::from(g.to_bits() == e.to_bits());
            let (gf, ef) = (g.to_f64(), e.to_f64());
            let d = if g.to_bits() == e.to_bits() {
                0.0
            } else if gf.is_finite() && ef.is_finite() {
                (gf - ef).abs() / bf16_ulp(ef.abs().max(FLOOR * rms))
            } else {
                f64::INFINITY
            };
            if d > worst {
                worst = d;
                at = format!("({r}, {c}): gpu {gf} emu {ef}");
            }
        }
    }
    Outcome {
        identical,
        total: gpu.len().min(emu.len()),
        worst,
        bound: 1.0,
        note: at,
    }
}

/// GEMM outputs with per-element two-sided bounds: the worst `|g − e| / bound`.
pub fn compare_bounded(gpu: &[f64], emu: &[f64], bounds: &[f64], cols: usize) -> Outcome {
    let (mut worst, mut at, mut identical) = (0.0f64, String::new(), 0);
    for (i, ((&g, &e), &b)) in gpu.iter().zip(emu).zip(bounds).enumerate() {
        identical += usize::from(g.to_bits() == e.to_bits());
        let d = if g == e {
            0.0
        } else if g.is_finite() && e.is_finite() {
            (g - e).abs() / b
        } else {
            f64::INFINITY
        };
        if d > worst {
            worst = d;
            at = format!(
                "({}, {}): gpu {g} emu {e}",
                i / cols.max(1),
                i % cols.max(1)
            );
        }
    }
    Outcome {
        identical,
        total: gpu.len().min(emu.len()),
        worst,
        bound: 1.0,
        note: at,
    }
}

/// The exact result `w` and each side's one-sided bound, per element of a GEMM case, and
/// the GPU's extra allowance (GELU's `tanh.approx`).
struct GemmBounds {
    exact: Vec<f64>,
    side: Vec<f64>,
    gpu_extra: Vec<f64>,
}

fn gemm_bounds(
    art: &KernelArtifact,
    data: &CaseData,
    (m, n, kk): (usize, usize, usize),
) -> Result<GemmBounds, String> {
    let Some(Problem::Gemm(GemmProblem { epilogue, .. })) = art.problem else {
        return Err("not a GEMM".into());
    };
    let nn = tirx_kernels::simulate::b_is_k_by_n(art);
    let values = |name: &str| data.input(name).map(|t| decode(&t.bytes, t.elem));
    let (Some(a), Some(b)) = (values("a"), values("b")) else {
        return Err("a GEMM without a or b".into());
    };
    let c = values("c");
    let bias = values("bias");
    let fp8 = data.input("a").is_some_and(|t| t.elem.is_fp8());
    let (alpha, beta) = gemm_scale(epilogue);
    let act = match epilogue {
        Epilogue::Bias(act) | Epilogue::BiasResidual(act) => Some(act),
        _ => None,
    };
    let res = values("res").filter(|_| matches!(epilogue, Epilogue::BiasResidual(_)));
    let half_ulp = match data.out().elem {
        ElemType::Bf16 => 1.0 / 256.0,
        ElemType::F16 => 1.0 / 2048.0,
        ElemType::F32 => 1.0 / 16_777_216.0,
        ElemType::E4m3 => 1.0 / 16.0,
        ElemType::E5m2 => 1.0 / 8.0,
        // No GEMM of the families takes scale factors or FP6/FP4 as its output type.
        ElemType::Ue8m0
        | ElemType::Ue4m3
        | ElemType::E2m1x2
        | ElemType::E3m2
        | ElemType::E2m3
        | ElemType::E2m1 => 1.0,
        // Nor integers: an exact integer result would compare with no slack.
        ElemType::I32 | ElemType::U32 | ElemType::I8 | ElemType::U8 => 0.0,
        ElemType::I64 | ElemType::U64 => 0.0,
    };
    // Split-K's first launch: plane z of `w` holds the product over the z-th slice of K's
    // tiles (`⌊z·T/S⌋ … ⌊(z+1)·T/S⌋`, T = ⌈K/BK⌉, the kernel's split); other GEMMs: one plane, all of K.
    let planes: Vec<(usize, usize)> = if epilogue == Epilogue::Partial {
        let s = data.out().shape[0];
        let bk = art.int("BK").ok_or("a split-K GEMM without BK")? as usize;
        let t = kk.div_ceil(bk);
        (0..s)
            .map(|z| ((z * t / s * bk).min(kk), ((z + 1) * t / s * bk).min(kk)))
            .collect()
    } else {
        vec![(0, kk)]
    };
    let mut g = GemmBounds {
        exact: Vec::with_capacity(planes.len() * m * n),
        side: Vec::with_capacity(planes.len() * m * n),
        gpu_extra: Vec::with_capacity(planes.len() * m * n),
    };
    // A transposed partial's planes are N×M (`split::is_transposed`): element (i, j) of the
    // product at j·M + i.
    let order: Vec<(usize, usize)> =
        if epilogue == Epilogue::Partial && tirx_kernels::gemm::split::is_transposed(art) {
            (0..n).flat_map(|j| (0..m).map(move |i| (i, j))).collect()
        } else {
            (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
        };
    // Block scales (`ScaleBlocks`, TN): the reference per K block, the promotion's roundings
    // in the f32 bound (`fp8_ref::block_check_k`).
    if let Some(scales) = fp8_block_scales(art, data) {
        for &(i, j) in &order {
            let (w, scale) =
                scales.element(&a[i * kk..(i + 1) * kk], &b[j * kk..(j + 1) * kk], i, j);
            let acc = (scales.check_k(kk) as f64 + 2.0) * scale / 8_388_608.0;
            g.exact.push(w);
            g.side.push((w.abs() + acc) * half_ulp + acc + 1e-30);
            g.gpu_extra
                .push(scale * tirx_kernels::gemm::fp8_ref::accumulation_bound(kk, false));
        }
        return Ok(g);
    }
    for &(k_lo, k_hi) in &planes {
        for &(i, j) in &order {
            {
                let (mut dot, mut mag) = (0.0, 0.0);
                for p in k_lo..k_hi {
                    let bv = if nn { b[p * n + j] } else { b[j * kk + p] };
                    dot += a[i * kk + p] * bv;
                    mag += (a[i * kk + p] * bv).abs();
                }
                let cv = match (&c, epilogue) {
                    (Some(c), Epilogue::Scaled) => c[i * n + j],
                    _ => 0.0,
                };
                // The FP8 GEMMs' scale of this element (1 for the others), and the GPU's FP8
                // accumulation (about 14 bits kept: `fp8_ref::accumulation_bound`).
                let s8 = fp8_scale(art, data, i, j);
                let mut w = s8 * (f64::from(alpha) * dot + f64::from(beta) * cv);
                let scale =
                    s8.abs() * (f64::from(alpha.abs()) * mag + (f64::from(beta) * cv).abs());
                let mut acc = (kk as f64 + 2.0) * scale / 8_388_608.0;
                let mut extra = if fp8 {
                    scale * tirx_kernels::gemm::fp8_ref::accumulation_bound(kk, false)
                } else {
                    0.0
                };
                if let Some(act) = act {
                    let b = bias.as_ref().map_or(0.0, |bv| bv[j]);
                    (w, acc, extra) = tirx_kernels::simulate::bias_act_bound(act, w, b, acc);
                }
                if let Some(r) = &res {
                    // R added in f32 after the activation: one more f32 rounding.
                    acc += (w.abs() + r[i * n + j].abs()) / 8_388_608.0;
                    w += r[i * n + j];
                }
                g.exact.push(w);
                g.side.push((w.abs() + acc) * half_ulp + acc + 1e-30);
                g.gpu_extra.push(extra);
            }
        }
    }
    Ok(g)
}

/// The rule a case is judged by.
pub fn rule(art: &KernelArtifact, cols: usize) -> Rule {
    match art.problem {
        Some(Problem::Gemm(_)) => Rule::Gemm,
        Some(Problem::Row(_)) | Some(Problem::SiluMul) => Rule::Ulp { cols },
        Some(Problem::Attention) => Rule::Abs(4e-2),
        _ => Rule::Exact,
    }
}

/// Judges one case's outputs (raw bytes of the output tensor).
fn judge(
    art: &KernelArtifact,
    data: &CaseData,
    shape: (usize, usize, usize),
    gpu: &[u8],
    emu: &[u8],
) -> Result<Outcome, String> {
    let elem = data.out().elem;
    let bf16s = |b: &[u8]| -> Vec<bf16> {
        b.chunks_exact(2)
            .map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])))
            .collect()
    };
    Ok(match rule(art, shape.1) {
        Rule::Exact => compare_exact(gpu, emu, elem.bytes() as usize),
        Rule::Ulp { cols } if elem == ElemType::Bf16 => compare_ulp(&bf16s(gpu), &bf16s(emu), cols),
        Rule::Ulp { .. } => return Err(format!("a {} row output", elem.name())),
        Rule::Abs(tol) => {
            let (gv, ev) = (decode(gpu, elem), decode(emu, elem));
            compare_bounded(&gv, &ev, &vec![tol; gv.len()], shape.1)
        }
        Rule::Gemm => {
            let gb = gemm_bounds(art, data, shape)?;
            let (gv, ev) = (decode(gpu, elem), decode(emu, elem));
            let two: Vec<f64> = gb
                .side
                .iter()
                .zip(&gb.gpu_extra)
                .map(|(s, x)| 2.0 * s + x)
                .collect();
            let mut o = compare_bounded(&gv, &ev, &two, shape.1);
            let worst_vs = |v: &[f64], extra: bool| {
                v.iter()
                    .zip(&gb.exact)
                    .zip(gb.side.iter().zip(&gb.gpu_extra))
                    .map(|((g, w), (s, x))| (g - w).abs() / (s + if extra { *x } else { 0.0 }))
                    .fold(
                        0.0f64,
                        |a, d| if d.is_nan() { f64::INFINITY } else { a.max(d) },
                    )
            };
            o.note = format!(
                "vs exact: gpu {:.3}, emu {:.3} of one side's bound{}",
                worst_vs(&gv, true),
                worst_vs(&ev, false),
                if o.note.is_empty() {
                    String::new()
                } else {
                    format!("; worst {}", o.note)
                }
            );
            o
        }
    })
}

/// Runs one case in the emulator, planned for a device of `limits`: the output's bytes.
pub fn emulate(
    art: &KernelArtifact,
    data: &CaseData,
    limits: &DeviceLimits,
    seed: u64,
) -> Result<(Vec<u8>, Stats), String> {
    let mut dev = Device::new();
    let metas: Vec<TensorMeta> = data
        .tensors
        .iter()
        .map(|t| {
            let addr = dev.alloc(t.bytes.len());
            dev.write(addr, &t.bytes).map_err(|e| e.to_string())?;
            Ok(TensorMeta::row_major(t.elem, &t.shape, addr))
        })
        .collect::<Result<_, String>>()?;
    let sig = (art.signature)();
    let stats = tirx_kernels::simulate::launch(
        art.ptx,
        &sig,
        &mut dev,
        (&metas, &data.scalars),
        seed,
        limits,
    )
    .map_err(|e| e.to_string())?;
    let out = &metas[data.output];
    let bytes = dev
        .read(out.addr, data.out().bytes.len())
        .map_err(|e| e.to_string())?;
    Ok((bytes, stats))
}

/// Runs `tirx sim-compare`; `Ok(true)` when every case passed.
pub fn compare(a: &CompareArgs) -> Result<bool, String> {
    let (manifest, bin) = Manifest::read(&a.gpu)?;
    let limits = DeviceLimits {
        sm_count: manifest.sm_count,
        ..DeviceLimits::HOPPER
    };
    println!(
        "GPU dump: {} ({:?}, {} SMs), {}, by {}; emulator planned for {} SMs\n",
        manifest.device,
        manifest.compute_capability,
        manifest.sm_count,
        manifest.date,
        manifest.tool,
        limits.sm_count
    );
    println!("| case | rule | identical | worst | bound | verdict | note |");
    println!("|---|---|---:|---:|---:|---|---|");
    let mut ok = true;
    for case in cases() {
        let art = case.artifact()?;
        let label = case.label(art.config);
        if !a.only.is_empty() && !a.only.iter().any(|s| label.contains(s.as_str())) {
            continue;
        }
        let data = inputs(art, &case)?;
        let rule_name = match rule(art, case.shape.1) {
            Rule::Exact => "bit-exact",
            Rule::Ulp { .. } => "bf16 ulps",
            Rule::Gemm => "of 2x acc bound",
            Rule::Abs(_) => "of the abs bound",
        };
        let verdict = manifest
            .cases
            .iter()
            .find(|e| e.label == label)
            .ok_or_else(|| "not in the dump".to_string())
            .and_then(|e| check_entry(e, art, &data, &bin))
            .and_then(|gpu| {
                let (emu, _) = emulate(art, &data, &limits, case.seed)
                    .map_err(|e| format!("emulator: {e}"))?;
                judge(art, &data, case.shape, gpu, &emu)
            });
        match verdict {
            Ok(o) => {
                println!(
                    "| {label} | {rule_name} | {}/{} | {} | {} | {} | {} |",
                    o.identical,
                    o.total,
                    fmt(o.worst),
                    fmt(o.bound),
                    if o.ok() { "ok" } else { "FAIL" },
                    o.note
                );
                ok &= o.ok();
            }
            Err(e) => {
                println!("| {label} | {rule_name} | | | | FAIL | {e} |");
                ok = false;
            }
        }
    }
    println!(
        "\n{}",
        if ok {
            "all cases within their bounds"
        } else {
            "FAILED"
        }
    );
    Ok(ok)
}

fn fmt(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e9 {
        format!("{v}")
    } else {
        format!("{v:.3}")
    }
}

/// The GPU's bytes of an entry, after checking that it was made from this PTX and these
/// inputs.
fn check_entry<'b>(
    e: &Entry,
    art: &KernelArtifact,
    data: &CaseData,
    bin: &'b [u8],
) -> Result<&'b [u8], String> {
    if let Some(err) = &e.error {
        return Err(format!("GPU: {err}"));
    }
    if e.ptx_hash != hex(Fnv::of(art.ptx.as_bytes())) {
        return Err("the dump ran other PTX (built from another commit?)".into());
    }
    if e.input_hash != hex(data.input_hash()) {
        return Err("the dump's inputs differ from these (the generator changed?)".into());
    }
    if e.len != data.out().bytes.len() {
        return Err(format!(
            "{} bytes in the dump, {} expected",
            e.len,
            data.out().bytes.len()
        ));
    }
    Ok(&bin[e.offset..e.offset + e.len])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::sim_cases::SPLIT;

    fn b(v: &[f32]) -> Vec<bf16> {
        v.iter().map(|&x| bf16::from_f32(x)).collect()
    }

    #[test]
    fn exact_counts_differing_elements() {
        let o = compare_exact(&[1, 2, 3, 4], &[1, 2, 3, 4], 2);
        assert!(o.ok() && o.identical == 2);
        let o = compare_exact(&[1, 2, 3, 5], &[1, 2, 3, 4], 2);
        assert!(!o.ok());
        assert_eq!(o.worst, 1.0);
        assert!(o.note.contains("element 1"), "{}", o.note);
    }

    #[test]
    fn bf16_ulp_is_the_binade_spacing() {
        assert_eq!(bf16_ulp(1.0), 1.0 / 128.0);
        assert_eq!(bf16_ulp(1.5), 1.0 / 128.0);
        assert_eq!(bf16_ulp(0.75), 1.0 / 256.0);
        assert_eq!(bf16_ulp(-3.0), 1.0 / 64.0);
    }

    /// Adjacent bf16 values pass (across a binade too), two ulps apart fail, NaN fails, and
    /// near-zero values are measured at the row's floor.
    #[test]
    fn ulp_rule_allows_one_adjacent_value() {
        let up = |x: f32, k: u16| bf16::from_bits(bf16::from_f32(x).to_bits() + k);
        let emu = b(&[1.0, 0.5, 2.0, 3.0]);
        let one = vec![up(1.0, 1), emu[1], emu[2], emu[3]];
        assert_eq!(compare_ulp(&one, &emu, 4).worst, 1.0);
        // Just below 1.0 against 1.0: half an ulp of 1.0.
        let below = vec![
            bf16::from_bits(emu[0].to_bits() - 1),
            emu[1],
            emu[2],
            emu[3],
        ];
        let o = compare_ulp(&below, &emu, 4);
        assert!(o.ok() && o.worst == 0.5, "{o:?}");
        let two = vec![emu[0], up(0.5, 2), emu[2], emu[3]];
        assert!(!compare_ulp(&two, &emu, 4).ok());
        let nan = vec![emu[0], emu[1], bf16::NAN, emu[3]];
        assert!(!compare_ulp(&nan, &emu, 4).ok());
        // A value cancelled to ~0 in a row of rms ~1: 8 of its own ulps, but a tiny fraction
        // of an ulp at the floor (2⁻³).
        let emu = b(&[1.0, -1.0, 1.0, 1e-6]);
        let gpu = vec![emu[0], emu[1], emu[2], up(1e-6, 8)];
        let o = compare_ulp(&gpu, &emu, 4);
        assert!(o.ok() && o.worst < 0.01, "{o:?}");
    }

    #[test]
    fn bounded_rule_scales_by_each_bound() {
        let o = compare_bounded(&[1.0, 2.0], &[1.0, 2.1], &[1.0, 0.2], 2);
        assert!(
            o.ok() && (o.worst - 0.5).abs() < 1e-9 && o.identical == 1,
            "{o:?}"
        );
        let o = compare_bounded(&[1.0, 2.0], &[1.0, 2.1], &[1.0, 0.05], 2);
        assert!(!o.ok() && o.note.contains("(0, 1)"), "{o:?}");
        assert!(!compare_bounded(&[f64::NAN], &[1.0], &[1.0], 1).ok());
    }

    /// Split-K's first launch: every plane of the emulator's workspace within one side's
    /// bound of its own slice of K's exact product (and not of the whole of K's, which shows
    /// the planes hold different slices).
    #[test]
    fn split_k_planes_hold_their_slices() {
        let case = *cases()
            .iter()
            .find(|c| c.kernel == "gemm_sm90_splitk")
            .unwrap();
        let art = case.artifact().unwrap();
        let data = inputs(art, &case).unwrap();
        assert_eq!(data.out().shape, vec![SPLIT, case.shape.0, case.shape.1]);
        let (bytes, _) = emulate(art, &data, &DeviceLimits::HOPPER, case.seed).unwrap();
        let emu = decode(&bytes, data.out().elem);
        let g = gemm_bounds(art, &data, case.shape).unwrap();
        assert_eq!(g.exact.len(), emu.len());
        let within = |e: &[f64], x: &[f64]| {
            e.iter()
                .zip(x)
                .zip(&g.side)
                .all(|((e, x), s)| (e - x).abs() <= *s)
        };
        assert!(within(&emu, &g.exact));
        let plane = case.shape.0 * case.shape.1;
        let sum: Vec<f64> = (0..plane)
            .map(|i| (0..SPLIT).map(|z| g.exact[z * plane + i]).sum())
            .collect();
        assert!(!within(&emu[..plane], &sum));
        let o = judge(art, &data, case.shape, &bytes, &bytes).unwrap();
        assert!(o.ok() && o.identical == o.total, "{o:?}");
    }

    /// The block-scaled FP8 GEMM's case (`ScaleBlocks`): its inputs carry `sa` [M, KB] and
    /// `sb` [NB, KB], and the emulator's D is within one side's bound of the per-K-block
    /// reference everywhere, judged bit-identical against itself.
    #[test]
    fn the_block_scaled_case_is_judged_per_k_block() {
        let case = *cases()
            .iter()
            .find(|c| c.kernel == "gemm_sm90_fp8_block")
            .unwrap();
        let art = case.artifact().unwrap();
        let data = inputs(art, &case).unwrap();
        let (m, n, k) = case.shape;
        let (kb, nb) = (k.div_ceil(128), n.div_ceil(128));
        assert_eq!(data.input("sa").unwrap().shape, vec![m, kb]);
        assert_eq!(data.input("sb").unwrap().shape, vec![nb, kb]);
        let (bytes, _) = emulate(art, &data, &DeviceLimits::HOPPER, case.seed).unwrap();
        let emu = decode(&bytes, data.out().elem);
        let g = gemm_bounds(art, &data, case.shape).unwrap();
        assert_eq!(g.exact.len(), emu.len());
        assert!(
            emu.iter()
                .zip(&g.exact)
                .zip(&g.side)
                .all(|((e, x), s)| (e - x).abs() <= *s)
        );
        let o = judge(art, &data, case.shape, &bytes, &bytes).unwrap();
        assert!(o.ok() && o.identical == o.total, "{o:?}");
    }

    /// The transposed decode partial's default case: its planes are N×M, and the emulator's
    /// workspace is within the bound of each plane's own slice, element by element in that
    /// order.
    #[test]
    fn transposed_split_k_planes_are_n_by_m() {
        let case = *cases()
            .iter()
            .find(|c| c.kernel == "gemm_sm90_splitk_t")
            .unwrap();
        let art = case.artifact().unwrap();
        let data = inputs(art, &case).unwrap();
        assert_eq!(data.out().shape, vec![SPLIT, case.shape.1, case.shape.0]);
        let (bytes, _) = emulate(art, &data, &DeviceLimits::HOPPER, case.seed).unwrap();
        let emu = decode(&bytes, data.out().elem);
        let g = gemm_bounds(art, &data, case.shape).unwrap();
        assert_eq!(g.exact.len(), emu.len());
        assert!(
            emu.iter()
                .zip(&g.exact)
                .zip(&g.side)
                .all(|((e, x), s)| (e - x).abs() <= *s)
        );
    }

    /// The whole path without a GPU: a dump filled from the emulator, for the copy and one row
    /// kernel, read back and judged bit-identical; a changed byte, other inputs or other PTX
    /// are caught.
    #[test]
    fn an_emulator_dump_compares_clean() {
        let all = cases();
        let mut bin = Vec::new();
        let mut entries = Vec::new();
        for case in all
            .iter()
            .filter(|c| ["tma_copy", "softmax", "attention_sm90"].contains(&c.kernel))
        {
            let art = case.artifact().unwrap();
            let data = inputs(art, case).unwrap();
            let (bytes, _) = emulate(art, &data, &DeviceLimits::HOPPER, case.seed).unwrap();
            let e = Entry {
                label: case.label(art.config),
                kernel: case.kernel.into(),
                config: art.config.into(),
                shape: [case.shape.0, case.shape.1, case.shape.2],
                seed: case.seed,
                ptx_hash: hex(Fnv::of(art.ptx.as_bytes())),
                input_hash: hex(data.input_hash()),
                output: data.out().name.clone(),
                elem: data.out().elem.name().into(),
                offset: bin.len(),
                len: bytes.len(),
                error: None,
            };
            bin.extend_from_slice(&bytes);
            let gpu = check_entry(&e, art, &data, &bin).unwrap();
            let o = judge(art, &data, case.shape, gpu, &bytes).unwrap();
            assert!(o.ok() && o.identical == o.total, "{}: {o:?}", e.label);
            let mut flipped = gpu.to_vec();
            flipped[3] ^= 0x40;
            assert!(
                !judge(art, &data, case.shape, &flipped, &bytes)
                    .unwrap()
                    .ok()
            );
            entries.push(e);
        }
        let art = all[0].artifact().unwrap();
        let data = inputs(art, &all[0]).unwrap();
        let stale = Entry {
            ptx_hash: hex(0),
            ..entries[0].clone()
        };
        assert!(
            check_entry(&stale, art, &data, &bin)
                .unwrap_err()
                .contains("other PTX")
        );
        let other = Entry {
            input_hash: hex(0),
            ..entries[0].clone()
        };
        assert!(
            check_entry(&other, art, &data, &bin)
                .unwrap_err()
                .contains("inputs differ")
        );
    }
}
