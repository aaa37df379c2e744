//! Diagnostics: each error names the PTX line, and a deadlock lists what every blocked
//! group waits on with the object's state.

use super::*;

/// The PTX line of the first instruction whose text contains `needle` (lines of
/// [`module`]'s source: 5 header lines, the entry, `.maxntid`, `{`, the register lines).
fn line_of(m: &ptx::Module, needle: &str) -> u32 {
    m.kernels[0]
        .instructions()
        .find(|i| i.opcode.to_string().contains(needle))
        .map(|i| i.line)
        .expect("instruction present")
}

#[test]
fn a_wait_on_a_barrier_nobody_arrives_at_is_a_deadlock_with_its_state() {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.eq.u32 %p0, %r0, 0;\n\
         \t@%p0 mbarrier.init.shared::cta.b64 [%r1], 1;\n\tbar.sync 0;\n\
         \t@%p0 mbarrier.expect_tx.shared::cta.b64 [%r1], 64;\n\
         $L_w:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n\t@!%p1 bra $L_w;\n\
         \tret;\n"
    );
    let m = module(OUT, &body);
    let e = run_out(&m, &one_cta(64, 64), 256, 5).unwrap_err();
    let SimError::Deadlock(blocked) = &e else {
        panic!("{e}")
    };
    let line = line_of(&m, "try_wait");
    assert_eq!(blocked.len(), 2, "{e}");
    for (w, b) in blocked.iter().enumerate() {
        assert_eq!((b.warp, b.lanes, b.line), (w as u32, u32::MAX, line), "{e}");
        assert_eq!(
            b.on,
            WaitOn::Mbarrier {
                addr: SMEM_BASE.next_multiple_of(1024),
                parity: 0,
                phase: 0,
                pending: 1,
                expected: 1,
                tx: 64
            }
        );
    }
    let text = e.to_string();
    assert!(text.contains("0 of 1 arrivals seen, tx-count 64"), "{text}");
}

#[test]
fn a_barrier_count_never_reached_is_a_deadlock() {
    // Warp 1 exits; warp 0 waits at a 64-thread barrier.
    let body = format!(
        "{PROLOGUE}\tsetp.ge.u32 %p0, %r0, 32;\n\t@%p0 bra $L_end;\n\tbar.sync 1, 64;\n\
         $L_end:\n\tret;\n"
    );
    let m = module(OUT, &body);
    let e = run_out(&m, &one_cta(64, 0), 256, 0).unwrap_err();
    let SimError::Deadlock(b) = &e else {
        panic!("{e}")
    };
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].line, line_of(&m, "bar"));
    assert_eq!(
        b[0].on,
        WaitOn::Barrier {
            id: 1,
            arrived: 32,
            expected: 64
        }
    );
}

#[test]
fn out_of_bounds_and_misaligned_accesses_name_the_line() {
    let body = format!("{PROLOGUE}\tld.global.u32 %r1, [%rd1+4096];\n\tret;\n");
    let m = module(OUT, &body);
    let e = run_out(&m, &one_cta(32, 0), 256, 0).unwrap_err();
    match &e {
        SimError::OutOfBounds {
            line, space, size, ..
        } => {
            assert_eq!(
                (*line, *space, *size),
                (line_of(&m, "ld.global"), Space::Global, 4)
            )
        }
        _ => panic!("{e}"),
    }
    assert!(e.to_string().contains("the allocation below it"), "{e}");
    let body = format!("{PROLOGUE}\tld.global.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd0+4];\n\tret;\n");
    let e = run_out(&module(OUT, &body), &one_cta(32, 0), 256, 0).unwrap_err();
    assert!(matches!(e, SimError::Misaligned { align: 16, .. }), "{e}");
    let body = format!("{PROLOGUE}\tmov.u32 %r1, 8;\n\tld.shared.u32 %r2, [%r1];\n\tret;\n");
    let e = run_out(&module(OUT, &body), &one_cta(32, 0), 256, 0).unwrap_err();
    assert!(
        matches!(
            e,
            SimError::OutOfBounds {
                space: Space::Shared,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn reading_a_register_never_written_is_an_error() {
    let body = format!("{PROLOGUE}\tadd.u32 %r2, %r1, 1;\n\tret;\n");
    let m = module(OUT, &body);
    let e = run_out(&m, &one_cta(32, 0), 256, 0).unwrap_err();
    match &e {
        SimError::Uninitialised { reg, line, thread } => {
            assert_eq!((reg.as_str(), *line), ("%r1", line_of(&m, "add.u32")));
            assert_eq!(thread.cta, [0, 0, 0]);
        }
        _ => panic!("{e}"),
    }
}

#[test]
fn tcgen05_is_unsupported_by_name_and_line() {
    // (A decompressing copy: `tcgen05.shift` this test used to name runs now.)
    let body = "\ttcgen05.cp.cta_group::1.128x256b.b8x16.b4x16_p64 [%r0], %rd0;\n\tret;\n";
    let m = module(OUT, body);
    let e = run_out(&m, &one_cta(128, 0), 16, 0).unwrap_err();
    match &e {
        SimError::Unsupported { instr, line, .. } => {
            assert_eq!(
                (instr.as_str(), *line),
                (
                    "tcgen05.cp.cta_group::1.128x256b.b8x16.b4x16_p64",
                    line_of(&m, "tcgen05")
                )
            )
        }
        _ => panic!("{e}"),
    }
}

#[test]
fn tx_count_underflow_is_diagnosed() {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.eq.u32 %p0, %r0, 0;\n\t@!%p0 bra $L_end;\n\
         \tmbarrier.init.shared::cta.b64 [%r1], 1;\n\
         \tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16;\n\
         \tmbarrier.complete_tx.shared::cta.b64 [%r1], 32;\n$L_end:\n\tret;\n"
    );
    let m = module(OUT, &body);
    let e = run_out(&m, &one_cta(32, 64), 256, 0).unwrap_err();
    assert!(
        matches!(
            e,
            SimError::TxUnderflow {
                excess: 16,
                phase: 0,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_shuffle_from_a_lane_outside_its_mask_is_an_error() {
    let body = format!(
        "{PROLOGUE}\tsetp.ge.u32 %p0, %r0, 16;\n\t@%p0 bra $L_end;\n\
         \tshfl.sync.idx.b32 %r1, %r0, 20, 31, 65535;\n$L_end:\n\tret;\n"
    );
    let e = run_out(&module(OUT, &body), &one_cta(32, 0), 256, 0).unwrap_err();
    assert!(e.to_string().contains("reads lane 20"), "{e}");
}

#[test]
fn a_seed_replays_its_schedule() {
    let m = super::tma::copy_kernel(true);
    let run_once = |seed| {
        let mut dev = Device::new();
        let a = dev.alloc(64 * 64 * 2);
        let map = TensorMapDesc {
            elem: TmaElem::Bf16,
            global_address: a,
            dims: vec![64, 64],
            strides_bytes: vec![128],
            box_dims: vec![64, 8],
            element_strides: vec![1, 1],
            swizzle: TmaSwizzle::B128,
            oob_fill: OobFill::Zero,
        };
        let params = [
            ParamValue::TensorMap(map.clone()),
            ParamValue::TensorMap(map),
        ];
        let launch = Launch {
            grid: [1, 8, 1],
            cluster: [1, 1, 1],
            block: [128, 1, 1],
            smem_bytes: 3072,
        };
        let s = run(&m, "k", &launch, &params, &mut dev, seed).unwrap();
        (s.thread_instructions, s.warp_instructions)
    };
    assert_eq!(run_once(11), run_once(11));
    let distinct: std::collections::HashSet<_> = (0..8).map(run_once).collect();
    assert!(distinct.len() > 1, "every seed gave the same schedule");
}

/// Every thread writes its word of a 64×8 bf16 tile (`fence` after the write), a barrier,
/// then thread 0 stores the tile with TMA, runs `after`, and waits for the store.
fn store_kernel(fence: &str, after: &str) -> ptx::Module {
    let body = format!(
        "\tmov.u32 %r0, %tid.x;\n\tmov.u32 %r1, smem;\n\tadd.u32 %r1, %r1, 1023;\n\
         \tand.b32 %r1, %r1, -1024;\n\tshl.b32 %r2, %r0, 2;\n\tadd.u32 %r3, %r1, %r2;\n\
         \tst.shared.u32 [%r3], %r0;\n{fence}\tbar.sync 0;\n\
         \tsetp.eq.u32 %p0, %r0, 0;\n\t@!%p0 bra $L_end;\n\
         \tmov.u64 %rd4, p_dst;\n\tcvta.param.u64 %rd4, %rd4;\n\tmov.u32 %r5, 0;\n\
         \tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd4, {{%r5, %r5}}], [%r1];\n\
         {after}\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 0;\n\
         $L_end:\n\tret;\n"
    );
    module(".param .align 64 .b8 p_dst[128]", &body)
}

/// Runs a one-tile kernel with a 64×8 bf16 tensor map as its only parameter, async copies
/// completing only when nothing else can run (so a race window stays open).
fn run_tile(m: &ptx::Module) -> Result<Vec<u8>, SimError> {
    let mut dev = Device::new();
    let a = dev.alloc(64 * 8 * 2);
    let map = TensorMapDesc {
        elem: TmaElem::Bf16,
        global_address: a,
        dims: vec![64, 8],
        strides_bytes: vec![128],
        box_dims: vec![64, 8],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzle::B128,
        oob_fill: OobFill::Zero,
    };
    let policy = Policy {
        complete_one_in: u64::MAX,
        ..Policy::default()
    };
    let p = Program::new(m, "k")?;
    run_program(
        &p,
        &one_cta(128, 2048),
        &[ParamValue::TensorMap(map)],
        &mut dev,
        1,
        &policy,
    )?;
    Ok(dev.read(a, 64 * 8 * 2).unwrap())
}

#[test]
fn a_tma_store_of_generic_writes_needs_fence_proxy_async() {
    let fenced = store_kernel("\tfence.proxy.async.shared::cta;\n", "");
    let out = run_tile(&fenced).unwrap();
    assert_eq!(u32s(&out[..512])[5], 5, "thread 5's word went out");
    let unfenced = store_kernel("", "");
    let e = run_tile(&unfenced).unwrap_err();
    match &e {
        SimError::UnfencedProxy {
            writer,
            write_line,
            line,
            ..
        } => {
            assert_eq!(writer.tid, 0);
            assert_eq!(*write_line, line_of(&unfenced, "st.shared"));
            assert_eq!(*line, line_of(&unfenced, "cp.async.bulk.tensor"));
        }
        _ => panic!("{e}"),
    }
    assert!(e.to_string().contains("without a fence.proxy.async"), "{e}");
}

#[test]
fn writing_a_tile_a_tma_store_still_reads_is_a_race() {
    let m = store_kernel(
        "\tfence.proxy.async.shared::cta;\n",
        "\tst.shared.u32 [%r1+64], %r0;\n",
    );
    let e = run_tile(&m).unwrap_err();
    assert!(
        matches!(&e, SimError::Race { what, .. } if what.contains("wait_group.read")),
        "{e}"
    );
}

#[test]
fn reading_a_tile_a_tma_load_still_writes_is_a_race() {
    // The copy kernel with a read of the tile right after the load is issued, before the
    // mbarrier wait.
    let body = super::tma::copy_body(true).replacen(
        "$L_wait:",
        "\tld.shared.u32 %r9, [%r2+256];\n$L_wait:",
        1,
    );
    let m = module(super::tma::COPY_PARAMS, &body);
    let mut dev = Device::new();
    let a = dev.alloc(64 * 8 * 2);
    let map = TensorMapDesc {
        elem: TmaElem::Bf16,
        global_address: a,
        dims: vec![64, 8],
        strides_bytes: vec![128],
        box_dims: vec![64, 8],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzle::B128,
        oob_fill: OobFill::Zero,
    };
    let policy = Policy {
        complete_one_in: u64::MAX,
        ..Policy::default()
    };
    let p = Program::new(&m, "k").unwrap();
    let params = [
        ParamValue::TensorMap(map.clone()),
        ParamValue::TensorMap(map),
    ];
    let e = run_program(&p, &one_cta(128, 3072), &params, &mut dev, 2, &policy).unwrap_err();
    assert!(
        matches!(&e, SimError::Race { what, .. } if what.contains("missing wait on its mbarrier")),
        "{e}"
    );
}
