//! Shipped artifacts in the CPU emulator (`tirx-sim`, issue #10): the launch planned exactly as
//! the runtime plans a GPU launch, and the tensors the emulator's device holds — one copy for
//! `tirx sim`, `tirx sim-compare` and the emulator tests.
//!
//! The plan is `tirx::runtime::plan_launch_args` (tensors checked against the signature; grid,
//! block, cluster, dynamic shared memory and one value per ABI parameter); a tensor map becomes
//! the `cuTensorMapEncodeTiled` arguments of `tirx::runtime::tiled_encoding` (what the runtime
//! passes the driver), with the zero out-of-bounds fill the runtime asks for.

use half::bf16;
use tirx::runtime::{
    DeviceLimits, ElemType, PlannedParam, ScalarArg, Signature, Swizzle, TensorMeta,
    plan_launch_args, tiled_encoding,
};
use tirx_sim::{
    Device, Launch, OobFill, ParamValue, Policy, Program, SimError, Stats, TensorMapDesc, TmaElem,
    TmaSwizzle, ptx,
};

use crate::reference::Rng;

/// Why an emulated launch did not complete.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The runtime's planner refused the tensors (what a GPU launch would refuse).
    #[error("{0}")]
    Plan(tirx::RuntimeError),
    /// The PTX does not parse.
    #[error("{0}")]
    Parse(ptx::ParseError),
    /// The emulator's verdict: an unsupported instruction or a diagnostic.
    #[error("{0}")]
    Sim(SimError),
}

/// Runs `ptx_text` (the PTX of an artifact with signature `sig`, or an edited copy of it) on
/// `tensors` and `scalars`, planned for a device of `limits`, with scheduler `seed`.
pub fn launch(
    ptx_text: &str,
    sig: &Signature,
    dev: &mut Device,
    (tensors, scalars): (&[TensorMeta], &[f32]),
    seed: u64,
    limits: &DeviceLimits,
) -> Result<Stats, LaunchError> {
    launch_with(
        ptx_text,
        sig,
        dev,
        (tensors, scalars),
        seed,
        limits,
        &Policy::default(),
    )
}

/// [`launch`] under a scheduling [`Policy`] other than the default (a launch register count
/// for `setmaxnreg`, how cluster-launch-control requests are answered, …).
pub fn launch_with(
    ptx_text: &str,
    sig: &Signature,
    dev: &mut Device,
    (tensors, scalars): (&[TensorMeta], &[f32]),
    seed: u64,
    limits: &DeviceLimits,
    policy: &Policy,
) -> Result<Stats, LaunchError> {
    let scalars: Vec<ScalarArg> = scalars.iter().map(|&v| ScalarArg::F32(v)).collect();
    launch_args(
        ptx_text,
        sig,
        dev,
        (tensors, &scalars),
        seed,
        limits,
        policy,
    )
}

/// [`launch_with`] with typed scalar arguments (`f32`, `i32`, `u32`, in the signature's
/// order), for kernels with integer scalars; a value of another type than its parameter is
/// the planner's `RuntimeError::ScalarType`, as on the GPU.
pub fn launch_args(
    ptx_text: &str,
    sig: &Signature,
    dev: &mut Device,
    (tensors, scalars): (&[TensorMeta], &[ScalarArg]),
    seed: u64,
    limits: &DeviceLimits,
    policy: &Policy,
) -> Result<Stats, LaunchError> {
    let plan = plan_launch_args(sig, tensors, scalars, limits).map_err(LaunchError::Plan)?;
    let params: Vec<ParamValue> = plan
        .params
        .iter()
        .map(|p| match p {
            PlannedParam::TensorMap {
                tensor,
                box_dims,
                swizzle,
            } => ParamValue::TensorMap(tensor_map(&tensors[*tensor], box_dims, *swizzle)),
            PlannedParam::Pointer(a) | PlannedParam::Stride(a) => ParamValue::U64(*a),
            PlannedParam::Dim(d) => ParamValue::U32(*d),
            PlannedParam::Scalar(bits) => ParamValue::F32(f32::from_bits(*bits)),
            PlannedParam::Scalar64(bits) => ParamValue::U64(*bits),
        })
        .collect();
    let module = ptx::parse(ptx_text).map_err(LaunchError::Parse)?;
    let launch = Launch {
        grid: plan.grid,
        cluster: plan.cluster,
        block: plan.block,
        smem_bytes: plan.smem_bytes,
    };
    let program = Program::new(&module, &sig.entry).map_err(LaunchError::Sim)?;
    tirx_sim::run_program(&program, &launch, &params, dev, seed, policy).map_err(LaunchError::Sim)
}

/// The `cuTensorMapEncodeTiled` arguments the runtime would pass for `meta`.
pub fn tensor_map(meta: &TensorMeta, box_dims: &[u32], swizzle: Swizzle) -> TensorMapDesc {
    let enc = tiled_encoding(meta, box_dims);
    TensorMapDesc {
        elem: match meta.elem {
            ElemType::Bf16 => TmaElem::Bf16,
            ElemType::F16 => TmaElem::F16,
            ElemType::F32 => TmaElem::F32,
            ElemType::E4m3
            | ElemType::E5m2
            | ElemType::Ue8m0
            | ElemType::E2m1x2
            | ElemType::Ue4m3
            | ElemType::E3m2
            | ElemType::E2m3
            | ElemType::E2m1
            | ElemType::I8
            | ElemType::U8 => TmaElem::U8,
            // The box moves 4-byte words; TMA does no arithmetic on them.
            ElemType::I32 => TmaElem::I32,
            ElemType::U32 => TmaElem::U32,
            ElemType::I64 | ElemType::U64 => TmaElem::U64,
        },
        global_address: meta.addr,
        dims: enc.dims,
        strides_bytes: enc.strides_bytes,
        box_dims: enc.box_dims,
        element_strides: enc.element_strides,
        swizzle: match swizzle {
            Swizzle::None => TmaSwizzle::None,
            Swizzle::B32 => TmaSwizzle::B32,
            Swizzle::B64 => TmaSwizzle::B64,
            Swizzle::B128 => TmaSwizzle::B128,
        },
        oob_fill: OobFill::Zero,
    }
}

/// `values` rounded to `elem` (to nearest even): their little-endian bytes and their exact
/// rounded values.
pub fn encode(values: &[f64], elem: ElemType) -> (Vec<u8>, Vec<f64>) {
    let mut bytes = Vec::with_capacity(values.len() * elem.bytes() as usize);
    let mut vals = Vec::with_capacity(values.len());
    for &x in values {
        match elem {
            ElemType::Bf16 => {
                let v = bf16::from_f64(x);
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
                vals.push(v.to_f64());
            }
            ElemType::F16 => {
                let v = half::f16::from_f64(x);
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
                vals.push(v.to_f64());
            }
            // Integers convert as Rust's `as` does (toward zero, saturating).
            ElemType::I32 => {
                let v = x as i32;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(f64::from(v));
            }
            ElemType::U32 => {
                let v = x as u32;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(f64::from(v));
            }
            ElemType::I64 => {
                let v = x as i64;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(v as f64);
            }
            ElemType::U64 => {
                let v = x as u64;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(v as f64);
            }
            _ => {
                let v = x as f32;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(f64::from(v));
            }
        }
    }
    (bytes, vals)
}

/// `n` random values of `elem` (2n for `e2m1x2`, two a byte), `2·rng.unit() − 1` each (`unit` is in [-1, 1), so the values
/// lie in [-3, 1): skewed negative, which keeps sums from cancelling to zero): their
/// little-endian bytes and their exact values.
pub fn random_values(rng: &mut Rng, elem: ElemType, n: usize) -> (Vec<u8>, Vec<f64>) {
    if elem.is_f6f4() {
        return random_padded(rng, elem, n);
    }
    let mut bytes = Vec::with_capacity(n * elem.bytes() as usize);
    let mut vals = Vec::with_capacity(n);
    for _ in 0..n {
        let x = rng.unit() * 2.0 - 1.0;
        match elem {
            ElemType::Bf16 => {
                let v = bf16::from_f32(x);
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
                vals.push(v.to_f64());
            }
            ElemType::F16 => {
                let v = half::f16::from_f32(x);
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
                vals.push(v.to_f64());
            }
            ElemType::F32 => {
                bytes.extend_from_slice(&x.to_le_bytes());
                vals.push(f64::from(x));
            }
            // Integers in [-3000, 1000) (u32: its 4-byte pattern, values near 0 and near
            // 2^32), exact as f64.
            ElemType::I32 => {
                let v = (x * 1000.0).floor() as i32;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(f64::from(v));
            }
            ElemType::U32 => {
                let v = (x * 1000.0).floor() as i32 as u32;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(f64::from(v));
            }
            // The same values in 8-byte words (exact as f64).
            ElemType::I64 => {
                let v = i64::from((x * 1000.0).floor() as i32);
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(v as f64);
            }
            ElemType::U64 => {
                let v = i64::from((x * 1000.0).floor() as i32) as u64;
                bytes.extend_from_slice(&v.to_le_bytes());
                vals.push(v as f64);
            }
            ElemType::E4m3 => {
                let v = tirx::e4m3::from_f32(x);
                bytes.push(v.0);
                vals.push(f64::from(v.to_f32()));
            }
            ElemType::E5m2 => {
                let v = tirx::e5m2::from_f32(x);
                bytes.push(v.0);
                vals.push(f64::from(v.to_f32()));
            }
            // Factors 2^-4 … 2^3 (a block scale, not a value in [-3, 1)).
            ElemType::Ue8m0 => {
                let v = tirx::ue8m0::pow2((x * 4.0).floor() as i32);
                bytes.push(v.0);
                vals.push(v.to_f64());
            }
            // NVFP4 factors 1/4 … 2 (a block scale).
            ElemType::Ue4m3 => {
                let v = tirx::ue4m3::from_f32((x + 3.0) * 0.5 + 0.25);
                bytes.push(v.0);
                vals.push(v.to_f64());
            }
            // A byte of two FP4 values, `x` and `−x / 2` rounded to E2M1 (times 2, to use
            // the format's range); both values go into `vals`, the lower index first.
            ElemType::E2m1x2 => {
                let v = tirx::e2m1x2::from_f32(2.0 * x, -x);
                bytes.push(v.0);
                vals.extend(v.to_f64());
            }
            ElemType::E3m2 | ElemType::E2m3 | ElemType::E2m1 => {
                unreachable!("padded images are drawn a group at a time (random_padded)")
            }
            // kind::i8's operands: s8 in [-128, 127], u8 in [0, 255], the whole range.
            ElemType::I8 => {
                let v = ((x + 1.0) * 128.0).floor().clamp(-128.0, 127.0) as i8;
                bytes.push(v as u8);
                vals.push(f64::from(v));
            }
            ElemType::U8 => {
                let v = ((x + 3.0) * 64.0).floor().clamp(0.0, 255.0) as u8;
                bytes.push(v);
                vals.push(f64::from(v));
            }
        }
    }
    (bytes, vals)
}

/// `n` random values (a multiple of 16) of a padded 6-/4-bit type in its image (16 values
/// to 16 bytes), from the runtime's host types: `2·unit − 1` scaled to use the format's
/// range (×4 for E3M2, ×2 for E2M3 and E2M1).
fn random_padded(rng: &mut Rng, elem: ElemType, n: usize) -> (Vec<u8>, Vec<f64>) {
    let scale = if elem == ElemType::E3m2 { 4.0 } else { 2.0 };
    let xs: Vec<f32> = (0..n).map(|_| (rng.unit() * 2.0 - 1.0) * scale).collect();
    let bytes: Vec<u8> = match elem {
        ElemType::E3m2 => tirx::e3m2::pack(&xs).iter().map(|b| b.0).collect(),
        ElemType::E2m3 => tirx::e2m3::pack(&xs).iter().map(|b| b.0).collect(),
        _ => tirx::e2m1::pack(&xs).iter().map(|b| b.0).collect(),
    };
    let vals = decode(&bytes, elem);
    (bytes, vals)
}

/// The values of `bytes` read as `elem`.
pub fn decode(bytes: &[u8], elem: ElemType) -> Vec<f64> {
    match elem {
        ElemType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        ElemType::F16 => bytes
            .chunks_exact(2)
            .map(|c| half::f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64())
            .collect(),
        ElemType::Bf16 => bytes
            .chunks_exact(2)
            .map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64())
            .collect(),
        ElemType::E4m3 => bytes
            .iter()
            .map(|&b| f64::from(tirx::e4m3(b).to_f32()))
            .collect(),
        ElemType::E5m2 => bytes
            .iter()
            .map(|&b| f64::from(tirx::e5m2(b).to_f32()))
            .collect(),
        ElemType::Ue8m0 => bytes.iter().map(|&b| tirx::ue8m0(b).to_f64()).collect(),
        ElemType::Ue4m3 => bytes.iter().map(|&b| tirx::ue4m3(b).to_f64()).collect(),
        ElemType::I32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        ElemType::U32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        // Rounded to f64 past 2^53.
        ElemType::I64 => bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")) as f64)
            .collect(),
        ElemType::U64 => bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as f64)
            .collect(),
        // Two values a byte, the lower index first.
        ElemType::E2m1x2 => bytes
            .iter()
            .flat_map(|&b| tirx::e2m1x2(b).to_f64())
            .collect(),
        ElemType::I8 => bytes.iter().map(|&b| f64::from(b as i8)).collect(),
        ElemType::U8 => bytes.iter().map(|&b| f64::from(b)).collect(),
        // Padded images: 16 values per 16 bytes.
        ElemType::E3m2 => {
            tirx::e3m2::unpack(&bytes.iter().map(|&b| tirx::e3m2(b)).collect::<Vec<_>>())
        }
        ElemType::E2m3 => {
            tirx::e2m3::unpack(&bytes.iter().map(|&b| tirx::e2m3(b)).collect::<Vec<_>>())
        }
        ElemType::E2m1 => {
            tirx::e2m1::unpack(&bytes.iter().map(|&b| tirx::e2m1(b)).collect::<Vec<_>>())
        }
    }
}

/// A row-major tensor of `elem` and `shape` in a fresh allocation holding `bytes`.
pub fn put(dev: &mut Device, bytes: &[u8], elem: ElemType, shape: &[usize]) -> TensorMeta {
    let addr = dev.alloc(bytes.len());
    dev.write(addr, bytes)
        .expect("a fresh allocation holds its bytes");
    TensorMeta::row_major(elem, shape, addr)
}

/// A row-major tensor of `elem` and `shape` holding `values` in a fresh allocation: floats
/// rounded to `elem` (to nearest even), integers (`i32`, `u32`) exact. With [`run`] and
/// [`values`], what a test of a user's own kernel needs (`docs/guide.md`).
pub fn tensor(dev: &mut Device, elem: ElemType, shape: &[usize], values: &[f64]) -> TensorMeta {
    let (bytes, _) = encode(values, elem);
    put(dev, &bytes, elem, shape)
}

/// The elements of `t` (a tensor of 1, 2 or 4-byte elements), exactly, row-major.
pub fn values(dev: &Device, t: &TensorMeta) -> Vec<f64> {
    let n: usize = t.shape.iter().product();
    let bytes = dev
        .read(t.addr, n * t.elem.bytes() as usize)
        .expect("the tensor's own allocation");
    decode(&bytes, t.elem)
}

/// Runs `art` — any `#[tile_kernel]`'s artifact, a shipped kernel's or one defined in the
/// caller's own crate (`my_kernel::KERNEL.artifacts[0]`) — on `tensors` and `scalars` in the
/// emulator, planned exactly as the runtime plans a launch on an H100/H200
/// (`DeviceLimits::HOPPER`), with the default scheduler and seed 1. A diagnostic names the
/// PTX line; [`with_source_lines`] adds the kernel's source line.
pub fn run(
    art: &tirx::KernelArtifact,
    dev: &mut Device,
    tensors: &[TensorMeta],
    scalars: &[f32],
) -> Result<Stats, LaunchError> {
    let sig = (art.signature)();
    launch(
        art.ptx,
        &sig,
        dev,
        (tensors, scalars),
        1,
        &DeviceLimits::HOPPER,
    )
}

/// A bf16 tensor holding `data`, or poison (`0xffff`, a NaN) when `data` is empty.
pub fn upload(dev: &mut Device, data: &[bf16], shape: &[usize]) -> TensorMeta {
    let n: usize = shape.iter().product();
    let bytes: Vec<u8> = if data.is_empty() {
        vec![0xff; n * 2]
    } else {
        data.iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect()
    };
    put(dev, &bytes, ElemType::Bf16, shape)
}

/// The bf16 elements of `t`.
pub fn download(dev: &Device, t: &TensorMeta) -> Vec<bf16> {
    let n: usize = t.shape.iter().product();
    dev.read(t.addr, n * 2)
        .expect("the tensor's own allocation")
        .chunks_exact(2)
        .map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])))
        .collect()
}

/// Attention in the emulator on one batch of `s` queries and keys and `h` heads (the
/// artifact's head dims ([`crate::attention::family::head_dims`]), mask `CAUSAL` and element type) on a device of `sms` SMs (the
/// persistent kernel's grid; fewer SMs than tiles make each CTA walk several), inputs from `seed` (drawn by
/// [`random_values`]), outputs poisoned first: O within 2e-2 and the LSE within 2e-3 of the
/// f64 reference, or the first element that is not. Returns the stats and max |o − ref|.
pub fn attention(
    art: &tirx::KernelArtifact,
    (s, h): (usize, usize),
    sms: u32,
    seed: u64,
    policy: &Policy,
) -> Result<(Stats, f64), String> {
    let (d, dv) =
        crate::attention::family::head_dims(art).ok_or("no head dim `D` (or `D_QK`, `D_V`)")?;
    let dims = crate::attention::reference::Dims {
        b: 1,
        s,
        sk: s,
        hq: h,
        hk: h,
        d,
        dv,
    };
    attention_on(art, dims, sms, seed, policy)
}

/// [`attention`] on any extents: `dims.b` batches, `dims.s` queries against `dims.sk` keys,
/// `dims.hq` query heads over `dims.hk` K/V heads (GQA); `dims.d` and `dims.dv` must be the
/// artifact's head dims.
pub fn attention_on(
    art: &tirx::KernelArtifact,
    dims: crate::attention::reference::Dims,
    sms: u32,
    seed: u64,
    policy: &Policy,
) -> Result<(Stats, f64), String> {
    let elem = (art.signature)().tensors[0].elem;
    let mut rng = Rng::new(seed);
    let (nq, nk, nv) = (
        dims.b * dims.s * dims.hq * dims.d,
        dims.b * dims.sk * dims.hk * dims.d,
        dims.b * dims.sk * dims.hk * dims.dv,
    );
    let (_, q) = random_values(&mut rng, elem, nq);
    let (_, k) = random_values(&mut rng, elem, nk);
    let (_, v) = random_values(&mut rng, elem, nv);
    attention_values(art, dims, [&q, &k, &v], sms, seed, policy)
}

/// [`attention_on`] on given inputs: Q `[b, s, hq·d]`, K `[b, sk, hk·d]`, V `[b, sk, hk·dv]`
/// row-major,
/// each value rounded to the artifact's element type (the reference reads the rounded
/// values); `seed` picks the schedule.
pub fn attention_values(
    art: &tirx::KernelArtifact,
    dims: crate::attention::reference::Dims,
    [q, k, v]: [&[f64]; 3],
    sms: u32,
    seed: u64,
    policy: &Policy,
) -> Result<(Stats, f64), String> {
    use crate::attention::reference::attention_f64;
    let (d, dv) =
        crate::attention::family::head_dims(art).ok_or("no head dim `D` (or `D_QK`, `D_V`)")?;
    if (dims.d, dims.dv) != (d, dv) {
        return Err(format!(
            "head dims {}/{} for a config of {d}/{dv}",
            dims.d, dims.dv
        ));
    }
    let causal = art.int("CAUSAL") == Some(1);
    let elem = (art.signature)().tensors[0].elem;
    let mut dev = Device::new();
    let (b, s, sk, hq, hk) = (dims.b, dims.s, dims.sk, dims.hq, dims.hk);
    let (nq, nk, nv) = (b * s * hq * d, b * sk * hk * d, b * sk * hk * dv);
    if q.len() != nq || k.len() != nk || v.len() != nv {
        return Err(format!(
            "inputs of {}, {}, {} values for {dims:?}",
            q.len(),
            k.len(),
            v.len()
        ));
    }
    let [(qb, qv), (kb, kv), (vb, vv)] = [q, k, v].map(|x| encode(x, elem));
    let ob = b * s * hq * dv * elem.bytes() as usize;
    let lse_n = b * hq * s;
    let tensors = [
        put(&mut dev, &qb, elem, &[b, s, hq * d]),
        put(&mut dev, &kb, elem, &[b, sk, hk * d]),
        put(&mut dev, &vb, elem, &[b, sk, hk * dv]),
        put(&mut dev, &vec![0xff; ob], elem, &[b, s, hq * dv]),
        put(
            &mut dev,
            &vec![0xff; lse_n * 4],
            ElemType::F32,
            &[b * hq, s, 1],
        ),
    ];
    let scale = 1.0 / (d as f64).sqrt();
    let scalars = [(scale * std::f64::consts::LOG2_E) as f32];
    let sig = (art.signature)();
    let stats = launch_with(
        art.ptx,
        &sig,
        &mut dev,
        (&tensors, &scalars),
        seed,
        &DeviceLimits {
            sm_count: sms,
            ..DeviceLimits::HOPPER
        },
        policy,
    )
    .map_err(|e| e.to_string())?;
    let read = |t: &TensorMeta, bytes: usize, elem| {
        dev.read(t.addr, bytes)
            .map(|b| decode(&b, elem))
            .map_err(|e| e.to_string())
    };
    let got = read(&tensors[3], ob, elem)?;
    let got_lse = read(&tensors[4], lse_n * 4, ElemType::F32)?;
    // The reference on the exact input values (f32 holds bf16/f16 exactly).
    let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let (want, want_lse) = attention_f64(&f(&qv), &f(&kv), &f(&vv), dims, causal, scale);
    let mut worst = 0.0f64;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let e = (g - w).abs();
        if e.is_nan() || e > 2e-2 {
            return Err(format!("O element {i} is {g}, the reference {w:.6e}"));
        }
        worst = worst.max(e);
    }
    for (i, (g, w)) in got_lse.iter().zip(&want_lse).enumerate() {
        let ok = if *w == f64::NEG_INFINITY {
            g == w
        } else {
            (g - w).abs() <= 2e-3
        };
        if !ok {
            return Err(format!("LSE of row {i} is {g}, the reference {w:.6e}"));
        }
    }
    Ok((stats, worst))
}

/// `message` — an emulator diagnostic about `art`'s PTX — with every PTX line it names
/// (`PTX line 3022`, `line 3022`) followed by the source line that line was written for,
/// through the artifact's line map: `PTX line 3022 (kernels/src/attention/hopper.rs:183)`.
/// Lines outside the map (the module's header, the compiler's own prologue) are left as
/// they are.
pub fn with_source_lines(art: &tirx::KernelArtifact, message: &str) -> String {
    let mut out = String::with_capacity(message.len() + 64);
    let mut rest = message;
    while let Some(i) = rest.find("line ") {
        let (head, tail) = rest.split_at(i + "line ".len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        let (num, after) = tail.split_at(digits);
        out.push_str(num);
        if let Some(src) = num.parse().ok().and_then(|n| art.source_line(n)) {
            out.push_str(&format!(" ({}:{src})", art.source_file));
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Whether the GEMM artifact takes B given K×N (NN), as its problem says (never re-derived
/// from tensor names or shapes).
pub fn b_is_k_by_n(art: &tirx::KernelArtifact) -> bool {
    use tirx::problem::{BLayout, GemmProblem, Problem};
    matches!(
        art.problem,
        Some(Problem::Gemm(GemmProblem { b: BLayout::Nn, .. }))
    )
}

/// The fused bias + activation epilogue of one GEMM element, for the emulator's checks:
/// `w` the exact α·A·op(B) + β·C and `acc` its f32 accumulation bound; returns the exact
/// `act(w + bias)`, the accumulation bound widened by the f32 bias add and activation (a few
/// ulps of the argument), and the extra a GPU's `tanh.approx.f32` may add to GELU (about 2⁻¹¹
/// of the argument; the emulator computes tanh exactly, so its own bound leaves it out).
pub fn bias_act_bound(act: tirx::problem::Act, w: f64, bias: f64, acc: f64) -> (f64, f64, f64) {
    let x = w + bias;
    let acc = 1.2 * acc + 4.0 * (x.abs() + 1.0) / 8_388_608.0;
    let gpu_extra = if act == tirx::problem::Act::Gelu {
        x.abs() / 2048.0
    } else {
        0.0
    };
    (crate::gemm::reference::activate(act, x), acc, gpu_extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_values_decode_to_their_exact_values() {
        for elem in [ElemType::Bf16, ElemType::F16, ElemType::F32] {
            let (bytes, vals) = random_values(&mut Rng::new(3), elem, 257);
            assert_eq!(bytes.len(), 257 * elem.bytes() as usize);
            assert_eq!(decode(&bytes, elem), vals, "{elem:?}");
            // Drawn in [-3, 1); rounding to 16 bits may reach 1.
            assert!(vals.iter().all(|v| (-3.0..=1.0).contains(v)));
            assert!(vals.iter().any(|v| *v < -1.0) && vals.iter().any(|v| *v > 0.0));
            assert!(vals.windows(2).any(|w| w[0] != w[1]), "not constant");
        }
    }

    #[test]
    fn uploads_read_back_and_empty_ones_are_poison() {
        let mut dev = Device::new();
        let data = Rng::new(5).bf16s(6);
        let t = upload(&mut dev, &data, &[2, 3]);
        assert_eq!(download(&dev, &t), data);
        let p = upload(&mut dev, &[], &[2, 3]);
        assert!(download(&dev, &p).iter().all(|v| v.to_bits() == 0xffff));
    }
}
