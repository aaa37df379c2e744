//! The block-scaled FP8 GEMM with MN-major activation scales (`kernels/src/gemm/fp8_block_mn.rs`:
//! `sa` f32 [KB, M4], M4 = 4·cdiv(M, 4), loaded by the TMA thread into each stage; the weight
//! scale gathered by the consumers a block ahead) in the emulator, on `sim_fp8_block.rs`'s
//! data: bf16 whose magnitude varies by row, by 128-row block of B and by K block, quantised
//! on the CPU per 1×128 block of A and per 128×128 block of B, `sa` then transposed into the
//! MN-major layout with **NaN** in its padding columns (rows M ≤ m < M4 are D's clipped rows:
//! a NaN reaching a stored element would fail the check), D poisoned, against the f64
//! reference of the same E4M3 values and scales within the f32 bound. Tails in M (M not a
//! multiple of 4), N and K, more K blocks than stages, several tiles a CTA. `quant_block_mn`'s
//! output feeds it; the launch planner refuses an unpadded or row-major `sa`; the SASS has no
//! spills, three TMA loads a stage and only the weight scale's global loads. The
//! double-buffered kernel (`gemm_sm90_fp8_block_mn_dbl`) at every parity of its K loop, and
//! its SASS: each overlapped promotion's 64 `FFMA` between the next block's `QGMMA`s and their
//! wait, reading none of the registers those write.

use tirx::KernelArtifact;
use tirx::runtime::ElemType;
use tirx_kernels::gemm::fp8_block_mn::kernels::{
    gemm_sm90_fp8_block_mn, gemm_sm90_fp8_block_mn_dbl,
};
use tirx_kernels::gemm::fp8_ref::{Fp8Scales, block_check_k, check, m4, scaled_mm_f64};
use tirx_kernels::reference::Rng;
use tirx_kernels::rows::quant::{quantise_e4m3, quantise_e4m3_tiles};
use tirx_kernels::simulate::{self, decode, put};
use tirx_sim::Device;

use super::sim_exec::EMULATED;
use super::sim_fp8::{Case, assembled_clean, run_cases};
use super::sim_fp8_block::{SaLayout, e4m3_values, f32_bytes, mn_major_padded, run_scales, values};

fn config(name: &str) -> &'static KernelArtifact {
    super::sim_fp8::config(&gemm_sm90_fp8_block_mn::KERNEL, name)
}

/// Runs `art` in the emulator on `sms` SMs (`sa` MN-major, NaN in its padding); returns the
/// worst error/bound ratio.
fn run(
    art: &KernelArtifact,
    shape: (usize, usize, usize),
    sms: u32,
    seed: u64,
) -> Result<f64, String> {
    run_scales(art, shape, sms, seed, SaLayout::MnMajor)
}

/// Tails in M (201 = 128 + 73, 73 and 130: none a multiple of 4, so `sa`'s rows are padded),
/// N (264 = 2·128 + 8) and K (400 = 3·128 + 16: a partial last block; 80: one partial block
/// only); one whole K block; more K blocks than stages (784: 7 blocks, 1040: 9); several
/// tiles for one cluster (two SMs); every config (bf16, f16, f32 out).
#[test]
fn the_mn_major_block_scaled_fp8_gemm_matches_the_reference_in_the_emulator() {
    let cases: [Case; 7] = [
        ("default", (201, 264, 400), 2, 1),
        ("default", (73, 136, 128), 2, 2),
        ("default", (136, 72, 80), 4, 3),
        ("f32", (201, 136, 272), 4, 4),
        ("f16", (201, 264, 400), 2, 5),
        ("f32", (130, 264, 784), 2, 6),
        ("default", (130, 264, 1040), 2, 7),
    ];
    run_cases(&gemm_sm90_fp8_block_mn::KERNEL, &cases, run);
}

/// The double-buffered K loop (`gemm_sm90_fp8_block_mn_dbl`: two `part` tiles by turns, a
/// K block promoted behind the next one's MMAs) at every parity: one K block (whole, 128, and
/// partial, 80: promoted last in `part0`), two (256: the pair loop never runs, the tail
/// ends in `part1`), three (272, a K tail: one pair, ends in `part0`), four (400, a K tail:
/// one pair and the even tail), five (592, a K tail; as many as the stages) and nine (1040,
/// more than the stages); tails in M (201, 73, 130: none a multiple of 4, NaN in `sa`'s
/// padding) and N (264, 72); one cluster walking three tiles (M ≤ 256, N = 264: the pipeline
/// counter carried across tiles of odd and even block counts); every config.
#[test]
fn the_double_buffered_mn_gemm_matches_the_reference_in_the_emulator() {
    let cases: [Case; 7] = [
        ("default", (73, 136, 128), 2, 21),
        ("default", (136, 72, 80), 4, 22),
        ("f16", (201, 264, 256), 2, 23),
        ("f32", (201, 136, 272), 4, 24),
        ("default", (201, 264, 400), 2, 25),
        ("default", (130, 264, 592), 2, 26),
        ("f32", (130, 264, 1040), 2, 27),
    ];
    run_cases(&gemm_sm90_fp8_block_mn_dbl::KERNEL, &cases, run);
}

/// The reference for MN-major scales is the row-major one (same values, transposed), and a
/// row-major `sa` read as MN-major — the layout mistake this mode invites — is caught.
#[test]
fn the_mn_major_reference_agrees_and_catches_a_row_major_sa() {
    let (m, n, k) = (12usize, 136usize, 400usize);
    let mut rng = Rng::new(9);
    let (xa, xb) = (values(&mut rng, m, k, 1), values(&mut rng, n, k, 128));
    let (qa, sa) = quantise_e4m3(&xa, m, k, 128);
    let (qb, sb) = quantise_e4m3_tiles(&xb, n, k, 128);
    let (va, vb) = (e4m3_values(&qa), e4m3_values(&qb));
    let kb = k.div_ceil(128);
    let rows = Fp8Scales::Blocks(sa.clone(), sb.clone());
    let (want, mag) = scaled_mm_f64(&va, &vb, (m, n, k), &rows);
    let mn = Fp8Scales::BlocksMn(mn_major_padded(&sa, m, kb, 0.0), sb.clone());
    assert_eq!(scaled_mm_f64(&va, &vb, (m, n, k), &mn).0, want);
    // M = 12 is a multiple of 4, so the row-major bytes have the MN-major length.
    let wrong = Fp8Scales::BlocksMn(sa, sb);
    let (bad, _) = scaled_mm_f64(&va, &vb, (m, n, k), &wrong);
    let bound = (block_check_k(k), ElemType::F32, true);
    assert!(check(&bad, (&want, &mag), bound, n).is_err());
}

/// The round trip: A (bf16) quantised by `quant_block_mn` in the emulator (E4M3 and its
/// MN-major 1×128 scales, poisoned first; M = 73, so M4 = 76), B by the CPU's 128×128
/// quantiser, the GEMM on them: D matches the f64 product of the CPU quantiser's values and
/// scales.
#[test]
fn quant_block_mn_feeds_the_mn_major_gemm_in_the_emulator() {
    use tirx_kernels::row_kernels::quant::quant_block_mn;
    let (m, n, k) = (73, 136, 400);
    let mut rng = Rng::new(32);
    let (xa, xb) = (values(&mut rng, m, k, 1), values(&mut rng, n, k, 128));
    let (kb, nb) = (k.div_ceil(128), n.div_ceil(128));
    let mut dev = Device::new();
    let xab: Vec<u8> = xa.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    let xt = put(&mut dev, &xab, ElemType::Bf16, &[m, k]);
    let qa = put(&mut dev, &vec![0xa5; m * k], ElemType::E4m3, &[m, k]);
    let nan: Vec<u8> = (0..kb * m4(m))
        .flat_map(|_| f32::NAN.to_le_bytes())
        .collect();
    let sa = put(&mut dev, &nan, ElemType::F32, &[kb, m4(m)]);
    let quant = &quant_block_mn::KERNEL.artifacts[0];
    simulate::launch(
        quant.ptx,
        &(quant.signature)(),
        &mut dev,
        (&[xt, qa.clone(), sa.clone()], &[]),
        3,
        &EMULATED,
    )
    .expect("quant_block_mn runs");
    let (qb, sb) = quantise_e4m3_tiles(&xb, n, k, 128);
    let qbt = put(&mut dev, &qb, ElemType::E4m3, &[n, k]);
    let sbt = put(&mut dev, &f32_bytes(&sb), ElemType::F32, &[nb, kb]);
    let dt = put(&mut dev, &vec![0xff; m * n * 2], ElemType::Bf16, &[m, n]);
    super::sim_exec::sim_launch(
        config("default"),
        &mut dev,
        &[qa, qbt, sa, sbt, dt.clone()],
        &[],
        5,
    )
    .unwrap_or_else(|e| panic!("the GEMM: {e}"));
    let got = decode(&dev.read(dt.addr, m * n * 2).expect("D"), ElemType::Bf16);
    let (wqa, wsa) = quantise_e4m3(&xa, m, k, 128);
    let scales = Fp8Scales::Blocks(wsa, sb);
    let (want, mag) = scaled_mm_f64(&e4m3_values(&wqa), &e4m3_values(&qb), (m, n, k), &scales);
    check(
        &got,
        (&want, &mag),
        (block_check_k(k), ElemType::Bf16, true),
        n,
    )
    .unwrap_or_else(|e| panic!("against the dequantised product: {e}"));
}

/// `sa` of the wrong shape is refused by the launch planner before any launch: unpadded
/// ([KB, M] with M = 73: M4 is 76), a K-block count rounded down (2 for K = 272), and
/// row-major ([M, KB]: its first extent taken for KB, contradicted by `sb`).
#[test]
fn the_mn_major_block_scaled_gemm_refuses_scales_of_the_wrong_shape() {
    use tirx::RuntimeError;
    use tirx_kernels::simulate::LaunchError;
    let art = config("default");
    let (m, n, k) = (73, 136, 272);
    let refused = |sa: [usize; 2], sb: [usize; 2]| {
        let mut dev = Device::new();
        let (e4, f) = (ElemType::E4m3, ElemType::F32);
        let mut t = |shape: &[usize], e: ElemType| {
            let len = shape.iter().product::<usize>() * e.bytes() as usize;
            put(&mut dev, &vec![0; len], e, shape)
        };
        let ts = [
            t(&[m, k], e4),
            t(&[n, k], e4),
            t(&sa, f),
            t(&sb, f),
            t(&[m, n], ElemType::Bf16),
        ];
        match simulate::launch(
            art.ptx,
            &(art.signature)(),
            &mut dev,
            (&ts, &[]),
            1,
            &EMULATED,
        ) {
            Err(LaunchError::Plan(e)) => e,
            other => panic!("{sa:?}: expected a refused shape, got {other:?}"),
        }
    };
    let assertion = |e: RuntimeError| match e {
        RuntimeError::ShapeAssert { assertion, .. } => assertion,
        other => other.to_string(),
    };
    assert!(assertion(refused([3, 73], [2, 3])).starts_with("M4 == cdiv(M, 4) * 4"));
    assert!(assertion(refused([2, 76], [2, 2])).starts_with("KB == cdiv(K, 128)"));
    // Row-major: `sa`'s first extent (73) is taken for KB, which `sb`'s 3 contradicts.
    let row_major = refused([73, 3], [2, 3]).to_string();
    assert!(row_major.contains("`KB` = 73"), "{row_major}");
}

/// Every config assembles with ptxas for sm_90a without spills and with its wgmma pipeline
/// kept as written; per K block the SASS has the four FP8 `QGMMA`s and the promotion's 64
/// `FFMA`; the scale box is a third TMA load (`UTMALDG.2D` ×2 — A's box and `sa`'s — and B's
/// `.MULTICAST`), and the only global loads are the weight scale's gathers (one in the K
/// loop, one before it), where `gemm_sm90_fp8_block`'s scale warps have 42.
#[test]
fn the_mn_major_block_scaled_gemm_assembles_without_spills() {
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let kernel = &gemm_sm90_fp8_block_mn::KERNEL;
    for a in kernel.artifacts {
        let c = assembled_clean(kernel, a);
        assert_eq!(
            c.sass.get("QGMMA.64x128x32.F32.E4M3.E4M3"),
            Some(&4),
            "{}",
            a.config
        );
        assert!(c.sass.get("FFMA").is_some_and(|&n| n >= 64), "{}", a.config);
        assert_eq!(c.sass.get("UTMALDG.2D"), Some(&2), "{}", a.config);
        assert_eq!(c.sass.get("UTMALDG.2D.MULTICAST"), Some(&1), "{}", a.config);
        assert_eq!(c.sass.get("LDG.E"), Some(&2), "{}", a.config);
    }
}

/// The double-buffered kernel assembles for sm_90a without spills and with its wgmma pipeline
/// kept as written: four issue sites of four `QGMMA`s (the tile's first block, the pair
/// loop's two, the even tail's), five promotions of 64 `FFMA` (three overlapped, two last),
/// the loads of the single-buffered kernel; and in the SASS every `WARPGROUP.DEPBAR.LE gsb0,
/// 0x1` follows a just-committed group (`QGMMA … gsb0`) and is followed by the 64 `FFMA` of a
/// promotion before the next `QGMMA` or wait, none of which reads or writes a register of
/// the group still in flight.
#[test]
fn the_double_buffered_mn_gemm_promotes_behind_the_next_blocks_mmas() {
    use tirx_ptx::tools::{find_ptxas, nvdisasm, ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let kernel = &gemm_sm90_fp8_block_mn_dbl::KERNEL;
    for a in kernel.artifacts {
        let c = assembled_clean(kernel, a);
        let count = |op: &str| c.sass.get(op).copied().unwrap_or(0);
        assert_eq!(count("QGMMA.64x128x32.F32.E4M3.E4M3"), 16, "{}", a.config);
        assert!(count("FFMA") >= 5 * 64, "{}", a.config);
        assert_eq!(count("UTMALDG.2D"), 2, "{}", a.config);
        assert_eq!(count("UTMALDG.2D.MULTICAST"), 1, "{}", a.config);
        let Ok(sass) = nvdisasm(&ptxas(a.ptx, "sm_90a").expect("assembles").cubin) else {
            continue;
        };
        // Per site, the `FFMA`s in the next group's shadow: all 64 at the pair loop's two
        // sites; at the even tail's ptxas sinks a few past the last block's `wait(0)`.
        let sites = overlapped_promotions(&sass);
        assert_eq!(sites.len(), 3, "{}: {sites:?}", a.config);
        assert!(sites.iter().all(|&n| n >= 48), "{}: {sites:?}", a.config);
        assert!(
            sites.iter().filter(|&&n| n == 64).count() >= 2,
            "{}: {sites:?}",
            a.config
        );
    }
}

/// The registers `R<n>` an instruction line names.
fn registers(line: &str) -> Vec<u32> {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|w| w.strip_prefix('R')?.parse().ok())
        .collect()
}

/// The overlapped promotions in `sass`, each checked — a `WARPGROUP.DEPBAR.LE gsb0, 0x1`
/// right after a group's last `QGMMA` (`gsb0`), then `FFMA`s before the next `QGMMA` or
/// wait, none naming the 64 accumulator registers of the group in flight — and counted:
/// the `FFMA`s of each, in the order of the SASS.
fn overlapped_promotions(sass: &str) -> Vec<usize> {
    let lines: Vec<&str> = sass.lines().filter(|l| l.contains("/*")).collect();
    let mut sites = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !l.contains("WARPGROUP.DEPBAR.LE gsb0, 0x1") {
            continue;
        }
        let issue = lines[..i]
            .iter()
            .rev()
            .find(|l| l.contains("QGMMA") || l.contains("WARPGROUP.DEPBAR"))
            .expect("an MMA before the wait");
        assert!(
            issue.contains("QGMMA") && issue.contains("gsb0"),
            "the wait follows no committed group: {issue}"
        );
        // The group in flight: the accumulator's first register, 64 of them.
        let d = registers(issue)[0];
        let flight = d..d + 64;
        let ffma: Vec<&&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !l.contains("QGMMA") && !l.contains("WARPGROUP.DEPBAR"))
            .filter(|l| l.contains("FFMA"))
            .collect();
        for f in &ffma {
            assert!(
                registers(f).iter().all(|r| !flight.contains(r)),
                "{f} touches the group in flight (R{d}..)"
            );
        }
        sites.push(ffma.len());
    }
    sites
}
