//! Every kernel × config × target assembles with ptxas for its architecture with no spills
//! and no local memory, and its SASS has the instructions its PTX asked for. In CI
//! (`TIRX_REQUIRE_PTXAS=1`) a missing ptxas fails this test.

use tirx_kernels::catalogue;
use tirx_kernels::check::{check_artifact, resident_ctas};
use tirx_ptx::tools::{find_ptxas, tool_for_test};

/// Besides: a persistent grid of `SMS·W` CTAs (`W` a config constant, hand-derived from
/// ptxas's registers: `norm_odd.rs`) runs in one wave only if `W` CTAs reside on an SM at
/// once, so `W` is at most what the artifact's registers, shared memory and threads let reside
/// ([`resident_ctas`]): a kernel whose registers grew past its `W` fails here. A one-CTA-a-row
/// kernel whose design counts on `W` CTAs sharing an SM (`staged_odd.rs`: one CTA's TMA in
/// flight while another runs its passes) declares `W` too and is held to it the same way.
/// Checked on the same ptxas run as the spills.
#[test]
fn every_kernel_assembles_without_spills_and_with_its_sass() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let mut failures = Vec::new();
    let (mut count, mut persistent) = (0, 0);
    for k in catalogue::all() {
        for a in k.artifacts {
            count += 1;
            let c = match check_artifact(k.name, a) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{} {} {}: {e}", k.name, a.config, a.target.name()));
                    continue;
                }
            };
            if !c.problems.is_empty() {
                failures.push(format!(
                    "{} {} {}: {}",
                    k.name,
                    a.config,
                    a.target.name(),
                    c.problems.join("; ")
                ));
            }
            let Some(w) = a.int("W") else { continue };
            persistent += 1;
            let resident = resident_ctas(&c, a);
            if w < 1 || w > i64::from(resident) {
                failures.push(format!(
                    "{} {}: W = {w}, but {} registers × {} threads and {} bytes of shared \
                     memory let {resident} CTAs reside on an SM",
                    k.name,
                    a.config,
                    c.registers,
                    a.sig().threads,
                    a.sig().smem_bytes + c.smem
                ));
            }
        }
    }
    assert!(count >= 5, "expected every kernel × target, found {count}");
    assert!(
        persistent >= 20,
        "expected the odd norms' configs with a W, found {persistent}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The split-K reduce kernels are pieces of the GEMM family's split-K plan, not catalogue
/// entries (they solve no problem on their own): they assemble the same way, ASCII PTX.
#[test]
fn the_split_k_reduce_kernels_assemble_without_spills() {
    use tirx_kernels::gemm::splitk::reduce::{
        splitk_reduce, splitk_reduce_bias, splitk_reduce_bias_res, splitk_reduce_rowwise,
        splitk_reduce_scaled, splitk_reduce_t, splitk_reduce_t_bias, splitk_reduce_t_bias_res,
        splitk_reduce_t_scaled,
    };
    let kernels = [
        &splitk_reduce::KERNEL,
        &splitk_reduce_scaled::KERNEL,
        &splitk_reduce_bias::KERNEL,
        &splitk_reduce_bias_res::KERNEL,
        &splitk_reduce_rowwise::KERNEL,
        &splitk_reduce_t::KERNEL,
        &splitk_reduce_t_scaled::KERNEL,
        &splitk_reduce_t_bias::KERNEL,
        &splitk_reduce_t_bias_res::KERNEL,
    ];
    for k in kernels {
        for a in k.artifacts {
            assert!(a.ptx.is_ascii(), "{} {}: non-ASCII PTX", k.name, a.config);
        }
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in kernels {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(
                c.problems.is_empty(),
                "{} {}: {:?}",
                k.name,
                a.config,
                c.problems
            );
        }
    }
}

/// The variable-length, paged and decode attention kernels are called by their host entries,
/// not the dispatcher (no catalogue entry): every config assembles with no spills and ASCII PTX,
/// its wgmma pipeline kept as written (no `pipeline_losses`: the decode kernels had ptxas's
/// C7519 on every single-warpgroup config until their constant chunk loops of wgmmas were
/// tested at the bottom, issue #31).
#[test]
fn the_varlen_paged_and_decode_attention_kernels_assemble_without_spills() {
    use tirx_kernels::attention::{hopper_decode, hopper_paged, hopper_varlen};
    let varlen = &hopper_varlen::kernels::attention_sm90_varlen::KERNEL;
    let paged = &hopper_paged::kernels::attention_sm90_paged::KERNEL;
    let decode = &hopper_decode::kernels::attention_sm90_decode::KERNEL;
    let gqa = &hopper_decode::kernels::attention_sm90_decode_gqa::KERNEL;
    let combine = &hopper_decode::kernels::attention_decode_combine::KERNEL;
    assert_eq!((varlen.artifacts.len(), paged.artifacts.len()), (12, 60));
    let counts = [decode, gqa, combine].map(|k| k.artifacts.len());
    assert_eq!(counts, [24, 60, 6]);
    for k in [varlen, paged, decode, gqa, combine] {
        for a in k.artifacts {
            assert!(a.ptx.is_ascii(), "{} {}: non-ASCII PTX", k.name, a.config);
        }
    }
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [varlen, paged, decode, gqa, combine] {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", a.config));
            assert_eq!(c.spills, 0, "{} {}", k.name, a.config);
            assert!(
                c.pipeline_losses.is_empty(),
                "{} {}: {:?}",
                k.name,
                a.config,
                c.pipeline_losses
            );
            assert!(
                c.problems.is_empty(),
                "{} {}: {:?}",
                k.name,
                a.config,
                c.problems
            );
        }
    }
}

/// The driver's JIT rejects any non-ASCII byte in PTX, even in a comment (seen on the H200,
/// driver 580: "Unexpected non-ASCII character encountered on line 1").
#[test]
fn every_ptx_is_ascii() {
    for k in catalogue::all() {
        for a in k.artifacts {
            assert!(
                a.ptx.is_ascii(),
                "{} {} {}: non-ASCII PTX",
                k.name,
                a.config,
                a.target.name()
            );
        }
    }
}

#[test]
fn blackwell_gemm_sass_has_the_tensor_core_and_tma_and_tmem_loads() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let k = catalogue::find("gemm_sm100").expect("shipped");
    let c = check_artifact(k.name, &k.artifacts[0]).expect("assembles");
    for op in ["UTCHMMA", "UTMALDG", "LDTM"] {
        assert!(
            c.sass.contains_key(op),
            "{op} missing from {:?}",
            c.sass.keys().collect::<Vec<_>>()
        );
    }
    // The Blackwell ladder's warp-specialised levels: the tensor core, TMA loads, TMEM loads
    // and the register moves between the roles (`setmaxnreg`, which ptxas drops without a
    // register count at entry: no USETMAXREG then).
    for name in [
        "gemm_sm100_ws",
        "gemm_sm100_persistent",
        "gemm_sm100_pair",
        "gemm_sm100_clc",
        "gemm_sm100_tma_epi",
        "gemm_sm100_prod",
        "gemm_sm100_abc",
        "gemm_sm100_bias_act",
        "gemm_sm100_bias_act_res",
    ] {
        let k = catalogue::find(name).expect("shipped");
        for a in k.artifacts {
            let c = check_artifact(k.name, a).expect("assembles");
            assert_eq!(c.spills, 0, "{name} {}", a.config);
            for op in ["UTCHMMA", "UTMALDG", "LDTM", "USETMAXREG"] {
                assert!(
                    c.sass.contains_key(op),
                    "{name} {}: {op} missing from {:?}",
                    a.config,
                    c.sass.keys().collect::<Vec<_>>()
                );
            }
        }
    }
    let h = catalogue::find("gemm_sm90").expect("shipped");
    let c = check_artifact(h.name, &h.artifacts[0]).expect("assembles");
    for op in ["HGMMA", "UTMALDG"] {
        assert!(
            c.sass.contains_key(op),
            "{op} missing from {:?}",
            c.sass.keys().collect::<Vec<_>>()
        );
    }
}

/// FlashAttention-4 on Blackwell (`attention_sm100`): no spills at the 128 registers a thread
/// of its 512 launch with, and the SASS of every role — the tensor core with A from shared
/// memory (S = Q·Kᵀ) and from tensor memory (O += P·V: ptxas 13 prints A's operand as
/// `tmem[…]`), TMA loads and the O store, TMEM loads (S, O) and stores (P, the rescaled O),
/// `MUFU.EX2` for the softmax, the register moves between the roles.
#[test]
fn blackwell_attention_sass_has_every_role() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let k = catalogue::find("attention_sm100").expect("shipped");
    for a in k.artifacts {
        let c = check_artifact(k.name, a).expect("assembles");
        assert!(c.problems.is_empty(), "{}: {:?}", a.config, c.problems);
        assert_eq!(c.spills, 0, "{}", a.config);
        for op in [
            "UTCHMMA",
            "UTMALDG",
            "UTMASTG",
            "LDTM",
            "STTM",
            "MUFU.EX2",
            "USETMAXREG",
        ] {
            assert!(
                c.sass.contains_key(op),
                "{}: {op} missing from {:?}",
                a.config,
                c.sass.keys().collect::<Vec<_>>()
            );
        }
        // The softmax's columns EX2_COLS.. go through `exp2_poly3` (one `add.rm` floor each,
        // FFMA in the SASS), the rest through `ex2.approx`.
        let poly = a.int("BN").expect("BN") - a.int("EX2_COLS").expect("EX2_COLS");
        assert_eq!(
            a.ptx.matches("add.rm.f32").count() as i64,
            poly,
            "{}",
            a.config
        );
        assert!(c.sass.contains_key("FFMA"), "{}", a.config);
        let rep = tirx_ptx::tools::ptxas(a.ptx, "sm_100a").expect("assembles");
        let Ok(sass) = tirx_ptx::tools::nvdisasm(&rep.cubin) else {
            continue;
        };
        let a_from_tmem = sass
            .lines()
            .filter_map(|l| l.split("UTCHMMA").nth(1))
            .filter(|r| r.trim().starts_with("tmem["))
            .count();
        assert!(a_from_tmem > 0, "{}: no UTCHMMA with A in TMEM", a.config);
        // Conditional rescaling: each correction warp votes (`vote.sync.any.pred`) before its
        // O round trip.
        assert_eq!(
            a.ptx.matches("vote.sync.any.pred").count(),
            1,
            "{}",
            a.config
        );
        assert!(sass.contains("VOTE.ANY"), "{}: no VOTE.ANY", a.config);
    }
}

/// Every shared-memory matrix descriptor (wgmma, tcgen05) masks its start address to the
/// 14-bit field, `(addr & 0x3FFFF) >> 4` (PTX ISA §9.7.15.5.1.2): in a cluster the `.shared`
/// address of a variable can carry CTA-rank bits above bit 17, and unmasked they land in the
/// leading-byte-offset field (on the H200, 2026-11-30, that computed wrong columns in CTA rank 1
/// of `gemm_sm90_tma_epi_nn`, whose MN-major B uses that field). Each `(addr >> 4)` that builds
/// a descriptor is followed by `& 16383`.
#[test]
fn descriptor_start_addresses_are_masked_to_their_field() {
    let mut checked = 0;
    for k in catalogue::all() {
        for a in k.artifacts {
            if !a.ptx.contains("wgmma.mma_async") && !a.ptx.contains("tcgen05.mma") {
                continue;
            }
            checked += 1;
            let lines: Vec<&str> = a.ptx.lines().map(str::trim).collect();
            for (i, l) in lines.iter().enumerate() {
                // The descriptor's address: `shr.u32 %rA, %rB, 4;` then `and.b32 %rC, %rA, 16383;`.
                if l.starts_with("shr.u32") && l.ends_with(", 4;") {
                    let dst = l["shr.u32".len()..].trim().split(',').next().unwrap_or("");
                    let masked = lines[i + 1..].iter().take(3).any(|n| {
                        n.starts_with("and.b32") && n.contains(dst) && n.ends_with("16383;")
                    });
                    assert!(
                        masked,
                        "{} {} {}: `{l}` is not masked to 14 bits",
                        k.name,
                        a.config,
                        a.target.name()
                    );
                }
            }
        }
    }
    assert!(checked > 10, "only {checked} MMA kernels found");
}

/// The FP8 and FP4 quantisers (`row_kernels::quant`, outside the catalogue: no problem kind
/// for them yet) assemble without spills for every config and target, their conversions
/// SASS's packed `F2FP` of two f32 values into E4M3 (the mnemonic with `E4M3` among its
/// modifiers), NVFP4's into E2M1.
#[test]
fn the_quantisers_assemble_without_spills() {
    use tirx_kernels::row_kernels::quant::mxfp8::quant_mxfp8;
    use tirx_kernels::row_kernels::quant::nvfp4::quant_nvfp4;
    use tirx_kernels::row_kernels::quant::{quant_block, quant_block_mn, quant_rowwise};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for (k, fmt) in [
        (&quant_rowwise::KERNEL, "E4M3"),
        (&quant_block::KERNEL, "E4M3"),
        (&quant_block_mn::KERNEL, "E4M3"),
        (&quant_mxfp8::KERNEL, "E4M3"),
        (&quant_nvfp4::KERNEL, "E2M1"),
    ] {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(
                c.problems.is_empty(),
                "{} {} {}: {:?}",
                k.name,
                a.config,
                a.target.name(),
                c.problems
            );
            assert!(
                c.sass
                    .keys()
                    .any(|op| op.starts_with("F2FP") && op.contains(fmt)),
                "{} {}: no {fmt} F2FP in {:?}",
                k.name,
                a.config,
                c.sass
            );
        }
    }
}

/// The block-scaled production GEMM (`gemm_sm100_block_scaled_prod`, both formats) assembles
/// for sm_100a with no spills, and its SASS has the pair's block-scaled MMA (`UTCQMMA.2CTA`
/// for `mxfp8`, `UTCOMMA.2CTA.4X` for `nvfp4`: four per K tile), the pair's factor copies
/// (`UTCCP.T.S.2CTA.4x32dp128bit`: A's image and B's, one per cell: one cell a K tile in
/// MXFP8, four in NVFP4), TMA loads and stores, TMEM loads and the register moves between the
/// roles.
#[test]
fn the_block_scaled_production_gemms_assemble_with_the_pairs_scaled_sass() {
    use tirx_kernels::check::key_sass;
    use tirx_kernels::gemm::block_scaled_prod_tcgen05::kernels::gemm_sm100_block_scaled_prod;
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    let k = &gemm_sm100_block_scaled_prod::KERNEL;
    assert_eq!(k.artifacts.len(), 2);
    // (format, its MMA, the 2-CTA copies a K tile: A's and B's images × their cells).
    for (format, mma, cps) in [
        ("mxfp8", "UTCQMMA.2CTA", 2),
        ("nvfp4", "UTCOMMA.2CTA.4X", 8),
    ] {
        let a = k
            .artifacts
            .iter()
            .find(|a| a.config == format)
            .expect(format);
        let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        println!("{} {}: {} {}", k.name, a.config, c.registers, key_sass(&c));
        assert!(
            c.problems.is_empty(),
            "{} {}: {:?}",
            k.name,
            a.config,
            c.problems
        );
        assert_eq!(c.spills, 0, "{} {}", k.name, a.config);
        let n = |op: &str| c.sass.get(op).copied();
        assert_eq!(n(mma), Some(4), "{} {}: {:?}", k.name, a.config, c.sass);
        assert_eq!(n("UTCCP.T.S.2CTA.4x32dp128bit"), Some(cps), "{:?}", c.sass);
        for op in ["UTMALDG", "UTMASTG", "LDTM", "USETMAXREG"] {
            assert!(c.sass.contains_key(op), "{} {}: no {op}", k.name, a.config);
        }
    }
}
