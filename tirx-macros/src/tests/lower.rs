//! The IR built for valid kernels, and the generated code.

use super::*;
use tirx_ir::{Expr, Op, ScalarType, Scope, Space, StmtKind, TileRef};

/// A TMA copy through shared memory, one tile per CTA.
pub(crate) const COPY: &str = r#"
pub fn tma_copy(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    let tile = smem::<bf16>([BM, BN], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        bar.expect_tx(BM * BN * 2);
        tma::load(tile, src.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.y, cta.x), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}
"#;

/// The Blackwell GEMM main loop of DESIGN.md §3.
const GEMM_ATTR: &str = "targets(sm_90a, sm_100a), threads = 192, grid = (cdiv(N, BN), cdiv(M, BM)), \
                         configs(default = (BM = 128, BN = 256, BK = 64, STAGES = 4), small = (BM = 64, BN = 64, BK = 64, STAGES = 2))";
const GEMM: &str = r#"
fn gemm(#[shape(M, K)] a: Tensor<bf16>, #[shape(N, K)] b: Tensor<bf16>, #[shape(M, N)] d: Tensor<bf16>) {
    let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
    let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
    let acc = tmem::<f32>([BM, BN]);
    let pipe = pipeline::<STAGES>(consumers = 1);
    #[scope(warp = 0, elect)]
    for k in 0..cdiv(K, BK) {
        let s = pipe.producer_acquire(k);
        tma::load(a_s[s], a.tile(cta.y, k), pipe.full(s));
        tma::load(b_s[s], b.tile(cta.x, k), pipe.full(s));
    }
    #[scope(warp = 1, elect)]
    for k in 0..cdiv(K, BK) {
        let s = pipe.consumer_wait(k);
        tcgen05::mma(acc, a_s[s], b_s[s], accumulate = k > 0 && true);
        tcgen05::commit(pipe.empty(s));
    }
    #[scope(warps = 4..6)]
    {
        let mut n = (BM / 2) % 7 + lane_id;
        n += 1;
        if n >= 3 || !(warp_id == 4) { sync_threads(); } else if tid < 3 { wgmma::fence(); } else { fence::proxy_async(); }
        for j in (0..=8).step_by(2) { wgmma::wait(1); }
    }
}
"#;

/// The IR text of the copy kernel, line by line (the printer is tirx-ir's `Display`).
#[test]
fn copy_kernel_ir_text() {
    let low = lowered(STD_ATTR, COPY);
    let text = low.kernel.to_string();
    let expected = [
        "kernel tma_copy config default phase tile",
        "  const BM = 64",
        "  signature tma_copy_default_sm_90a",
        "    grid (cdiv(N, 64), cdiv(M, 64), 1)",
        "    tensor src: bf16[M, N]",
        "  buffer @tile: smem bf16 (64, 64):(64, 1) swizzle B128",
        "  barrier @bar: count 1 arrivals 1",
        "  scope thread 0 {",
        "    op mbar_arrive_expect_tx @bar[0:u32] bytes 8192",
        "    op copy @tile <- global src[ctaid.y, ctaid.x] bar @bar[0:u32] variant tma_load",
        "  op mbar_wait @bar[0:u32] parity 0:u32",
    ];
    for line in expected {
        assert!(
            text.lines().any(|l| l == line),
            "missing line {line:?} in\n{text}"
        );
    }
    // One span per statement, buffer and barrier: 2 declarations, 2 scopes, 6 ops.
    assert_eq!(low.spans.len(), 10);
    assert_eq!(low.kernel.body.len(), 3);
}

#[test]
fn copy_kernel_structure() {
    let low = lowered(STD_ATTR, COPY);
    let k = &low.kernel;
    assert_eq!(k.sig.entry, "tma_copy_default_sm_90a");
    assert_eq!(
        k.consts,
        vec![("BM".to_string(), 64), ("BN".to_string(), 64)]
    );
    let StmtKind::Scope {
        scope: Scope::Thread(0),
        body,
    } = &k.body[0].kind
    else {
        panic!("{:?}", k.body[0])
    };
    let StmtKind::Op(Op::Copy {
        dst,
        src,
        bar,
        multicast: None,
        scale: None,
        variant,
        pair: false,
        atomic: None,
    }) = &body[1].kind
    else {
        panic!("{body:?}")
    };
    assert!(matches!(dst, TileRef::Buf { index, .. } if index.is_empty()));
    assert!(
        matches!(src, TileRef::Global { tensor, coords, elements: None } if tensor == "src" && coords.len() == 2)
    );
    assert!(bar.is_some());
    assert_eq!(*variant, Some(tirx_ir::CopyVariant::TmaLoad));
}

#[test]
fn gemm_lowering() {
    let low = lowered(GEMM_ATTR, GEMM);
    let k = &low.kernel;
    let names: Vec<&str> = k.barriers.iter().map(|(_, b)| b.name.as_str()).collect();
    assert_eq!(names, ["pipe.full", "pipe.empty"]);
    let (_, acc) = k.buffers.iter().nth(2).unwrap();
    assert_eq!(
        (acc.space, acc.layout.shape.clone()),
        (Space::Tmem, vec![128, 256])
    );
    assert_eq!(k.pipelines.iter().next().unwrap().1.stages, 4);
    // `#[scope(warp = 0, elect)]` nests Elect inside the warp scope.
    let StmtKind::Scope {
        scope: Scope::Warp(0, 0),
        body,
    } = &k.body[0].kind
    else {
        panic!()
    };
    let StmtKind::Scope {
        scope: Scope::Elect,
        body,
    } = &body[0].kind
    else {
        panic!()
    };
    let StmtKind::For { body, .. } = &body[0].kind else {
        panic!()
    };
    assert!(matches!(
        body[0].kind,
        StmtKind::Op(Op::ProducerAcquire { .. })
    ));
    let text = k.to_string();
    for line in [
        "  scope warp 4..=5 {",
        "        op mma @acc <- @a_s[%3], @b_s[%3] accumulate %2 > 0:u32 variant tcgen05",
        "    let %4 = 1:u32 + lane_id",
        "    %4 = %4 + 1:u32",
        "    if !(!(%4 >= 3:u32) && warp_id == 4:u32) {",
        "    for %5 = 0:u32 to 9:u32 step 2:u32 {",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing line {line:?} in\n{text}"
        );
    }
}

#[test]
fn second_config_is_lowered_with_its_constants() {
    let (def, mut sink) = def(GEMM_ATTR, GEMM);
    let all = expand::lower_configs(&def, &TileFns::default(), &mut sink).ok;
    assert!(sink.is_empty());
    assert_eq!(all.len(), 2);
    let small = &all[1].1.kernel;
    assert_eq!(small.config, "small");
    assert_eq!(small.pipelines.iter().next().unwrap().1.stages, 2);
    assert_eq!(small.sig.grid[0].to_string(), "cdiv(N, 64)");
}

/// `SMS` (the device's SM count) and `/` stay symbolic in the grid; constants fold around them.
#[test]
fn the_grid_takes_the_sm_count() {
    let attr = GEMM_ATTR.replace(
        "grid = (cdiv(N, BN), cdiv(M, BM))",
        "grid = (SMS / 2 * 2, BN / 32)",
    );
    let (def, mut sink) = def(&attr, GEMM);
    let all = expand::lower_configs(&def, &TileFns::default(), &mut sink).ok;
    assert!(sink.is_empty());
    let grid = &all[0].1.kernel.sig.grid;
    assert_eq!(grid[0].to_string(), "mul(div(sms(), 2), 2)");
    assert_eq!(grid[1].to_string(), "8");
    assert_eq!(grid[0].eval(133, &|_| None), Some(132));
    assert_eq!(grid[0].eval(114, &|_| None), Some(114));
}

#[test]
fn scalars_are_typed_and_folded() {
    let low = lowered(
        STD_ATTR,
        "fn k(#[shape(M, N)] src: Tensor<bf16>) { let a = BM * 2 + 1; let p = tid < M && true; let q = !a; let mut c = cdiv(N, BN); c = max(c, 1); }",
    );
    let lets: Vec<_> = low.kernel.body.iter().map(|s| s.kind.clone()).collect();
    let StmtKind::Let { value, .. } = &lets[0] else {
        panic!()
    };
    assert_eq!(*value, Expr::Imm(129, ScalarType::U32));
    let StmtKind::Let { var, value } = &lets[1] else {
        panic!()
    };
    assert_eq!(low.kernel.vars[*var].ty, ScalarType::Pred);
    assert!(
        matches!(value, Expr::Cmp(..)),
        "`&& true` folds away: {value:?}"
    );
    assert!(matches!(
        &lets[2],
        StmtKind::Let {
            value: Expr::Bin(tirx_ir::BinOp::Xor, ..),
            ..
        }
    ));
    assert!(matches!(&lets[4], StmtKind::Assign { .. }));
}

#[test]
fn written_tensors_are_mut_in_the_launcher() {
    let (def, _) = def(STD_ATTR, COPY);
    assert_eq!(def.written.iter().collect::<Vec<_>>(), ["dst"]);
}

/// The whole expansion is valid Rust with the documented items.
#[test]
fn expansion_is_a_module() {
    let item: TokenStream = COPY.parse().unwrap();
    let out = expand::tile_kernel(STD_ATTR.parse().unwrap(), item);
    let file: syn::File = syn::parse2(out.clone()).expect("valid Rust");
    let text = out.to_string();
    assert_eq!(file.items.len(), 1, "{text}");
    for needle in [
        "pub mod tma_copy",
        "pub static ARTIFACTS",
        "fn __sig_default_sm_90a",
        "dst : & mut :: tirx :: Tensor < :: tirx :: bf16 >",
        "src : & :: tirx :: Tensor < :: tirx :: bf16 >",
        "unsafe { :: tirx :: KernelArtifact :: new (\"tma_copy\" , \"default\" , :: tirx :: Target :: Sm90a ,",
        "rt . launch_args (__art , & [src . view () , dst . view ()] , & [] ,)",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in {text}");
    }
    assert!(!text.contains("compile_error"), "{text}");
}

/// On errors: the compile errors plus the same module with no artifacts.
#[test]
fn expansion_with_errors_keeps_the_skeleton() {
    let item: TokenStream = COPY.replace("tma::load", "tma::lod").parse().unwrap();
    let out = expand::tile_kernel(STD_ATTR.parse().unwrap(), item);
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(
        text.contains("pub static ARTIFACTS : & [:: tirx :: KernelArtifact] = & []"),
        "{text}"
    );
    assert!(text.contains("pub fn launch"), "{text}");
    assert!(text.contains("dst : & mut"), "{text}");
    syn::parse2::<syn::File>(out).expect("valid Rust");
}
