//! Tests of launch.rs that need no GPU: variant selection, the parameter buffer, the launch
//! cache, and the host path's timing (ignored; run with `--ignored --nocapture`).

use tirx_ir::abi::{AbiParam, ElemType, Swizzle, SymExpr, TensorDecl};

use super::*;
use crate::plan::{DeviceLimits, layout_params, plan_launch};

fn sig() -> Signature {
    Signature {
        entry: "copy_default_sm_90a".into(),
        target: Target::Sm90a,
        tensors: vec![TensorDecl {
            name: "x".into(),
            elem: ElemType::F32,
            shape: vec!["N".into()],
        }],
        scalars: vec![],
        scalar_types: vec![],
        params: vec![
            AbiParam::Dim { symbol: "N".into() },
            AbiParam::TensorMap {
                tensor: "x".into(),
                box_dims: vec![64],
                swizzle: Swizzle::None,
            },
            AbiParam::Pointer { tensor: "x".into() },
        ],
        threads: 128,
        cluster: [1, 1, 1],
        grid: [SymExpr::Const(1), SymExpr::Const(1), SymExpr::Const(1)],
        checks: Vec::new(),
        smem_bytes: 0,
        tmem_cols: 0,
    }
}

fn artifacts() -> [KernelArtifact; 3] {
    // SAFETY: never launched; only selected.
    unsafe {
        [
            KernelArtifact::new("copy", "default", Target::Sm90a, "", "", sig),
            KernelArtifact::new("copy", "default", Target::Sm100a, "", "", sig),
            KernelArtifact::new("copy", "wide", Target::Sm100a, "", "", sig),
        ]
    }
}

#[test]
fn select_finds_config_and_target() {
    let arts = artifacts();
    assert_eq!(
        select(&arts, "wide", Target::Sm100a).unwrap().config,
        "wide"
    );
    assert_eq!(
        select(&arts, "default", Target::Sm90a).unwrap().target,
        Target::Sm90a
    );
}

#[test]
fn select_lists_what_exists() {
    let err = select(&artifacts(), "wide", Target::Sm90a).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`copy` has no variant for config `wide` on sm_90a; compiled:\n  config `default` on \
         sm_90a\n  config `default` on sm_100a\n  config `wide` on sm_100a"
    );
    let err = select(&[], "default", Target::Sm90a).unwrap_err();
    assert!(err.to_string().ends_with("compiled: none"), "{err}");
}

#[test]
fn param_buffer_honours_offsets_and_alignment() {
    let s = sig();
    let meta = TensorMeta::row_major(ElemType::F32, &[1000], 0xdead_0000);
    let plan = plan_launch(&s, &[meta], &DeviceLimits::HOPPER).unwrap();
    // Dim at 0 (4 B), the map at 64 (64-aligned, 128 B), the pointer at 192.
    assert_eq!(plan.param_offsets, vec![0, 64, 192]);
    assert_eq!(plan.param_bytes, 200);
    assert_eq!(layout_params(&s), (plan.param_offsets.clone(), 200));
    let map = [0xabu8; 128];
    let buf = ParamBuffer::new(&plan, &[map]);
    let bytes = buf.bytes().to_vec();
    assert_eq!(bytes.len(), 200);
    assert_eq!(&bytes[0..4], &1000u32.to_ne_bytes());
    assert_eq!(&bytes[4..64], &[0u8; 60]);
    assert_eq!(&bytes[64..192], &map);
    assert_eq!(&bytes[192..200], &0xdead_0000u64.to_ne_bytes());
    let ptrs = buf.pointers();
    let ptrs = ptrs.as_slice();
    assert_eq!(ptrs.len(), 3);
    assert_eq!(
        ptrs[1] as usize % 64,
        0,
        "the descriptor's bytes are 64-aligned in host memory"
    );
    assert_eq!(ptrs[2] as usize - ptrs[0] as usize, 192);
}

#[test]
fn artifact_fields_are_readable() {
    let a = &artifacts()[2];
    assert_eq!(
        (a.kernel, a.config, a.target),
        ("copy", "wide", Target::Sm100a)
    );
    assert_eq!((a.signature)().entry, "copy_default_sm_90a");
}

/// The signature of `gemm_sm90_ws`'s `bf16_f16_n64` config, as its PTX declares the
/// parameters (`tests/snapshots/…gemm_sm90_ws__bf16_f16_n64__sm_90a__ptx.snap`): d[M, N] =
/// a[M, K]·b[N, K]ᵀ, A and B through TMA.
fn gemm_sig() -> Signature {
    let decl = |name: &str, elem, shape: [&str; 2]| TensorDecl {
        name: name.into(),
        elem,
        shape: shape.iter().map(|s| s.to_string()).collect(),
    };
    let tmap = |tensor: &str, box_dims: Vec<u32>| AbiParam::TensorMap {
        tensor: tensor.into(),
        box_dims,
        swizzle: Swizzle::B128,
    };
    let dim = |s: &str| AbiParam::Dim { symbol: s.into() };
    Signature {
        entry: "gemm_sm90_ws_bf16_f16_n64_sm_90a".into(),
        target: Target::Sm90a,
        tensors: vec![
            decl("a", ElemType::Bf16, ["M", "K"]),
            decl("b", ElemType::Bf16, ["N", "K"]),
            decl("d", ElemType::F16, ["M", "N"]),
        ],
        scalars: vec![],
        scalar_types: vec![],
        params: vec![
            tmap("a", vec![64, 128]),
            tmap("b", vec![64, 64]),
            dim("M"),
            dim("N"),
            AbiParam::Pointer { tensor: "d".into() },
            AbiParam::Stride {
                tensor: "d".into(),
                dim: 0,
            },
            dim("K"),
        ],
        threads: 384,
        cluster: [1, 1, 1],
        grid: [SymExpr::Const(64), SymExpr::Const(1), SymExpr::Const(1)],
        checks: Vec::new(),
        smem_bytes: 200_000,
        tmem_cols: 0,
    }
}

fn unreachable_sig() -> Signature {
    unreachable!("the host-path tests never build the artifact's signature")
}

/// An artifact of `gemm_sig`'s kernel (never launched: its signature function panics).
// SAFETY: never launched.
static GEMM: KernelArtifact = unsafe {
    KernelArtifact::new(
        "gemm_sm90_ws",
        "bf16_f16_n64",
        Target::Sm90a,
        "// the PTX text",
        "",
        unreachable_sig,
    )
};

/// A, B and D of a 128×4096×4096 GEMM at made-up device addresses.
fn gemm_metas() -> [TensorMeta; 3] {
    let (m, n, k) = (128usize, 4096usize, 4096usize);
    [
        TensorMeta::row_major(ElemType::Bf16, &[m, k], 0x7000_0000_0000),
        TensorMeta::row_major(ElemType::Bf16, &[n, k], 0x7000_1000_0000),
        TensorMeta::row_major(ElemType::F16, &[m, n], 0x7000_2000_0000),
    ]
}

fn detached(metas: &[TensorMeta]) -> Vec<TensorArg<'static>> {
    metas
        .iter()
        .map(|m| TensorArg::detached(m.clone(), 0x5555_0000))
        .collect()
}

/// The GEMM's parameter bytes, written out by hand in the C layout of its seven parameters
/// (two 64-aligned 128-byte descriptors, then M, N at 256 and 260, D's pointer and row
/// stride at 264 and 272, K at 280): what the launch handed the driver before the buffer was
/// kept, and must still hand it.
#[test]
fn gemm_param_bytes_follow_the_c_layout() {
    let sig = gemm_sig();
    let plan = plan_launch(&sig, &gemm_metas(), &DeviceLimits::HOPPER).unwrap();
    let maps = [[0x11u8; 128], [0x22u8; 128]];
    let buf = ParamBuffer::new(&plan, &maps);
    let mut want = vec![0u8; 284];
    want[0..128].copy_from_slice(&maps[0]);
    want[128..256].copy_from_slice(&maps[1]);
    want[256..260].copy_from_slice(&128u32.to_ne_bytes());
    want[260..264].copy_from_slice(&4096u32.to_ne_bytes());
    want[264..272].copy_from_slice(&0x7000_2000_0000u64.to_ne_bytes());
    want[272..280].copy_from_slice(&4096u64.to_ne_bytes());
    want[280..284].copy_from_slice(&4096u32.to_ne_bytes());
    assert_eq!(buf.bytes(), &want[..]);
    let ptrs = buf.pointers();
    let base = buf.bytes().as_ptr() as usize;
    let offsets: Vec<usize> = ptrs.as_slice().iter().map(|&p| p as usize - base).collect();
    assert_eq!(offsets, vec![0, 128, 256, 260, 264, 272, 280]);
    assert_eq!(base % 128, 0, "the buffer starts 128-aligned");
}

/// A kept launch is found again by an equal call (the same `Arc`, so the same parameter
/// bytes), and any argument that changes the parameters or the checks misses.
#[test]
fn launch_cache_hits_only_equal_calls() {
    let metas = gemm_metas();
    let args = detached(&metas);
    let plan = plan_launch(&gemm_sig(), &metas, &DeviceLimits::HOPPER).unwrap();
    let params = ParamBuffer::new(&plan, &[[1; 128], [2; 128]]);
    let cache: LaunchCache<ParamBuffer> = LaunchCache::default();
    let key = LaunchKey::of(&GEMM, &args, &[]);
    assert!(cache.get(&key).is_none());
    let kept = Arc::new(params.clone());
    cache.insert(&key, kept.clone());
    let again = detached(&metas);
    let hit = cache
        .get(&LaunchKey::of(&GEMM, &again, &[]))
        .expect("an equal call hits");
    assert!(Arc::ptr_eq(&hit, &kept));
    assert_eq!(hit.bytes(), params.bytes());
    assert_eq!(cache.len(), 1);

    let misses = |change: &dyn Fn(&mut TensorMeta), what: &str| {
        let mut metas = gemm_metas();
        change(&mut metas[2]);
        let args = detached(&metas);
        assert!(
            cache.get(&LaunchKey::of(&GEMM, &args, &[])).is_none(),
            "another {what} must miss"
        );
    };
    misses(&|m| m.addr += 256, "address");
    misses(&|m| m.elem = ElemType::Bf16, "element type");
    misses(&|m| m.strides[0] += 64, "stride");
    misses(
        &|m| *m = TensorMeta::row_major(m.elem, &[64, 8192], m.addr),
        "shape",
    );
    misses(
        &|m| *m = TensorMeta::row_major(m.elem, &[128, 4096, 1], m.addr),
        "rank",
    );
    let other_ctx: Vec<TensorArg<'_>> = metas
        .iter()
        .map(|m| TensorArg::detached(m.clone(), 0x6666_0000))
        .collect();
    assert!(cache.get(&LaunchKey::of(&GEMM, &other_ctx, &[])).is_none());
    let scaled = [ScalarArg::F32(1.0)];
    assert!(cache.get(&LaunchKey::of(&GEMM, &args, &scaled)).is_none());
    let other = GEMM.with_meta(&[], None);
    assert!(
        cache.get(&LaunchKey::of(&other, &args, &[])).is_some(),
        "the config's metadata is no part of the launch"
    );
    let mut other = GEMM;
    other.ptx = "// other PTX text";
    assert!(cache.get(&LaunchKey::of(&other, &args, &[])).is_none());
}

/// Median nanoseconds per call of `f`, over 51 batches of `per` calls.
fn median_ns(per: u32, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..51)
        .map(|_| {
            let started = std::time::Instant::now();
            (0..per).for_each(|_| f());
            started.elapsed().as_nanos() as f64 / f64::from(per)
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The host path of a kept launch up to `cuLaunchKernelEx`, timed on the CPU (no GPU): the
/// key's hash, the cache lookup and the `kernelParams` array and attributes, for the GEMM
/// above; then the path of a launch nothing was kept for, without the driver's parts (the
/// plan and the parameter bytes, descriptors not encoded). Prints the medians.
#[test]
#[ignore = "timing: cargo test --release -p tirx-runtime host_path -- --ignored --nocapture"]
fn host_path_timing() {
    let sig = gemm_sig();
    let metas = gemm_metas();
    let args = detached(&metas);
    let plan = plan_launch(&sig, &metas, &DeviceLimits::HOPPER).unwrap();
    let params = ParamBuffer::new(&plan, &[[0x11; 128], [0x22; 128]]);
    let cache: LaunchCache<(LaunchPlan, ParamBuffer)> = LaunchCache::default();
    cache.insert(&LaunchKey::of(&GEMM, &args, &[]), Arc::new((plan, params)));
    let hit = median_ns(10_000, || {
        let launch = cache.get(&LaunchKey::of(&GEMM, &args, &[])).unwrap();
        let attrs = launch_attributes(&launch.0, false);
        let pointers = launch.1.pointers();
        std::hint::black_box((&attrs, pointers.as_slice()));
    });
    let miss = median_ns(1_000, || {
        let metas: Vec<TensorMeta> = args.iter().map(|a| a.meta().clone()).collect();
        let plan = plan_launch(&sig, &metas, &DeviceLimits::HOPPER).unwrap();
        let params = ParamBuffer::new(&plan, &[[0x11; 128], [0x22; 128]]);
        std::hint::black_box(&params);
    });
    println!("host path of a kept launch: {hit:.0} ns; planning a new one: {miss:.0} ns");
}

/// A kernel with more parameters than the stack array holds gets them all, in order.
#[test]
fn many_parameters_spill_to_the_heap() {
    let n = 40;
    let plan = LaunchPlan {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        cluster: [1, 1, 1],
        smem_bytes: 0,
        params: (0..n).map(|i| PlannedParam::Dim(i as u32)).collect(),
        param_offsets: (0..n).map(|i| 4 * i).collect(),
        param_bytes: 4 * n,
        symbols: Vec::new(),
    };
    let buf = ParamBuffer::new(&plan, &[]);
    let mut ptrs = buf.pointers();
    let base = buf.bytes().as_ptr() as usize;
    let offsets: Vec<usize> = ptrs.as_slice().iter().map(|&p| p as usize - base).collect();
    assert_eq!(offsets, plan.param_offsets);
    assert_eq!(ptrs.as_mut_ptr().cast_const(), ptrs.as_slice().as_ptr());
    let third = ptrs.as_slice()[3].cast::<u32>();
    // SAFETY: points at parameter 3's four bytes inside `buf`, which is alive.
    assert_eq!(unsafe { third.read_unaligned() }, 3);
}
