//! Shapes a user constrains (issue #30 item 7, docs/language.md §3 and docs/contracts.md): a
//! fixed extent (`#[shape(M, 1)]`, `#[shape(M, 2 * HALF)]`) and a `static_assert` over shape
//! symbols are carried in the signature and checked by the one launch planner
//! (`tirx::runtime::plan_launch_with`) that the GPU runtime, the emulator and the Python
//! binding all plan through: a tensor that breaks one is a typed error before any launch, and
//! tensors that keep them run.

use tirx::prelude::*;
use tirx::runtime::{ElemType, RuntimeError, TensorMeta};
use tirx_kernels::simulate::{self, LaunchError, put};
use tirx_sim::Device;

use super::sim_exec::EMULATED;

/// `y = x` row tiles, where `y` is `2 · HALF` wide, `x` is `D` wide and `lse` one column.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (cdiv(M, 64), 1),
    configs(default = (HALF = 32)),
)]
pub fn halves(
    #[shape(M, D)] x: Tensor<f32>,
    #[shape(M, 2 * HALF)] y: Tensor<f32>,
    #[shape(M, 1)] lse: Tensor<f32>,
) {
    static_assert(D % 64 == 0);
    static_assert(HALF * 2 == D, "y holds x's two halves");
    let t = regs::<f32>([64, 64], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), t);
}

fn f32_tensor(dev: &mut Device, values: &[f32], shape: &[usize]) -> TensorMeta {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    put(dev, &bytes, ElemType::F32, shape)
}

/// Launches `halves` in the emulator on tensors of these shapes (x counting up, y poisoned).
fn run(x: [usize; 2], y: [usize; 2], lse: [usize; 2]) -> (Result<(), LaunchError>, Vec<f32>) {
    let mut dev = Device::new();
    let xs: Vec<f32> = (0..x[0] * x[1]).map(|i| i as f32).collect();
    let xt = f32_tensor(&mut dev, &xs, &x);
    let yt = f32_tensor(&mut dev, &vec![f32::NAN; y[0] * y[1]], &y);
    let lt = f32_tensor(&mut dev, &vec![0.0; lse[0] * lse[1]], &lse);
    let art = &halves::KERNEL.artifacts[0];
    let r = simulate::launch(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[xt, yt.clone(), lt], &[]),
        1,
        &EMULATED,
    );
    let bytes = dev.read(yt.addr, y[0] * y[1] * 4).expect("y's allocation");
    let out = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (r.map(|_| ()), out)
}

fn plan_error(r: Result<(), LaunchError>) -> RuntimeError {
    match r {
        Err(LaunchError::Plan(e)) => e,
        other => panic!("expected the planner to refuse the launch, got {other:?}"),
    }
}

#[test]
fn the_signature_carries_fixed_extents_and_checks() {
    let sig = (halves::KERNEL.artifacts[0].signature)();
    assert_eq!(sig.tensors[1].shape, ["M", "64"]);
    assert_eq!(sig.tensors[2].shape, ["M", "1"]);
    let texts: Vec<&str> = sig.checks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        ["D % 64 == 0", "HALF * 2 == D: y holds x's two halves"]
    );
    // A fixed extent is an immediate in the code, not a parameter the kernel loads.
    let art = &halves::KERNEL.artifacts[0];
    assert!(!art.ptx.contains("p_dim_64"), "{}", art.ptx);
    assert!(art.ptx.contains("p_dim_D"), "{}", art.ptx);
    // The config's constants are folded: the check compares 64 with `D`.
    assert!(
        sig.to_string()
            .contains("check eq(64, D) \"HALF * 2 == D: y holds x's two halves\""),
        "{sig}"
    );
}

#[test]
fn good_shapes_run() {
    let (r, y) = run([128, 64], [128, 64], [128, 1]);
    r.expect("the launch keeps every constraint");
    let want: Vec<f32> = (0..128 * 64).map(|i| i as f32).collect();
    assert_eq!(y, want);
}

#[test]
fn a_wrong_fixed_extent_is_refused_before_launch() {
    let (r, y) = run([128, 64], [128, 64], [128, 2]);
    let err = plan_error(r);
    assert!(
        matches!(&err, RuntimeError::FixedExtent { tensor, dim: 1, expected: 1, got: 2 } if tensor == "lse"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "tensor `lse` dim 1 is 2, but the kernel fixes it at 1"
    );
    assert!(y.iter().all(|v| v.is_nan()), "nothing ran");
    let err = plan_error(run([128, 64], [128, 32], [128, 1]).0);
    assert!(
        matches!(&err, RuntimeError::FixedExtent { tensor, expected: 64, got: 32, .. } if tensor == "y"),
        "{err:?}"
    );
}

#[test]
fn a_failed_shape_assertion_is_refused_before_launch() {
    // D = 96: not a multiple of 64.
    let (r, y) = run([128, 96], [128, 64], [128, 1]);
    let err = plan_error(r);
    assert!(
        matches!(&err, RuntimeError::ShapeAssert { assertion, values, .. }
            if assertion == "D % 64 == 0" && values == "D = 96"),
        "{err:?}"
    );
    assert!(y.iter().all(|v| v.is_nan()), "nothing ran");
    // D = 128: a multiple of 64, but not `2 · HALF`.
    let err = plan_error(run([128, 128], [128, 64], [128, 1]).0);
    assert_eq!(
        err.to_string(),
        "`halves_default_sm_90a` needs `HALF * 2 == D: y holds x's two halves`, which does not \
         hold with D = 128"
    );
}

/// The host dispatcher — what the Python binding and the Rust entry points choose with — judges
/// every candidate through the same planner: attention's `lse` is declared `[BH, S, 1]`, so an
/// LSE two columns wide is refused by every attention kernel with the planner's message.
#[test]
fn the_dispatcher_refuses_a_wrong_fixed_extent_through_the_planner() {
    use tirx_kernels::attention::request::{AttentionRequest, Dims};
    use tirx_kernels::catalogue;
    use tirx_kernels::dispatch::{self, Device, Reject};

    let dims = Dims {
        b: 1,
        s: 256,
        sk: 256,
        hq: 2,
        hk: 2,
    };
    let good = AttentionRequest::contiguous(dims, 64, ElemType::Bf16, false).unwrap();
    let mut bad = good.clone();
    bad.tensors[4] = TensorMeta::row_major(ElemType::F32, &[2, 256, 2], 0);
    let kernels = catalogue::all();
    let device = Device::h200();
    let accepted = |req: &AttentionRequest| {
        dispatch::judge(req, &kernels, &device)
            .into_iter()
            .filter(|v| v.outcome.is_ok())
            .count()
    };
    assert!(
        accepted(&good) > 0,
        "some attention kernel takes the good LSE"
    );
    assert_eq!(accepted(&bad), 0, "no kernel takes an LSE of two columns");
    let refusals: Vec<String> = dispatch::judge(&bad, &kernels, &device)
        .into_iter()
        .filter_map(|v| match v.outcome {
            Err(Reject::Launch(why)) => Some(why),
            _ => None,
        })
        .collect();
    assert!(!refusals.is_empty());
    for why in refusals {
        assert_eq!(why, "tensor `lse` dim 2 is 2, but the kernel fixes it at 1");
    }
}

/// `attention_sm100`'s MLA tile (`fa4_d192_128`: Q/K head dim 192, V/O 128) declares V and O
/// with their own width symbols and relates them to K's and Q's by `static_assert`s: the
/// planner launches it on V and O of the V head dim and refuses an O as wide as Q — the same
/// head dim for both — with the assertion's message.
#[test]
fn the_split_head_dim_attention_tile_checks_v_and_o_widths_at_launch() {
    use tirx_kernels::attention::blackwell::kernels::attention_sm100;
    use tirx_kernels::attention::request::{AttentionRequest, Dims};
    let art = attention_sm100::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "fa4_d192_128")
        .expect("the MLA tile");
    let dims = Dims {
        b: 1,
        s: 256,
        sk: 256,
        hq: 4,
        hk: 2,
    };
    let good = AttentionRequest::contiguous_split(dims, (192, 128), ElemType::Bf16, false)
        .expect("a valid request");
    let sig = (art.signature)();
    let limits = tirx_kernels::dispatch::Device::b200().limits;
    let plan = |t: &[TensorMeta]| tirx::runtime::plan_launch_with(&sig, t, &[1.0], &limits);
    assert!(
        plan(&good.tensors).is_ok(),
        "{:?}",
        plan(&good.tensors).err()
    );
    for (i, width, why) in [
        (3, 4 * 192, "o must be [B, S, HQ·D_V]"),
        (2, 2 * 192, "v must be [B, SK, HK·D_V]"),
    ] {
        let mut bad = good.tensors.clone();
        bad[i] = TensorMeta::row_major(ElemType::Bf16, &[1, 256, width], 0);
        match plan(&bad) {
            Err(RuntimeError::ShapeAssert { assertion, .. }) => {
                assert!(assertion.contains(why), "{assertion}")
            }
            other => panic!("expected a shape assertion, got {other:?}"),
        }
    }
}
