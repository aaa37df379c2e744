//! GPU tests of the row kernels (feature `gpu`; run on the H200, recorded in `docs/perf/`):
//! every config of every row kernel, and the host-side choice, against the f64 reference on
//! random rows, outputs poisoned first, with odd row counts and row lengths that are not a
//! multiple of the vector, the tile or 16 bytes (the edge paths).

use tirx::abi::AbiParam;
use tirx::problem::{Problem, RowOp};
use tirx::{Runtime, Target};
use tirx_kernels::catalogue;
use tirx_kernels::dispatch::Device;
use tirx_kernels::row_kernels::host;
use tirx_kernels::row_kernels::request::RowRequest;

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

#[test]
fn every_row_kernel_config_matches_the_f64_reference_with_tails() {
    let rt = rt();
    let mut failures = Vec::new();
    let mut runs = 0;
    for k in catalogue::all() {
        for a in k.artifacts.iter().filter(|a| a.target == Target::Sm90a) {
            let Some(Problem::Row(op)) = a.problem else {
                continue;
            };
            let cap = host::capacity(a).expect("row kernels declare their capacity");
            // Full tiles, one column, odd lengths, lengths just under and over a vector, and
            // (for the chunked kernels) several chunks with a ragged last one.
            // Issue #32's widths: 4999 and 7171 (odd: unaligned rows), 5000 (a multiple of 8
            // in a longer tile: the masked-vector path).
            let mut cols = vec![
                1,
                7,
                9,
                100,
                1000,
                4999,
                5000,
                7171,
                cap.min(8192),
                cap.min(8192) - 3,
                cap - 1,
            ];
            if cap > 65536 {
                cols.extend([8192 * 3 + 5, 65536, 70001]);
            } else {
                cols.push(cap);
            }
            // Issue #32's odd widths past 16k: 16385 and 20001 (the kernels staging them
            // through `x`'s flat view, `staged_odd.rs`) and GPT-2's 50257 (past their 32k).
            cols.extend([16385, 20001, 50257]);
            cols.retain(|&n| n <= cap);
            // A kernel that stages rows by TMA through a 2-D map of `x` takes 16-byte aligned
            // rows only: its lengths are rounded up to a multiple of 8, and an odd one must be
            // a typed error (a map of the flat view `xf` takes any row).
            let tma = (a.signature)()
                .params
                .iter()
                .any(|p| matches!(p, AbiParam::TensorMap { tensor, .. } if tensor == "x"));
            if tma {
                for n in cols.iter_mut() {
                    *n = (n.div_ceil(8) * 8).min(cap);
                }
                cols.dedup();
                match host::check(&rt, a, op, (3, 1001), 1) {
                    Err(e) if e.to_string().contains("multiple of 16") => {}
                    other => failures.push(format!(
                        "{} {}: an unaligned row gave {:?}, not the planner's error",
                        k.name,
                        a.config,
                        other.map(|r| r.ok)
                    )),
                }
            }
            for (i, &n) in cols.iter().enumerate() {
                for m in [1, 3, 37] {
                    runs += 1;
                    match host::check(&rt, a, op, (m, n), 40 + i as u64) {
                        Ok(r) if r.ok => {}
                        Ok(r) => {
                            failures.push(format!("{} {} {m}x{n}: {}", k.name, a.config, r.blocks))
                        }
                        Err(e) => failures.push(format!("{} {} {m}x{n}: {e}", k.name, a.config)),
                    }
                }
            }
        }
    }
    assert!(runs > 100, "expected every row kernel config, ran {runs}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The persistent double-buffered kernels (`staged_pipe.rs`, issue #32) with more rows than
/// their grid has clusters on this device (`SMS·W·15/16 / CS`): each cluster walks two or
/// three rows, so the ring's stages, the pipeline's phases and the cluster exchange's rounds
/// wrap; rows of the full capacity and rows whose last parts are ragged or past `N`
/// (zero-filled).
#[test]
fn staged_pipe_kernels_walk_several_rows_per_cluster() {
    let rt = rt();
    let sms = rt.sm_count() as usize;
    let mut failures = Vec::new();
    let mut runs = 0;
    for k in catalogue::all()
        .into_iter()
        .filter(|k| k.name.ends_with("_staged_pipe"))
    {
        for a in k.artifacts.iter().filter(|a| a.target == Target::Sm90a) {
            let Some(Problem::Row(op)) = a.problem else {
                continue;
            };
            let int = |c: &str| a.int(c).expect("a config constant") as usize;
            let (cap, p) = (int("CAP"), int("P"));
            let clusters = sms * int("W") * 15 / 16 / int("CS");
            let m = 2 * clusters + 3;
            for (i, n) in [cap, cap - p - p / 2 - 8].into_iter().enumerate() {
                runs += 1;
                match host::check(&rt, a, op, (m, n), 90 + i as u64) {
                    Ok(r) if r.ok => {}
                    Ok(r) => {
                        failures.push(format!("{} {} {m}x{n}: {}", k.name, a.config, r.blocks))
                    }
                    Err(e) => failures.push(format!("{} {} {m}x{n}: {e}", k.name, a.config)),
                }
            }
        }
    }
    assert!(runs >= 12, "expected every staged_pipe config, ran {runs}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_host_side_choice_is_correct_for_every_length_class() {
    let rt = rt();
    for op in RowOp::ALL {
        for (i, n) in [
            5, 1000, 1024, 1500, 3000, 4096, 4999, 5000, 6000, 7171, 8200, 10000, 14000, 16384,
            20000, 20001, 24577, 30001, 32768, 40000, 50257, 65536, 65539, 99999, 262144,
        ]
        .into_iter()
        .enumerate()
        {
            // The request on the tensors `check` allocates: row-major, 256-byte aligned.
            let request = RowRequest::contiguous(op, 9, n);
            let c = host::choose(&request, &Device::of(&rt).unwrap()).expect("a kernel fits");
            let (k, a) = (c.kernel, c.artifact);
            let r = host::check(&rt, a, op, (9, n), 70 + i as u64).expect("runs");
            assert!(r.ok, "{op} 9x{n} by {} {}: {}", k.name, a.config, r.blocks);
        }
    }
}

/// Rows of an odd length up to 16384 columns (issue #32) go to the register kernels that hold
/// them from their first 16-byte aligned column (`softmax_odd`, `rmsnorm_odd_rows` up to 4096
/// columns and `rmsnorm_odd` past them, `layernorm_odd`: `ODD = 1`), and match the f64 reference: random rows, outputs poisoned,
/// row counts that give every head length (0 to 7 columns before the aligned one).
#[test]
fn odd_rows_up_to_16k_columns_take_the_kernels_that_hold_them_from_the_aligned_column() {
    let rt = rt();
    let dev = Device::of(&rt).unwrap();
    for op in RowOp::ALL {
        for (i, (m, n)) in [
            (16384, 1001),
            (4099, 1003),
            (8192, 2047),
            (8192, 3001),
            (4096, 3999),
            (1027, 4095),
            (33, 7),
            (4096, 4999),
            (1031, 7171),
            (520, 16383),
        ]
        .into_iter()
        .enumerate()
        {
            let c = host::choose(&RowRequest::contiguous(op, m, n), &dev).expect("a kernel fits");
            let a = c.artifact;
            assert_eq!(
                a.int("ODD"),
                Some(1),
                "{op} {m}x{n}: {} {}",
                c.kernel.name,
                a.config
            );
            let r = host::check(&rt, a, op, (m, n), 110 + i as u64).expect("runs");
            assert!(
                r.ok,
                "{op} {m}x{n} by {} {}: {}",
                c.kernel.name, a.config, r.blocks
            );
        }
    }
}

/// Rows of an odd length past 16384 columns (issue #32) up to 32768 go to the kernels that
/// stage them by TMA through `x`'s flat view (`staged_odd.rs`: `ODD = 1`, a `CAP`, the tensor
/// `xf`, three or four CTAs an SM); longer odd rows to the walkers (`CAP`, no `ODD`: larger
/// staged configs measured slower and were deleted, `staged_odd.rs`). Each matches the f64
/// reference: random rows, outputs poisoned, row counts that give every head length.
#[test]
fn odd_rows_past_16k_columns_are_staged_through_the_flat_view() {
    let rt = rt();
    let dev = Device::of(&rt).unwrap();
    for op in RowOp::ALL {
        for (i, (m, n)) in [
            (2048, 20001),
            (1024, 50257),
            (4096, 16385),
            (512, 99999),
            (1031, 32767),
            (37, 40009),
        ]
        .into_iter()
        .enumerate()
        {
            let c = host::choose(&RowRequest::contiguous(op, m, n), &dev).expect("a kernel fits");
            let a = c.artifact;
            let flat = (a.signature)().tensors.iter().any(|t| t.name == "xf");
            let what = format!("{op} {m}x{n}: {} {}", c.kernel.name, a.config);
            if n <= 32768 {
                assert!(a.int("ODD") == Some(1) && flat, "{what}");
            } else {
                assert!(a.int("CAP").is_some() && !flat, "{what}");
            }
            let r = host::check(&rt, a, op, (m, n), 150 + i as u64).expect("runs");
            assert!(r.ok, "{what}: {}", r.blocks);
        }
    }
}

#[test]
fn a_missing_vector_is_a_typed_error_before_launch() {
    let rt = rt();
    let x = rt.zeros::<half::bf16>(&[4, 64]).unwrap();
    let mut y = rt.zeros::<half::bf16>(&[4, 64]).unwrap();
    let args = host::RowArgs {
        x: &x,
        w: None,
        b: None,
        eps: 1e-6,
    };
    let e = host::run(&rt, RowOp::RmsNorm, &args, &mut y).unwrap_err();
    assert!(
        e.to_string()
            .contains("takes the tensor `w`, which this problem lacks"),
        "{e}"
    );
}

#[test]
fn silu_mul_matches_the_f64_reference_with_tails_in_both_dimensions() {
    let rt = rt();
    let silu_muls = catalogue::all()
        .into_iter()
        .flat_map(|k| k.artifacts)
        .filter(|a| a.problem == Some(tirx::problem::Problem::SiluMul));
    for a in silu_muls {
        for (i, (m, n)) in [
            (1, 1),
            (7, 9),
            (8, 512),
            (33, 1000),
            (1000, 4100),
            (4096, 4096),
        ]
        .into_iter()
        .enumerate()
        {
            let r = host::check_silu_mul(&rt, a, (m, n), 90 + i as u64).expect("runs");
            assert!(r.ok, "{} {m}x{n}: {}", a.config, r.blocks);
        }
    }
}
