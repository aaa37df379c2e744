//! Integer scalar arguments (issue #30 item 1): `n: i32` / `n: u32` kernel parameters passed
//! by value after the tensors, usable as runtime `u32` scalars (tile coordinates, TMA
//! coordinates, arithmetic) and in integer tile expressions, where an `i32` one next to an
//! `i32` tile is signed. Run in the emulator against a Rust reference on random data with
//! negative values; the planner refuses a value of another type with
//! `RuntimeError::ScalarType` before any launch.

use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx::runtime::{DeviceLimits, ElemType, ScalarArg, TensorMeta, plan_launch_args};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, put};
use tirx_sim::{Device, Policy};

use super::sim_exec::EMULATED;

/// Rows `32·(cta.x + first)…` of `ids` (a tile coordinate from a `u32` scalar), clamped
/// below at `lo` and shifted by it (signed: `lo` may be negative), and as floats scaled by
/// `scale`.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn offset_ids(
    #[shape(R, N)] ids: Tensor<i32>,
    #[shape(M, N)] out: Tensor<i32>,
    #[shape(M, N)] y: Tensor<f32>,
    lo: i32,
    first: u32,
    scale: f32,
) {
    let t = regs::<i32>([32, 64], layout = blocked(vec = 4));
    copy(t, ids.tile(cta.x + first, 0));
    copy(out.tile(cta.x, 0), (select(t < lo, lo, t) - lo) * 3);
    copy(y.tile(cta.x, 0), cast::<f32>(t + lo) * scale);
}

/// Row `row` of a table by TMA: an `i32` scalar as a TMA tile coordinate.
#[tile_kernel(target = sm_90a, threads = 32, grid = (1, 1))]
pub fn row_at(#[shape(V, 64)] table: Tensor<bf16>, #[shape(1, 64)] out: Tensor<bf16>, row: i32) {
    let row_s = smem::<bf16>([1, 64]);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(row_s, table.tile(row, 0), bar);
    }
    bar.wait(0);
    let r = regs::<bf16>([1, 64], layout = blocked(vec = 2));
    copy(r, row_s);
    copy(out.tile(0, 0), r);
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read_words(dev: &Device, t: &TensorMeta, n: usize) -> Vec<u32> {
    dev.read(t.addr, n * 4)
        .expect("the tensor's allocation")
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn launch(art: &KernelArtifact, dev: &mut Device, tensors: &[TensorMeta], scalars: &[ScalarArg]) {
    simulate::launch_args(
        art.ptx,
        &(art.signature)(),
        dev,
        (tensors, scalars),
        7,
        &EMULATED,
        &Policy::default(),
    )
    .expect("the kernel runs");
}

#[test]
fn integer_scalars_in_coordinates_and_tile_arithmetic() {
    // 70 output rows (a tail of 6 in the third CTA), 50 of a 64-column tile; `ids` has two
    // more 32-row tiles in front, skipped by `first = 2`.
    const M: usize = 70;
    const N: usize = 50;
    const R: usize = M + 64;
    let mut rng = Rng::new(41);
    let ids: Vec<i32> = (0..R * N)
        .map(|_| (rng.next_u64() % 2001) as i32 - 1000)
        .collect();
    for lo in [-250i32, 300] {
        let (first, scale) = (2u32, 0.375f32);
        let mut dev = Device::new();
        let it = put(
            &mut dev,
            &words(&ids.iter().map(|&v| v as u32).collect::<Vec<_>>()),
            ElemType::I32,
            &[R, N],
        );
        let ot = put(&mut dev, &vec![0xa5; M * N * 4], ElemType::I32, &[M, N]);
        let yt = put(&mut dev, &vec![0xa5; M * N * 4], ElemType::F32, &[M, N]);
        let scalars = [lo.into(), first.into(), scale.into()];
        launch(
            &offset_ids::KERNEL.artifacts[0],
            &mut dev,
            &[it, ot.clone(), yt.clone()],
            &scalars,
        );
        let (out, y) = (read_words(&dev, &ot, M * N), read_words(&dev, &yt, M * N));
        for r in 0..M {
            for c in 0..N {
                let t = ids[(r + 32 * first as usize) * N + c];
                let want = (t.max(lo) - lo).wrapping_mul(3);
                assert_eq!(out[r * N + c] as i32, want, "lo {lo}, row {r}, column {c}");
                let wy = ((t + lo) as f64 * scale as f64) as f32;
                assert_eq!(
                    f32::from_bits(y[r * N + c]),
                    wy,
                    "lo {lo}, row {r}, column {c}"
                );
            }
        }
    }
}

#[test]
fn an_i32_scalar_is_a_tma_coordinate() {
    const V: usize = 9;
    let mut rng = Rng::new(42);
    let table: Vec<u16> = (0..V * 64)
        .map(|_| (rng.unit().to_bits() >> 16) as u16)
        .collect();
    let tb: Vec<u8> = table.iter().flat_map(|h| h.to_le_bytes()).collect();
    for row in [0i32, 5, V as i32 - 1] {
        let mut dev = Device::new();
        let tt = put(&mut dev, &tb, ElemType::Bf16, &[V, 64]);
        let ot = put(&mut dev, &[0xa5; 128], ElemType::Bf16, &[1, 64]);
        launch(
            &row_at::KERNEL.artifacts[0],
            &mut dev,
            &[tt, ot.clone()],
            &[row.into()],
        );
        let got = dev.read(ot.addr, 128).expect("the output");
        let want = &tb[row as usize * 128..(row as usize + 1) * 128];
        assert_eq!(got, want, "row {row}");
    }
}

/// The PTX declares the integer scalars `.s32`/`.u32` and reads them where they are used.
#[test]
fn integer_scalars_are_typed_parameters() {
    let ptx = offset_ids::KERNEL.artifacts[0].ptx;
    assert!(ptx.contains(".param .s32 p_s_lo"), "{ptx}");
    assert!(ptx.contains(".param .u32 p_s_first"), "{ptx}");
    assert!(ptx.contains(".param .f32 p_s_scale"), "{ptx}");
    // `t < lo` compares signed: an i32 scalar next to an i32 tile is i32.
    assert!(ptx.contains("setp.lt.s32"), "{ptx}");
    let sig = (offset_ids::KERNEL.artifacts[0].signature)();
    assert_eq!(
        sig.scalar_types,
        vec![ElemType::I32, ElemType::U32, ElemType::F32]
    );
}

/// A value of another type than the scalar's parameter, or a count that differs, is a typed
/// error before any launch; the `f32`-only entry points refuse an integer scalar too.
#[test]
fn a_scalar_of_the_wrong_type_is_refused_before_launch() {
    let sig = (offset_ids::KERNEL.artifacts[0].signature)();
    let limits = DeviceLimits::HOPPER;
    let t = |e, shape: &[usize]| TensorMeta::row_major(e, shape, 0x10000);
    let tensors = [
        t(ElemType::I32, &[128, 64]),
        t(ElemType::I32, &[64, 64]),
        t(ElemType::F32, &[64, 64]),
    ];
    let ok = [ScalarArg::I32(-3), ScalarArg::U32(2), ScalarArg::F32(1.0)];
    assert!(plan_launch_args(&sig, &tensors, &ok, &limits).is_ok());
    for (bad, name, expected, got) in [
        (
            [ScalarArg::F32(-3.0), ScalarArg::U32(2), ScalarArg::F32(1.0)],
            "lo",
            "i32",
            "f32",
        ),
        (
            [ScalarArg::I32(-3), ScalarArg::I32(2), ScalarArg::F32(1.0)],
            "first",
            "u32",
            "i32",
        ),
        (
            [ScalarArg::I32(-3), ScalarArg::U32(2), ScalarArg::U32(1)],
            "scale",
            "f32",
            "u32",
        ),
    ] {
        match plan_launch_args(&sig, &tensors, &bad, &limits) {
            Err(e @ tirx::RuntimeError::ScalarType { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!(
                        "scalar argument `{name}` is {expected}, but a {got} was passed"
                    )),
                    "{msg}"
                );
            }
            other => panic!("expected ScalarType for `{name}`, got {other:?}"),
        }
    }
    let short = [ScalarArg::I32(-3)];
    assert!(matches!(
        plan_launch_args(&sig, &tensors, &short, &limits),
        Err(tirx::RuntimeError::ScalarCount { .. })
    ));
    let floats = tirx::runtime::plan_launch_with(&sig, &tensors, &[1.0, 2.0, 3.0], &limits);
    assert!(
        matches!(floats, Err(tirx::RuntimeError::ScalarType { .. })),
        "{floats:?}"
    );
}

/// The kernels assemble for sm_90a without spills (ptxas where installed;
/// `TIRX_REQUIRE_PTXAS=1` makes it required): `ld.param.u32` of an `.s32` parameter included.
#[test]
fn the_integer_scalar_kernels_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [&offset_ids::KERNEL, &row_at::KERNEL] {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
        }
    }
}
