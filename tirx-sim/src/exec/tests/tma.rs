//! TMA: the swizzle modes against the ISA's definition (PTX ISA §5.5, "Tensor swizzling
//! modes": 16-byte chunk `c` of 128-byte row `r` moves to chunk `c ^ (r mod span/16)`),
//! box loads with out-of-bounds fill, and a hand-written copy kernel end to end.

use super::super::device::Device;
use super::super::tma::{load_box, store_box};
use super::*;

#[test]
fn swizzle_permutes_16_byte_chunks_by_the_row_within_the_span() {
    for (mode, rows) in [
        (TmaSwizzle::B32, 2u32),
        (TmaSwizzle::B64, 4),
        (TmaSwizzle::B128, 8),
    ] {
        for base in [0u32, 1024, 4096] {
            for r in 0..16u32 {
                for c in 0..8u32 {
                    for byte in [0u32, 5, 15] {
                        let addr = base + r * 128 + c * 16 + byte;
                        // Only the chunk index within the span changes.
                        let span_chunks = rows;
                        let within = c % span_chunks;
                        let moved = (c - within) + (within ^ (r % rows));
                        assert_eq!(
                            mode.apply(addr),
                            base + r * 128 + moved * 16 + byte,
                            "{mode:?} row {r} chunk {c}"
                        );
                    }
                }
            }
        }
    }
    assert_eq!(TmaSwizzle::None.apply(0x1234), 0x1234);
    // The 128B pattern is an involution and a permutation of each 1024-byte block.
    let mut seen = vec![false; 1024];
    for a in 0..1024 {
        let s = TmaSwizzle::B128.apply(a);
        assert_eq!(TmaSwizzle::B128.apply(s), a);
        seen[s as usize] = true;
    }
    assert!(seen.iter().all(|&s| s));
}

/// A bf16 tensor of `rows × cols` (row pitch `pitch` elements) with element (r, c) = r·1000 + c.
fn tensor(dev: &mut Device, rows: u64, cols: u64, pitch: u64) -> TensorMapDesc {
    let addr = dev.alloc((rows * pitch * 2) as usize);
    let mut bytes = Vec::new();
    for r in 0..rows {
        for c in 0..pitch {
            bytes.extend_from_slice(&((r * 1000 + c) as u16).to_le_bytes());
        }
    }
    dev.write(addr, &bytes).unwrap();
    TensorMapDesc {
        elem: TmaElem::Bf16,
        global_address: addr,
        dims: vec![cols, rows],
        strides_bytes: vec![pitch * 2],
        box_dims: vec![64, 8],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzle::B128,
        oob_fill: OobFill::Zero,
    }
}

#[test]
fn box_load_swizzles_and_fills_out_of_bounds_with_zero() {
    let mut dev = Device::new();
    let map = tensor(&mut dev, 10, 70, 72);
    map.validate().unwrap();
    let mut smem = vec![0xffu8; 4096];
    // Box at column 32, row 5: columns 70.. and rows 10.. are outside.
    load_box(&map, &[32, 5], &dev, &mut smem, 1024).unwrap_or_else(|_| panic!("fault"));
    for r in 0..8u32 {
        for c in 0..64u32 {
            let plain = 1024 + (r * 64 + c) * 2;
            let at = TmaSwizzle::B128.apply(plain) as usize;
            let v = u16::from_le_bytes([smem[at], smem[at + 1]]);
            let (gr, gc) = (5 + r, 32 + c);
            let want = if gr < 10 && gc < 70 {
                (gr * 1000 + gc) as u16
            } else {
                0
            };
            assert_eq!(v, want, "box element ({r}, {c})");
        }
    }
    // Storing the box back writes only the in-bounds elements.
    let before = dev.read(map.global_address, 10 * 72 * 2).unwrap();
    store_box(&map, &[32, 5], &mut dev, &smem, 1024).unwrap_or_else(|_| panic!("fault"));
    assert_eq!(dev.read(map.global_address, 10 * 72 * 2).unwrap(), before);
}

#[test]
fn encoder_rules_are_checked() {
    let mut dev = Device::new();
    let mut map = tensor(&mut dev, 4, 64, 64);
    map.box_dims = vec![128, 8];
    assert!(
        map.validate()
            .unwrap_err()
            .contains("exceeds the 128-byte swizzle span")
    );
    // 32 bf16 = 64-byte rows under the 128-byte swizzle: the hardware's rows would be a span
    // apart, which the emulator does not model, so it refuses the map like the compiler does.
    map.box_dims = vec![32, 8];
    assert!(
        map.validate()
            .unwrap_err()
            .contains("narrower than the 128-byte swizzle span")
    );
    map.swizzle = TmaSwizzle::B64;
    map.validate().unwrap();
    map.swizzle = TmaSwizzle::B128;
    map.box_dims = vec![64, 8];
    map.strides_bytes = vec![100];
    assert!(map.validate().unwrap_err().contains("multiple of 16"));
}

/// A hand-written copy kernel in the shape tirx emits: thread 0 arms the barrier and issues
/// the load, everyone waits on phase 0, thread 0 stores the tile back and waits for it.
pub(super) fn copy_kernel(cvta: bool) -> ptx::Module {
    module(COPY_PARAMS, &copy_body(cvta))
}

/// The copy kernel's parameters.
pub(super) const COPY_PARAMS: &str =
    ".param .align 64 .b8 p_src[128], .param .align 64 .b8 p_dst[128]";

/// The copy kernel's body.
pub(super) fn copy_body(cvta: bool) -> String {
    let cvta = if cvta {
        "\tcvta.param.u64 %rd3, %rd3;\n\tcvta.param.u64 %rd4, %rd4;\n"
    } else {
        ""
    };
    format!(
        "\tmov.u32 %r0, %tid.x;\n\tmov.u32 %r1, smem;\n\tadd.u32 %r1, %r1, 1023;\n\
         \tand.b32 %r1, %r1, -1024;\n\tadd.u32 %r2, %r1, 1024;\n\
         \tmov.u32 %r3, %ctaid.x;\n\tmul.lo.u32 %r3, %r3, 64;\n\
         \tmov.u32 %r4, %ctaid.y;\n\tmul.lo.u32 %r4, %r4, 8;\n\
         \tsetp.eq.u32 %p0, %r0, 0;\n\
         \t@%p0 mbarrier.init.shared::cta.b64 [%r1], 1;\n\tbar.sync 0;\n\
         \t@!%p0 bra $L_wait;\n\
         \tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 1024;\n\
         \tmov.u64 %rd3, p_src;\n\tmov.u64 %rd4, p_dst;\n{cvta}\
         \tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd3, {{%r3, %r4}}], [%r1];\n\
         $L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n\t@!%p1 bra $L_wait;\n\
         \t@!%p0 bra $L_end;\n\
         \tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd4, {{%r3, %r4}}], [%r2];\n\
         \tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;\n\
         $L_end:\n\tret;\n"
    )
}

#[test]
fn tma_copy_kernel_round_trips_an_odd_tensor() {
    let m = copy_kernel(true);
    for seed in 0..5 {
        let mut dev = Device::new();
        let src = tensor(&mut dev, 21, 130, 136);
        let mut dst = tensor(&mut dev, 21, 130, 136);
        let poison = vec![0xee; 21 * 136 * 2];
        dev.write(dst.global_address, &poison).unwrap();
        dst.swizzle = TmaSwizzle::B128;
        let launch = Launch {
            grid: [3, 3, 1],
            cluster: [1, 1, 1],
            block: [128, 1, 1],
            smem_bytes: 1024 + 2048,
        };
        let params = [
            ParamValue::TensorMap(src.clone()),
            ParamValue::TensorMap(dst.clone()),
        ];
        let stats = run(&m, "k", &launch, &params, &mut dev, seed).unwrap();
        assert_eq!(stats.async_ops, 18, "9 loads and 9 stores");
        let got = dev.read(dst.global_address, 21 * 136 * 2).unwrap();
        for r in 0..21usize {
            for c in 0..136usize {
                let v = u16::from_le_bytes([got[(r * 136 + c) * 2], got[(r * 136 + c) * 2 + 1]]);
                // The grid covers columns 0..192 and rows 0..24; the padding 130..136 is
                // outside the tensor, so the store leaves it poisoned.
                let want = if c < 130 {
                    (r * 1000 + c) as u16
                } else {
                    0xeeee
                };
                assert_eq!(v, want, "seed {seed} ({r}, {c})");
            }
        }
    }
}

#[test]
fn a_tensor_map_without_cvta_param_is_diagnosed() {
    let m = copy_kernel(false);
    let mut dev = Device::new();
    let src = tensor(&mut dev, 8, 64, 64);
    let params = [
        ParamValue::TensorMap(src.clone()),
        ParamValue::TensorMap(src),
    ];
    let e = run(&m, "k", &one_cta(128, 3072), &params, &mut dev, 0).unwrap_err();
    assert!(e.to_string().contains("cvta.param"), "{e}");
}

/// A tile-mode box must start 16-byte aligned in the innermost dimension (the GPU raises an
/// illegal instruction otherwise): a load at column 64·x + 3 of a bf16 tensor is diagnosed at
/// its line, one at 64·x + 8 (16 bytes) runs.
#[test]
fn a_box_starting_off_16_bytes_in_the_innermost_dimension_is_diagnosed() {
    for (add, bad) in [(3, true), (8, false)] {
        let body = copy_body(true).replace(
            "mul.lo.u32 %r3, %r3, 64;",
            &format!("mul.lo.u32 %r3, %r3, 64;\n\tadd.u32 %r3, %r3, {add};"),
        );
        let m = module(COPY_PARAMS, &body);
        let mut dev = Device::new();
        let src = tensor(&mut dev, 8, 64, 64);
        let params = [
            ParamValue::TensorMap(src.clone()),
            ParamValue::TensorMap(src),
        ];
        let r = run(&m, "k", &one_cta(128, 3072), &params, &mut dev, 0);
        if bad {
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains("innermost coordinate 3, 6 bytes") && e.contains("16-byte"),
                "{e}"
            );
        } else {
            r.unwrap();
        }
    }
}
