//! GPU tests of the runtime (feature `gpu`; they need an sm_90a device such as the H200): each
//! launches a small hand-written PTX kernel through [`Runtime::launch_ptx`] and compares the
//! result with a CPU reference, or checks that a wrong launch is refused before it reaches the
//! GPU.
//!
//! The kernels cover what the CPU tests cannot: the parameter buffer as the driver reads it, a
//! TMA descriptor passed by value (`cvta.param`), 128B swizzle, a 2×1×1 cluster launch, the
//! > 48 KB shared-memory opt-in, the JIT log, and the parameter-layout check.

use tirx_ir::abi::{AbiParam, ElemType, Signature, Swizzle, SymExpr, Target, TensorDecl};

use crate::{KernelArtifact, Runtime, RuntimeError};

fn rt() -> Runtime {
    Runtime::new(0).expect("the `gpu` tests need a GPU")
}

fn decl(name: &str, elem: ElemType, shape: &[&str]) -> TensorDecl {
    TensorDecl {
        name: name.into(),
        elem,
        shape: shape.iter().map(|s| s.to_string()).collect(),
    }
}

fn cdiv(sym: &str, by: u64) -> SymExpr {
    SymExpr::CeilDiv(
        Box::new(SymExpr::Sym(sym.into())),
        Box::new(SymExpr::Const(by)),
    )
}

/// y[r][c] = x[r][c] + 1 with x's rows `xs` elements apart; one CTA per row.
const ADD_ONE: &str = r#"
.version 8.0
.target sm_90a
.address_size 64

.visible .entry add_one(
    .param .u64 p_x,
    .param .u64 p_xs,
    .param .u64 p_y,
    .param .u32 p_c
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    .reg .f32 %f<3>;

    ld.param.u64 %rd1, [p_x];
    ld.param.u64 %rd2, [p_xs];
    ld.param.u64 %rd3, [p_y];
    ld.param.u32 %r1, [p_c];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    cvt.u64.u32 %rd4, %r2;
    mul.lo.u64 %rd5, %rd4, %rd2;
    cvt.u64.u32 %rd6, %r1;
    mul.lo.u64 %rd7, %rd4, %rd6;
LOOP:
    setp.ge.u32 %p1, %r3, %r1;
    @%p1 bra DONE;
    cvt.u64.u32 %rd8, %r3;
    add.u64 %rd9, %rd5, %rd8;
    shl.b64 %rd9, %rd9, 2;
    add.u64 %rd9, %rd1, %rd9;
    ld.global.f32 %f1, [%rd9];
    add.f32 %f2, %f1, 0f3F800000;
    add.u64 %rd10, %rd7, %rd8;
    shl.b64 %rd10, %rd10, 2;
    add.u64 %rd10, %rd3, %rd10;
    st.global.f32 [%rd10], %f2;
    add.u32 %r3, %r3, 256;
    bra LOOP;
DONE:
    ret;
}
"#;

fn add_one_sig() -> Signature {
    Signature {
        entry: "add_one".into(),
        target: Target::Sm90a,
        tensors: vec![
            decl("x", ElemType::F32, &["R", "C"]),
            decl("y", ElemType::F32, &["R", "C"]),
        ],
        scalars: vec![],
        scalar_types: vec![],
        params: vec![
            AbiParam::Pointer { tensor: "x".into() },
            AbiParam::Stride {
                tensor: "x".into(),
                dim: 0,
            },
            AbiParam::Pointer { tensor: "y".into() },
            AbiParam::Dim { symbol: "C".into() },
        ],
        threads: 256,
        cluster: [1, 1, 1],
        grid: [
            SymExpr::Sym("R".into()),
            SymExpr::Const(1),
            SymExpr::Const(1),
        ],
        checks: Vec::new(),
        smem_bytes: 0,
        tmem_cols: 0,
    }
}

/// Each CTA loads a 64×64 bf16 box of x (rows 64·ctaid..) with TMA into 1024-aligned dynamic
/// shared memory and copies it, unswizzling if `swizzled`, to the same rows of y.
fn tma_copy_ptx(entry: &str, swizzled: bool) -> String {
    // 128B swizzle: the 16-byte chunk j of row r sits at chunk j ^ (r % 8).
    let xor = if swizzled {
        "xor.b32 %r13, %r13, %r14;"
    } else {
        ""
    };
    format!(
        r#"
.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 16 .b8 dsmem[];

.visible .entry {entry}(
    .param .align 64 .b8 p_map[128],
    .param .u64 p_y,
    .param .u32 p_rows
)
{{
    .reg .pred %p<4>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;

    mov.u64 %rd1, p_map;
    cvta.param.u64 %rd2, %rd1;
    ld.param.u64 %rd3, [p_y];
    cvta.to.global.u64 %rd4, %rd3;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u64 %rd5, dsmem;
    cvt.u32.u64 %r3, %rd5;
    add.u32 %r3, %r3, 1023;
    and.b32 %r3, %r3, -1024;
    add.u32 %r4, %r3, 8192;
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra INIT_DONE;
    mbarrier.init.shared::cta.b64 [%r4], 1;
    fence.mbarrier_init.release.cluster;
INIT_DONE:
    bar.sync 0;
    @!%p1 bra WAIT;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r4], 8192;
    shl.b32 %r5, %r2, 6;
    mov.u32 %r6, 0;
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd2, {{%r6, %r5}}], [%r4];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], 0;
    @!%p2 bra WAIT;
    mov.u32 %r7, 0;
COPY:
    shl.b32 %r8, %r7, 7;
    add.u32 %r9, %r8, %r1;
    shr.u32 %r10, %r9, 6;
    and.b32 %r11, %r9, 63;
    shl.b32 %r12, %r11, 1;
    shr.u32 %r13, %r12, 4;
    and.b32 %r14, %r10, 7;
    {xor}
    shl.b32 %r15, %r13, 4;
    and.b32 %r16, %r12, 15;
    add.u32 %r15, %r15, %r16;
    shl.b32 %r17, %r10, 7;
    add.u32 %r15, %r15, %r17;
    add.u32 %r15, %r15, %r3;
    ld.shared.b16 %rs1, [%r15];
    shl.b32 %r18, %r2, 12;
    add.u32 %r18, %r18, %r9;
    mul.wide.u32 %rd6, %r18, 2;
    add.u64 %rd7, %rd4, %rd6;
    st.global.b16 [%rd7], %rs1;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p3, %r7, 32;
    @%p3 bra COPY;
    ret;
}}
"#
    )
}

fn tma_copy_sig(entry: &str, swizzle: Swizzle) -> Signature {
    Signature {
        entry: entry.into(),
        target: Target::Sm90a,
        tensors: vec![
            decl("x", ElemType::Bf16, &["R", "64"]),
            decl("y", ElemType::Bf16, &["R", "64"]),
        ],
        scalars: vec![],
        scalar_types: vec![],
        params: vec![
            AbiParam::TensorMap {
                tensor: "x".into(),
                box_dims: vec![64, 64],
                swizzle,
            },
            AbiParam::Pointer { tensor: "y".into() },
            AbiParam::Dim { symbol: "R".into() },
        ],
        threads: 128,
        cluster: [2, 1, 1],
        grid: [cdiv("R", 64), SymExpr::Const(1), SymExpr::Const(1)],
        // More than the 48 KB default, to exercise the opt-in.
        checks: Vec::new(),
        smem_bytes: 72 * 1024,
        tmem_cols: 0,
    }
}

fn ramp_bf16(n: usize) -> Vec<half::bf16> {
    (0..n)
        .map(|i| half::bf16::from_f32((i % 1000) as f32 - 500.0))
        .collect()
}

#[test]
fn opens_the_h200() {
    let rt = rt();
    assert_eq!(rt.compute_capability(), (9, 0), "{rt:?}");
    assert_eq!(rt.target().unwrap(), Target::Sm90a);
    assert!(rt.sm_count() >= 100, "{rt:?}");
    assert_eq!(rt.limits().max_dyn_smem, 227 * 1024, "{rt:?}");
    assert_eq!(rt.limits().max_threads_per_block, 1024);
    assert!(matches!(
        Runtime::new(4096),
        Err(RuntimeError::NoGpu { ordinal: 4096, .. })
    ));
}

#[test]
fn tensors_round_trip() {
    let rt = rt();
    let host = ramp_bf16(6 * 40);
    let t = rt.upload(&host, &[6, 40]).unwrap();
    assert_eq!(rt.download(&t).unwrap(), host);
    let h16: Vec<half::f16> = (0..77)
        .map(|i| half::f16::from_f32(i as f32 * 0.5))
        .collect();
    assert_eq!(
        rt.download(&rt.upload(&h16, &[7, 11]).unwrap()).unwrap(),
        h16
    );
    // Padded rows: the buffer is 3 × 8, the tensor 3 × 5.
    let padded: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let p = rt
        .from_slice_with_strides(&padded, &[3, 5], &[8, 1])
        .unwrap();
    assert_eq!(
        rt.download(&p).unwrap(),
        vec![
            0., 1., 2., 3., 4., 8., 9., 10., 11., 12., 16., 17., 18., 19., 20.
        ]
    );
    let mut z = rt.zeros::<f32>(&[4, 4]).unwrap();
    assert_eq!(rt.download(&z).unwrap(), vec![0.0; 16]);
    rt.poison(&mut z).unwrap();
    assert!(
        rt.download(&z)
            .unwrap()
            .iter()
            .all(|x| x.to_bits() == 0x7fde_adde)
    );
    assert!(matches!(
        rt.from_slice_with_strides(&padded, &[3, 9], &[8, 1]),
        Err(RuntimeError::BufferTooSmall {
            need: 25,
            have: 24,
            ..
        })
    ));
}

#[test]
fn pointer_kernel_with_padded_rows() {
    let rt = rt();
    let (r, c, stride) = (37, 300, 304);
    let host: Vec<f32> = (0..r * stride).map(|i| (i as f32) * 0.25).collect();
    let x = rt
        .from_slice_with_strides(&host, &[r, c], &[stride, 1])
        .unwrap();
    let mut y = rt.zeros::<f32>(&[r, c]).unwrap();
    rt.poison(&mut y).unwrap();
    // SAFETY: ADD_ONE reads x[R][C] through its row stride and writes y[R][C], as the signature says.
    unsafe { rt.launch_ptx(ADD_ONE, &add_one_sig(), &[x.view(), y.view()]) }.unwrap();
    let got = rt.download(&y).unwrap();
    let want: Vec<f32> = (0..r)
        .flat_map(|i| (0..c).map(move |j| (i * stride + j) as f32 * 0.25 + 1.0))
        .collect();
    assert_eq!(got, want);
}

/// A launch through [`Runtime::on_borrowed_stream`] goes to that stream (a stream cudarc owns
/// stands in for PyTorch's): its result is there once that stream alone is synchronized, and
/// the kernel loaded by one runtime is the other's too.
#[test]
fn launches_on_a_borrowed_stream() {
    let rt = rt();
    let (r, c) = (19, 257);
    let host: Vec<f32> = (0..r * c).map(|i| (i as f32) * 0.5 - 3.0).collect();
    let x = rt.upload(&host, &[r, c]).unwrap();
    let mut y = rt.zeros::<f32>(&[r, c]).unwrap();
    rt.poison(&mut y).unwrap();
    rt.synchronize().unwrap();
    let owner = rt.context().new_stream().unwrap();
    // SAFETY: `owner` is a live stream of rt's context and outlives `borrowed` and its work.
    let borrowed = unsafe { rt.on_borrowed_stream(owner.cu_stream()) };
    assert_eq!(borrowed.stream().cu_stream(), owner.cu_stream());
    assert_eq!(borrowed.name(), rt.name());
    // SAFETY: ADD_ONE reads x[R][C] through its row stride and writes y[R][C], as the signature says.
    unsafe { borrowed.launch_ptx(ADD_ONE, &add_one_sig(), &[x.view(), y.view()]) }.unwrap();
    owner.synchronize().unwrap();
    let got = rt.download(&y).unwrap();
    let want: Vec<f32> = host.iter().map(|v| v + 1.0).collect();
    assert_eq!(got, want);
    // The module loaded through `borrowed` is in the shared cache: a launch on rt's own stream
    // finds it (same PTX text, so no second load), and the result is the same.
    rt.poison(&mut y).unwrap();
    // SAFETY: as above.
    unsafe { rt.launch_ptx(ADD_ONE, &add_one_sig(), &[x.view(), y.view()]) }.unwrap();
    assert_eq!(rt.download(&y).unwrap(), want);
    assert_eq!(rt.loaded_kernels(), 1);
    assert_eq!(borrowed.loaded_kernels(), 1);
}

fn run_tma_copy(swizzle: Swizzle, entry: &str, swizzled: bool) {
    let rt = rt();
    let rows = 256;
    let host = ramp_bf16(rows * 64);
    let x = rt.upload(&host, &[rows, 64]).unwrap();
    let mut y = rt.zeros::<half::bf16>(&[rows, 64]).unwrap();
    rt.poison(&mut y).unwrap();
    let ptx = tma_copy_ptx(entry, swizzled);
    let sig = tma_copy_sig(entry, swizzle);
    // SAFETY: the kernel reads 64-row boxes of x through the descriptor and writes the same
    // rows of y; R is a multiple of 64 here.
    unsafe { rt.launch_ptx(&ptx, &sig, &[x.view(), y.view()]) }.unwrap();
    let got = rt.download(&y).unwrap();
    let bits = |v: &[half::bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&host));
}

#[test]
fn tma_copy_unswizzled_in_clusters_of_two() {
    run_tma_copy(Swizzle::None, "tma_copy_none", false);
}

#[test]
fn tma_copy_with_128b_swizzle() {
    run_tma_copy(Swizzle::B128, "tma_copy_b128", true);
}

#[test]
fn wrong_launches_are_refused_before_the_gpu() {
    let rt = rt();
    let entry = "tma_copy_refuse";
    let ptx = tma_copy_ptx(entry, false);
    let sig = tma_copy_sig(entry, Swizzle::None);
    // 192 rows → 3 CTAs, which clusters of 2 do not divide.
    let x = rt.upload(&ramp_bf16(192 * 64), &[192, 64]).unwrap();
    let y = rt.zeros::<half::bf16>(&[192, 64]).unwrap();
    let err = unsafe { rt.launch_ptx(&ptx, &sig, &[x.view(), y.view()]) }.unwrap_err();
    assert!(
        matches!(err, RuntimeError::ClusterDoesNotDivideGrid { .. }),
        "{err}"
    );
    // A misaligned base (one element in) is refused for TMA.
    let x = rt
        .upload(&ramp_bf16(256 * 64 + 1), &[256 * 64 + 1])
        .unwrap();
    let y = rt.zeros::<half::bf16>(&[256, 64]).unwrap();
    let xv = x.subview(1, &[256, 64], &[64, 1]).unwrap();
    let err = unsafe { rt.launch_ptx(&ptx, &sig, &[xv, y.view()]) }.unwrap_err();
    assert!(
        matches!(err, RuntimeError::BaseMisaligned { align: 16, .. }),
        "{err}"
    );
    // A kernel for another target.
    let art = unsafe { KernelArtifact::new("k", "default", Target::Sm100a, "", "", add_one_sig) };
    let err = rt.launch(&art, &[]).unwrap_err();
    assert!(matches!(
        err,
        RuntimeError::UnsupportedDevice {
            cc: (9, 0),
            want: Some(Target::Sm100a)
        }
    ));
    // The runtime still works afterwards.
    rt.synchronize().unwrap();
}

#[test]
fn signature_disagreeing_with_ptx_is_caught_at_load() {
    let rt = rt();
    let x = rt.zeros::<f32>(&[2, 8]).unwrap();
    let y = rt.zeros::<f32>(&[2, 8]).unwrap();
    // The PTX takes 4 parameters; claim a fifth.
    let mut sig = add_one_sig();
    sig.params.push(AbiParam::Dim { symbol: "R".into() });
    let err = unsafe { rt.launch_ptx(ADD_ONE, &sig, &[x.view(), y.view()]) }.unwrap_err();
    assert!(matches!(err, RuntimeError::BadSignature { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("has 4 parameter(s); the signature lists 5"),
        "{err}"
    );
    // Claim a 4-byte parameter where the PTX has an 8-byte stride.
    let mut sig = add_one_sig();
    sig.params[1] = AbiParam::Dim { symbol: "C".into() };
    let err = unsafe { rt.launch_ptx(ADD_ONE, &sig, &[x.view(), y.view()]) }.unwrap_err();
    assert!(
        err.to_string().contains("has 8 bytes in the PTX but 4"),
        "{err}"
    );
}

#[test]
fn jit_errors_carry_the_log() {
    let rt = rt();
    let bad = ADD_ONE.replace("add.f32 %f2, %f1, 0f3F800000;", "add.f32 %f2, %f1, %nope;");
    let mut sig = add_one_sig();
    sig.entry = "add_one".into();
    let x = rt.zeros::<f32>(&[2, 8]).unwrap();
    let y = rt.zeros::<f32>(&[2, 8]).unwrap();
    // A fresh runtime's cache has no `add_one` with this text.
    let err = unsafe { rt.launch_ptx(&bad, &sig, &[x.view(), y.view()]) }.unwrap_err();
    match &err {
        RuntimeError::ModuleLoad { log, .. } => assert!(log.contains("nope"), "{err}"),
        other => panic!("expected ModuleLoad, got {other}"),
    }
    let newer = ADD_ONE.replace(".version 8.0", ".version 9.1");
    let err = unsafe { rt.launch_ptx(&newer, &sig, &[x.view(), y.view()]) }.unwrap_err();
    eprintln!("PTX 9.1: {err}");
    assert!(matches!(err, RuntimeError::ModuleLoad { .. }), "{err}");
}

#[test]
fn times_launches() {
    let rt = rt();
    let x = rt.zeros::<f32>(&[1024, 1024]).unwrap();
    let y = rt.zeros::<f32>(&[1024, 1024]).unwrap();
    let sig = add_one_sig();
    let ms = rt
        .bench_ms(2, 10, || unsafe {
            rt.launch_ptx(ADD_ONE, &sig, &[x.view(), y.view()])
        })
        .unwrap();
    eprintln!("add_one 1024x1024: {ms:.4} ms");
    assert!(ms > 0.0 && ms < 100.0);
}

/// out[ctaid] = 10 · cluster CTA count + rank in the cluster.
const CLUSTER_RANKS: &str = r#"
.version 8.0
.target sm_90a
.address_size 64

.visible .entry cluster_ranks(
    .param .u64 p_out
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<2>;

    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [p_out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %cluster_ctarank;
    mov.u32 %r4, %cluster_nctarank;
    mad.lo.u32 %r5, %r4, 10, %r3;
    cvt.rn.f32.u32 %f1, %r5;
    mul.wide.u32 %rd2, %r2, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f1;
DONE:
    ret;
}
"#;

#[test]
fn cluster_attribute_reaches_the_kernel() {
    let rt = rt();
    let mut sig = Signature {
        entry: "cluster_ranks".into(),
        target: Target::Sm90a,
        tensors: vec![decl("out", ElemType::F32, &["G"])],
        scalars: vec![],
        scalar_types: vec![],
        params: vec![AbiParam::Pointer {
            tensor: "out".into(),
        }],
        threads: 32,
        cluster: [2, 1, 1],
        grid: [
            SymExpr::Sym("G".into()),
            SymExpr::Const(1),
            SymExpr::Const(1),
        ],
        checks: Vec::new(),
        smem_bytes: 0,
        tmem_cols: 0,
    };
    let mut out = rt.zeros::<f32>(&[8]).unwrap();
    rt.poison(&mut out).unwrap();
    // SAFETY: one f32 per CTA, G CTAs.
    unsafe { rt.launch_ptx(CLUSTER_RANKS, &sig, &[out.view()]) }.unwrap();
    assert_eq!(
        rt.download(&out).unwrap(),
        vec![20., 21., 20., 21., 20., 21., 20., 21.]
    );
    // Without a cluster the kernel sees clusters of one.
    sig.cluster = [1, 1, 1];
    unsafe { rt.launch_ptx(CLUSTER_RANKS, &sig, &[out.view()]) }.unwrap();
    assert_eq!(rt.download(&out).unwrap(), vec![10.; 8]);
}

/// The runtime keeps a prepared launch per artifact, tensors and scalars: launching the same
/// artifact on the same tensors again reuses it (one entry, same result), other tensors make
/// another entry, and a kept launch still runs on the tensors' current contents. A call that
/// differs in what the checks judge (a tensor of another shape) is checked, not served from the
/// cache.
#[test]
fn prepared_launches_are_kept_per_artifact_and_arguments() {
    // SAFETY: ADD_ONE's entry takes exactly add_one_sig's parameters and touches only x and y.
    static ART: KernelArtifact = unsafe {
        KernelArtifact::new(
            "add_one",
            "default",
            Target::Sm90a,
            ADD_ONE,
            "",
            add_one_sig,
        )
    };
    let rt = rt();
    let kept = || rt.launches().len();
    let before = kept();
    let (r, c) = (5, 130);
    let host: Vec<f32> = (0..r * c).map(|i| i as f32 * 0.25 - 7.0).collect();
    let x = rt.upload(&host, &[r, c]).unwrap();
    let mut y = rt.zeros::<f32>(&[r, c]).unwrap();
    let want: Vec<f32> = host.iter().map(|v| v + 1.0).collect();
    for _ in 0..3 {
        rt.poison(&mut y).unwrap();
        rt.launch(&ART, &[x.view(), y.view()]).unwrap();
        assert_eq!(rt.download(&y).unwrap(), want);
    }
    assert_eq!(
        kept(),
        before + 1,
        "three launches on the same tensors, one kept launch"
    );
    // New contents of the same buffers: the kept launch reads them.
    let host2: Vec<f32> = host.iter().map(|v| v * -2.0).collect();
    let x = {
        drop(x);
        rt.upload(&host2, &[r, c]).unwrap()
    };
    rt.poison(&mut y).unwrap();
    rt.launch(&ART, &[x.view(), y.view()]).unwrap();
    let want2: Vec<f32> = host2.iter().map(|v| v + 1.0).collect();
    assert_eq!(rt.download(&y).unwrap(), want2);
    // Another output tensor: another entry, and its own result.
    let mut z = rt.zeros::<f32>(&[r, c]).unwrap();
    rt.poison(&mut z).unwrap();
    rt.launch(&ART, &[x.view(), z.view()]).unwrap();
    assert_eq!(rt.download(&z).unwrap(), want2);
    assert!(kept() >= before + 2);
    // A disagreeing shape is refused (checked, never a kept launch), before the GPU.
    let small = rt.zeros::<f32>(&[r, c - 1]).unwrap();
    assert!(rt.launch(&ART, &[x.view(), small.view()]).is_err());
    assert!(rt.check_args(&ART, &[x.view(), small.view()], &[]).is_err());
    rt.check_args(&ART, &[x.view(), z.view()], &[]).unwrap();
}
