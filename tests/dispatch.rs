//! Dispatch: when no variant fits an op, the error is a table of every candidate and why it
//! refused; a forced variant that does not apply says why.

use tirx_ir::parse::parse_module;
use tirx_ir::passes::run_pipeline;

fn messages(text: &str) -> String {
    let m = parse_module(text).expect("test input parses");
    let k = m.kernels.into_iter().next().expect("one kernel");
    match run_pipeline(k, false) {
        Ok(_) => panic!("expected a dispatch error"),
        Err(errs) => errs
            .iter()
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
            .join("\n---\n"),
    }
}

const HEADER: &str = "kernel bad config default phase tile
  signature bad_default_TARGET
    target TARGET
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  buffer @a_s: smem bf16 (128, 64):(64, 1) swizzle B128
  buffer @b_s: smem bf16 (128, 64):(64, 1) swizzle B128
";

#[test]
fn mma_with_a_register_accumulator_on_blackwell_lists_every_candidate() {
    let text = HEADER.replace("TARGET", "sm_100a")
        + "  buffer @acc: reg f32 (128, 128):(128, 1) swizzle none\n{\n  op mma @acc <- @a_s, @b_s accumulate 1:pred\n}\n";
    let msg = messages(&text);
    assert_eq!(
        msg,
        "no variant of `mma` fits on sm_100a; candidates:\n  \
         tcgen05  refused: accumulator `acc` is in reg; this path accumulates in tensor memory (`tmem::<f32>`)\n  \
         wgmma    refused: sm_100a has no wgmma (sm_90a only)"
    );
}

#[test]
fn copy_from_tmem_in_one_thread_names_the_scope_it_needs() {
    let text = HEADER.replace("TARGET", "sm_100a")
        + "  buffer @acc: tmem f32 (128, 128):(128, 1) swizzle none\n{\n  scope thread 0 {\n    op copy global a[0:u32, 0:u32] <- @acc\n  }\n}\n";
    let msg = messages(&text);
    assert!(
        msg.contains(
            "tmem_epilogue  refused: it runs on one thread; tcgen05.ld needs one whole warpgroup"
        ),
        "{msg}"
    );
    assert!(
        msg.contains("reg_epilogue   refused: the register fragment layout is wgmma's"),
        "{msg}"
    );
}

#[test]
fn forced_wgmma_on_a_tmem_accumulator_says_why() {
    let text = HEADER.replace("TARGET", "sm_90a")
        + "  buffer @acc: tmem f32 (128, 128):(128, 1) swizzle none\n{\n  op mma @acc <- @a_s, @b_s accumulate 1:pred variant wgmma\n}\n";
    let msg = messages(&text);
    assert!(
        msg.contains(
            "wgmma  refused: accumulator `acc` is in tmem; this path accumulates in registers"
        ),
        "{msg}"
    );
}

#[test]
fn f32_operands_are_refused_by_every_mma_variant() {
    let text = HEADER
        .replace("TARGET", "sm_90a")
        .replace("smem bf16", "smem f32")
        + "  buffer @acc: reg f32 (128, 128):(128, 1) swizzle none\n{\n  scope warpgroup 0..=0 {\n    op mma @acc <- @a_s, @b_s accumulate 1:pred\n  }\n}\n";
    let msg = messages(&text);
    assert!(
        msg.contains("wgmma    refused: A `a_s` holds f32; bf16, f16, e4m3 and e5m2 are supported"),
        "{msg}"
    );
}

#[test]
fn an_f32_staging_tile_must_have_32_column_blocks() {
    // 64-column f32 blocks are 256-byte rows: wider than the 128-byte swizzle span, so no TMA
    // box can store them (a plain `st.shared` of the fragment, `shared_store`, still can:
    // forced here to the staging path).
    let text = HEADER.replace("TARGET", "sm_90a")
        + "  buffer @acc: reg f32 (64, 128):(128, 1) swizzle none\n  buffer @d_s: smem f32 (2, 64, 64):(4096, 64, 1) swizzle B128\n{\n  scope warpgroup 0..=0 {\n    op copy @d_s <- @acc variant reg_stage\n  }\n}\n";
    let msg = messages(&text);
    assert!(
        msg.contains(
            "reg_stage  refused: `d_s` must be [4, 64, 32] with swizzle B128 (32-column f32 blocks of 128-byte rows, one TMA box each); it is [2, 64, 64] with swizzle B128"
        ),
        "{msg}"
    );
}

/// The pair's M = 128 (a 64-row accumulator) reads A from TMEM as this CTA's 64 rows; a
/// `[128, K]` TMEM A is refused, naming A and the shape it must have.
#[test]
fn the_pairs_m128_mma_with_a_128_row_tmem_a_is_refused_by_name() {
    let text = "kernel bad config default phase tile
  signature bad_default_sm_100a
    target sm_100a
    threads 128
    cluster (2, 1, 1)
    grid (2, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  buffer @a_t: tmem bf16 (128, 64):(64, 1) swizzle none
  buffer @b_s: smem bf16 (64, 64):(64, 1) swizzle B128
  buffer @acc: tmem f32 (64, 128):(128, 1) swizzle none
{
  scope thread 0 {
    op mma @acc <- @a_t, @b_s accumulate 1:pred cta_group 2
  }
}
";
    let msg = messages(text);
    assert!(
        msg.contains(
            "tcgen05  refused: cta_group = 2: this CTA's accumulator has 64 rows (M = 128 \
             across the pair), so A `a_t` in tmem must be its 64 rows, `tmem::<bf16>([64, K])`"
        ),
        "{msg}"
    );
}

/// Every copy and mma of a block, nested ones included.
fn each_op<'a>(block: &'a [tirx_ir::Stmt], f: &mut dyn FnMut(&'a tirx_ir::Op)) {
    use tirx_ir::StmtKind;
    for s in block {
        match &s.kind {
            StmtKind::Op(op) => f(op),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                each_op(then_body, f);
                each_op(else_body, f);
            }
            StmtKind::For { body, .. }
            | StmtKind::Loop { body, .. }
            | StmtKind::Scope { body, .. } => each_op(body, f),
            _ => {}
        }
    }
}

/// The typed variants' properties are the ones their dispatch entries accept: in every
/// shipped kernel after `dispatch-ops`, each copy's source and destination are in the memory
/// its variant says it reads and writes, and each mma's accumulator where its variant keeps
/// it — so the protocol checks, which ask those properties, judge the ops that are there.
/// Between them the kernels use every variant.
#[test]
fn every_dispatched_op_moves_what_its_variant_says() {
    use std::collections::BTreeSet;
    use tirx_ir::{CopyVariant, Kernel, Mem, MmaVariant, Op, Space, TileRef, VariantId};
    let mem = |k: &Kernel, t: &TileRef| match t {
        TileRef::Global { .. } => Mem::Global,
        TileRef::Buf { buf, .. } => match k.buffers[*buf].space {
            Space::Shared => Mem::Shared,
            Space::Tmem => Mem::Tmem,
            Space::Reg => Mem::Reg,
        },
    };
    let mut seen = BTreeSet::new();
    // The shipped kernels, and the test kernels of the paths none ships (ldmatrix, stmatrix
    // and their `.trans` forms, tcgen05.cp, register atomics, the TMA reduce-store).
    let tests: [&'static tirx::Kernel; 6] = [
        &crate::smem_kernels::smem_matrix::KERNEL,
        &crate::transpose::transpose_ld::KERNEL,
        &crate::transpose::transpose_st::KERNEL,
        &crate::tmem_a::tmem_a_cp::KERNEL,
        &crate::atomics::splitk_red::KERNEL,
        &crate::atomics::splitk_tma_reduce::KERNEL,
    ];
    for kernel in tirx_kernels::catalogue::all().into_iter().chain(tests) {
        for a in kernel.artifacts {
            let input = parse_module(a.ir).expect("parses").kernels.remove(0);
            let (_, snaps) = run_pipeline(input, true).expect("compiles");
            let after = snaps
                .iter()
                .find(|s| s.pass == "dispatch-ops")
                .expect("ran");
            let k = parse_module(&after.text).expect("parses").kernels.remove(0);
            let at = format!("{} {} {}", kernel.name, a.config, a.target.name());
            each_op(&k.body, &mut |op| match op {
                Op::Copy {
                    dst, src, variant, ..
                } => {
                    let v = variant.unwrap_or_else(|| panic!("{at}: an undispatched copy"));
                    assert_eq!((mem(&k, src), mem(&k, dst)), v.moves(), "{at}: {v}");
                    seen.insert(v.name());
                }
                Op::Mma { acc, variant, .. } => {
                    let v = variant.unwrap_or_else(|| panic!("{at}: an undispatched mma"));
                    assert_eq!(mem(&k, acc), v.accumulator(), "{at}: {v}");
                    seen.insert(v.name());
                }
                _ => {}
            });
        }
    }
    // Every variant's properties are checked against some op.
    let all: BTreeSet<_> = CopyVariant::ALL
        .iter()
        .map(|v| v.name())
        .chain(MmaVariant::ALL.iter().map(|v| v.name()))
        .collect();
    assert_eq!(seen, all, "variants no kernel here uses");
}
