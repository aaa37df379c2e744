//! The host side of split-K (`splitk.rs`): which reduce kernel finishes a partial artifact, how
//! many slices `S` the cost model splits K into, and the plan's two launches.
//!
//! A split-K artifact (`Epilogue::Partial`) is a GEMM candidate like any other: the dispatcher
//! judges it against a plain or scaled request ([`GemmRequest`]'s `solves` accepts it where a
//! reduce kernel takes the request's output type and epilogue: plain, scaled, or the fused
//! bias and activation for 16-bit inputs; the FP8 scales, per tensor or row-wise, for E4M3 and
//! E5M2 inputs, [`epilogue_fits`]), ranks it by [`best_split`]'s
//! cost, and the tune cache may prefer or pass over it. Choosing it means a plan of two launches
//! and an f32 workspace `[S, M, N]`, which [`launch_split`] keeps per thread and stream (grown on
//! need, never read before the partial kernel writes it) or takes from the caller
//! ([`launch_split_into`]).
//!
//! The cost model of a plan, in the units of [`GemmRequest`]'s model (a wave of 128×256 tiles
//! over the whole of K costs 256; `request::unit_seconds` converts seconds), for `S` slices:
//! - compute: the waves of `tiles × S` CTAs over the SMs, each a BM×BN tile over the longest
//!   slice `⌈T/S⌉` of the `T` K tiles, at the tile-width efficiency of the one-launch model,
//!   ×1.25 (not persistent), ×1.02 (D from registers), and ×1.5 where the tile is 64 rows of
//!   one consumer warpgroup (`splitk.rs`; an estimate, not a measurement; the tune cache
//!   corrects it) — a 128-row tile of two consumer warpgroups with `setmaxnreg`
//!   (`fp8_splitk.rs`, the ladder's level 5 structure) pays only the ×1.25 and ×1.02;
//! - memory: A and B read, D written, and the partials' traffic (`S·M·N` f32 written and read
//!   back, C read where β ≠ 0) at what the resident CTAs pull (`request::memory_units` with
//!   `request::pull_rate`: each CTA's stage bytes in flight over the measured stage latency,
//!   as in the one-launch model's floor, at most the device's HBM rate); the plan takes the
//!   larger of compute and memory, plus one stage latency per wave of resident CTAs
//!   (`request::fill_units`: each wave waits for its first stage; the one-launch model pays
//!   one);
//! - the second launch: 2 µs (an estimate of a dependent launch's gap on one stream), and the
//!   reduce's rounds of dependent loads (`reduce`'s `sum_slices`: one for slice 0, one per four
//!   slices, one per slice left over) at 0.5 µs each (an estimate of an L2 round trip under
//!   load).
//!
//! `S` runs over 2 ‥ min(T, 256) (every slice at least one K tile; `S = 1` is the one-launch
//! kernels), ties to the fewer slices.
//!
//! A transposed partial (`gemm_sm90_splitk_t`, [`is_transposed`]: its workspace is
//! [S, N, M]) is the same plan with the roles of M and N swapped in the tile count and in the
//! bytes a stage holds (`BM` of B's rows, `BN` of A's), finished by the transposing reduce of
//! the request's epilogue ([`reduce_of`]); D, C and R travel to that reduce seen as
//! [M, N, 1] (`TensorArg::with_unit_dim`). Its `nn` configs (B given K×N, read as the MMA's A
//! operand MN-major) are planned and ranked by the same model: the problem's layout, read
//! from the artifact, decides which requests each config accepts, never its name.

use std::cell::RefCell;

use tirx::abi::ElemType;
use tirx::problem::{Act, Epilogue, Problem};
use tirx::{KernelArtifact, Runtime, RuntimeError, Target, Tensor, TensorArg};

use super::request::{
    Fp8ScaleArgs, GemmRequest, ctas_per_sm, efficiency, fill_units, memory_units, pull_rate,
    unit_seconds,
};
use super::splitk::reduce::{
    splitk_reduce, splitk_reduce_bias, splitk_reduce_bias_res, splitk_reduce_rowwise,
    splitk_reduce_scaled, splitk_reduce_t, splitk_reduce_t_bias, splitk_reduce_t_bias_res,
    splitk_reduce_t_scaled,
};
use crate::dispatch::{Device, Reject};
use crate::family;
use tirx::Kernel;

/// The second launch's gap, seconds (estimate).
const SECOND_LAUNCH_S: f64 = 2e-6;
/// One round of the reduce's dependent loads, seconds (estimate).
const REDUCE_ROUND_S: f64 = 0.5e-6;
/// The most slices a plan uses.
const MAX_SPLITS: usize = 256;

/// Whether `art` is a split-K partial-product artifact.
pub fn is_partial(art: &KernelArtifact) -> bool {
    matches!(art.problem, Some(Problem::Gemm(g)) if g.epilogue == Epilogue::Partial)
}

/// Whether `art` stores each slice's partial product transposed, `w` [S, N, M] (the decode
/// kernel `gemm_sm90_splitk_t`, whose MMA takes B's rows on its 64-row side): read from its
/// signature, the workspace's last extent being A's rows.
pub fn is_transposed(art: &KernelArtifact) -> bool {
    let sig = art.sig();
    let shape = |name: &str| {
        sig.tensors
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.shape.as_slice())
    };
    match (shape("a"), shape("w")) {
        (Some(a), Some(w)) => w.len() == 3 && a.first().is_some_and(|m| *m == w[2]),
        _ => false,
    }
}

/// The workspace of `art`'s plan with `s` slices at `M × N`: [S, M, N], or [S, N, M] for a
/// transposed partial ([`is_transposed`]).
pub fn workspace_shape(art: &KernelArtifact, s: usize, (m, n): (usize, usize)) -> [usize; 3] {
    if is_transposed(art) {
        [s, n, m]
    } else {
        [s, m, n]
    }
}

/// The reduce kernel that finishes `art`'s split-K plan of `request`: [`reduce_for`], or for a
/// transposed partial ([`is_transposed`]) the transposing reduce of the same epilogue
/// (`splitk_reduce_t`, `_scaled`, `_bias`, `_bias_res`: D, C and R seen as [M, N, 1]).
/// `None` where no reduce applies the epilogue into D's type (the dispatcher's typed
/// `Reject::Types`).
pub fn reduce_of(art: &KernelArtifact, request: &GemmRequest) -> Option<&'static KernelArtifact> {
    if !is_transposed(art) {
        return reduce_for(art.target, request);
    }
    let kernel = match request.epilogue {
        Epilogue::Scaled if reads_c(request) => &splitk_reduce_t_scaled::KERNEL,
        Epilogue::Plain | Epilogue::Scaled => &splitk_reduce_t::KERNEL,
        Epilogue::Bias(_) => &splitk_reduce_t_bias::KERNEL,
        Epilogue::BiasResidual(_) => &splitk_reduce_t_bias_res::KERNEL,
        Epilogue::ScaleTensor
        | Epilogue::ScaleRows
        | Epilogue::ScaleBlocks
        | Epilogue::ScaleBlocksMn
        | Epilogue::ScaleFactors(_)
        | Epilogue::Partial => {
            return None;
        }
    };
    pick(kernel, art.target, request)
}

/// The reduce kernel that finishes a split-K plan of `request` on `target`: D's type and the
/// epilogue (α only; α and β·C where C is read, [`reads_c`]; bias and the activation of its
/// config constant `ACT`; the FP8 scales — per tensor as α = `scale_a·scale_b`
/// ([`reduce_scalars`]), row-wise by the reduce that reads `sa` and `sb`) decide, from the
/// artifacts' own data, never from a name. `None` for an epilogue no reduce kernel applies.
pub fn reduce_for(target: Target, request: &GemmRequest) -> Option<&'static KernelArtifact> {
    let kernel = match request.epilogue {
        Epilogue::Scaled if reads_c(request) => &splitk_reduce_scaled::KERNEL,
        Epilogue::Plain | Epilogue::Scaled | Epilogue::ScaleTensor => &splitk_reduce::KERNEL,
        Epilogue::ScaleRows => &splitk_reduce_rowwise::KERNEL,
        Epilogue::Bias(_) => &splitk_reduce_bias::KERNEL,
        Epilogue::BiasResidual(_) => &splitk_reduce_bias_res::KERNEL,
        // Block scales vary along K: they cannot wait for a reduce (each slice would promote
        // its own K blocks; no split-K kernel does yet).
        // Factors scale inside the MMA: no partial product is ever unscaled.
        Epilogue::ScaleBlocks
        | Epilogue::ScaleBlocksMn
        | Epilogue::ScaleFactors(_)
        | Epilogue::Partial => return None,
    };
    pick(kernel, target, request)
}

/// The artifact of reduce `kernel` on `target` that writes D's type with the request's
/// activation (config constant `ACT`).
fn pick(
    kernel: &'static Kernel,
    target: Target,
    request: &GemmRequest,
) -> Option<&'static KernelArtifact> {
    kernel.artifacts.iter().find(|a| {
        let act = match request.epilogue {
            Epilogue::Bias(act) | Epilogue::BiasResidual(act) => {
                a.int("ACT").and_then(Act::of_code) == Some(act)
            }
            _ => true,
        };
        a.target == target && a.elem_of("d") == Some(request.types.output) && act
    })
}

/// The reduce's scalars `alpha`, `beta` for `request`: its own (scaled: α, β; plain: 1, 0),
/// and for the per-tensor FP8 scales α = `scale_a·scale_b`, the product rounded to f32 once,
/// as `fp8.rs`'s consumers form it before they scale the whole K sum.
pub fn reduce_scalars(request: &GemmRequest) -> (f32, f32) {
    match request.epilogue {
        Epilogue::ScaleTensor => (request.scalars.0 * request.scalars.1, 0.0),
        _ => request.scalars,
    }
}

/// Whether the split-K artifact `art` computes `request`'s kind of epilogue: the FP8 scales
/// belong to 8-bit inputs (`fp8_splitk.rs`, as the one-launch FP8 kernels take them), the
/// plain, scaled and fused epilogues to 16-bit ones (`splitk.rs`).
pub fn epilogue_fits(art: &KernelArtifact, request: &GemmRequest) -> bool {
    let eight_bit = art
        .elem_of("a")
        .is_some_and(|t| matches!(t, ElemType::E4m3 | ElemType::E5m2));
    match request.epilogue {
        Epilogue::ScaleTensor | Epilogue::ScaleRows => eight_bit,
        Epilogue::Plain | Epilogue::Scaled | Epilogue::Bias(_) | Epilogue::BiasResidual(_) => {
            !eight_bit
        }
        Epilogue::ScaleBlocks
        | Epilogue::ScaleBlocksMn
        | Epilogue::ScaleFactors(_)
        | Epilogue::Partial => false,
    }
}

/// Whether a request's plan reads C: the scaled epilogue with β ≠ 0 (C is not read at β = 0,
/// as in the one-launch kernels).
pub fn reads_c(request: &GemmRequest) -> bool {
    request.epilogue == Epilogue::Scaled && request.scalars.1 != 0.0
}

/// The slices and the cost of `art`'s plan for `request` on `device` (its SMs and its HBM
/// rate): the cheapest `S` of the model in this file's header (ties to the fewer slices).
/// `Err` when the artifact lacks the constants the model reads or K has fewer than two tiles.
pub fn best_split(
    request: &GemmRequest,
    art: &KernelArtifact,
    device: &Device,
) -> Result<(usize, f64), Reject> {
    let sms = device.limits.sm_count;
    let (Some(bm), Some(bn), Some(bk)) = (art.int("BM"), art.int("BN"), art.int("BK")) else {
        return Err(Reject::Unranked(
            "the split-K model needs the config constants BM, BN and BK".into(),
        ));
    };
    let (bm, bn, bk) = (bm.max(1) as usize, bn.max(1) as usize, bk.max(1) as usize);
    let (m, n, k) = request.shape;
    let k_tiles = k.div_ceil(bk);
    if k_tiles < 2 {
        return Err(Reject::Launch(format!(
            "split K needs at least two K tiles of {bk}; K = {k} has {k_tiles}"
        )));
    }
    // A transposed partial's 64-row side is B's rows (N), its BN side A's (M).
    let tiles = if is_transposed(art) {
        n.div_ceil(bm) * m.div_ceil(bn)
    } else {
        m.div_ceil(bm) * n.div_ceil(bn)
    };
    let sms = sms.max(1) as usize;
    let c_bytes = if reads_c(request) {
        request.types.output.bytes() as f64
    } else {
        0.0
    };
    let (per_sm, rate) = (ctas_per_sm(art), pull_rate(request, art));
    // One 64-row consumer warpgroup (BM = 64, `splitk.rs`): ×1.5; two (BM = 128,
    // `fp8_splitk.rs`: level 5's structure, setmaxnreg and two warpgroups' MMAs in flight):
    // none beyond the one-launch model's.
    let one_warpgroup = if bm < 128 { 1.5 } else { 1.0 };
    let mut best: Option<(usize, f64)> = None;
    for s in 2..=k_tiles.min(MAX_SPLITS) {
        let ctas = tiles * s;
        let waves = ctas.div_ceil(sms) as f64;
        let slice = k_tiles.div_ceil(s) as f64 / k_tiles as f64;
        let compute = waves * (bm as f64 / 128.0) * bn as f64 / efficiency(bn)
            * slice
            * 1.25
            * 1.02
            * one_warpgroup;
        let partials = (m * n) as f64 * (8.0 * s as f64 + c_bytes);
        let resident = ctas.min(sms * per_sm);
        let fills = ctas.div_ceil(sms * per_sm);
        // Every resident CTA counts as streaming (the one-launch model's wave quantisation
        // of the stream is not applied here: it moves the slices the measured plans ran with,
        // TODO(#32)); the later waves pay their fills.
        let memory = memory_units(
            request,
            (resident as f64, rate),
            partials,
            device.hbm_bytes_per_s,
        );
        let rounds = (1 + (s - 1) / 4 + (s - 1) % 4) as f64;
        let cost = compute.max(memory)
            + fill_units(fills, k)
            + (SECOND_LAUNCH_S + rounds * REDUCE_ROUND_S) / unit_seconds(k);
        if best.is_none_or(|(_, c)| cost < c) {
            best = Some((s, cost));
        }
    }
    Ok(best.expect("k_tiles >= 2 gives one candidate"))
}

/// Whether `workspace` is one `art`'s plan can use at `(m, n, k)`: `[S, M, N]` (`[S, N, M]`
/// for a transposed partial) with 2 ≤ S ≤ the K tiles (every slice must hold a K tile, or
/// its partial would be garbage).
pub fn check_workspace(
    art: &KernelArtifact,
    (m, n, k): (usize, usize, usize),
    workspace: &[usize],
) -> Result<(), Reject> {
    let k_tiles = k.div_ceil(art.int("BK").unwrap_or(64).max(1) as usize);
    let [_, x, y] = workspace_shape(art, 0, (m, n));
    match workspace {
        [s, wx, wy] if (2..=k_tiles).contains(s) && [*wx, *wy] == [x, y] => Ok(()),
        _ => Err(Reject::Launch(format!(
            "the workspace is {workspace:?}; it must be [S, {x}, {y}] with 2 ≤ S ≤ {k_tiles} \
             (the K tiles)"
        ))),
    }
}

/// The tensors of a GEMM by role.
fn role<'r, 'a>(roles: &'r [(&str, TensorArg<'a>)], name: &str) -> Option<&'r TensorArg<'a>> {
    roles.iter().find(|(r, _)| *r == name).map(|(_, t)| t)
}

/// Which stream a kept workspace serves: its context and its `CUstream` handle.
///
/// Not the address of the runtime's `Arc<CudaStream>`: a caller that wraps a borrowed stream
/// anew for each call (the Python binding did, with torch's current stream) makes a new
/// wrapper every time, and since the kept buffer holds the old one its address is never
/// reused, so each call allocated and zeroed a fresh workspace and kept it for the thread's
/// life (issue #32). The handle names the stream whichever wrapper carries it; the context
/// tells the null (legacy default) streams of two devices apart.
type StreamKey = (usize, usize);

fn stream_key(rt: &Runtime) -> StreamKey {
    (
        rt.context().cu_ctx() as usize,
        rt.stream().cu_stream() as usize,
    )
}

thread_local! {
    /// The workspaces [`launch_split`] keeps, one per stream ([`StreamKey`]): launches on one
    /// stream run in order, so one buffer serves them all without a race, and a decode step
    /// pays neither an allocation nor a memset per GEMM. Each grows to the largest plan run on
    /// its stream and lives until the thread ends or [`release_workspaces`].
    static WORKSPACES: RefCell<Vec<(StreamKey, Tensor<f32>)>> = const { RefCell::new(Vec::new()) };
}

/// Frees this thread's kept split-K workspaces (in stream order).
pub fn release_workspaces() {
    WORKSPACES.with_borrow_mut(Vec::clear);
}

/// How many split-K workspaces this thread keeps (one per stream it ran a plan on).
pub fn kept_workspaces() -> usize {
    WORKSPACES.with_borrow(Vec::len)
}

/// Runs `art`'s split-K plan on the GEMM given by role (`a`, `b`, `d`, and `c` when scaled):
/// D = α·A·op(B) (+ β·C) ([`launch_split_for`] with the request these tensors make).
pub fn launch_split(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    alpha: f32,
    beta: f32,
) -> Result<(), RuntimeError> {
    let request = request_of(art, roles, alpha, beta)?;
    launch_split_for(rt, art, roles, &request)
}

/// Runs `art`'s split-K plan for `request` (its epilogue and scalars; tensors by role: `a`,
/// `b`, `d`, and `c` or `bias` where the epilogue takes them), with the slices the cost model
/// picks for `rt`'s device, in the workspace this thread keeps for `rt`'s stream (allocated,
/// or grown, on first need).
pub fn launch_split_for(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    request: &GemmRequest,
) -> Result<(), RuntimeError> {
    let device = Device::of(rt)?;
    let (splits, _) = best_split(request, art, &device).map_err(|r| refused(request, art, r))?;
    let (m, n, _) = request.shape;
    let len = splits * m * n;
    let key = stream_key(rt);
    WORKSPACES.with_borrow_mut(|kept| {
        let at = kept.iter().position(|(k, _)| *k == key);
        let i = match at {
            Some(i) if kept[i].1.numel() >= len => i,
            _ => {
                if let Some(i) = at {
                    kept.remove(i);
                }
                kept.push((key, rt.zeros::<f32>(&[len])?));
                kept.len() - 1
            }
        };
        let shape = workspace_shape(art, splits, (m, n));
        let w = kept[i].1.subview(0, &shape, &[m * n, shape[2], 1])?;
        launch_plan(rt, art, roles, request, w)
    })
}

/// Runs the FP8 split-K plan of `art` (`fp8_splitk.rs`) for D = s ⊙ A·Bᵀ with the scales
/// `scales` (per tensor: `scale_a`, `scale_b`; row-wise: `sa` [M], `sb` [N]), tensors by role
/// (`a`, `b`, `d`; `sa`, `sb` are taken from `scales`), in the workspace this thread keeps for
/// `rt`'s stream ([`launch_split_for`]).
pub fn launch_fp8_split(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    scales: Fp8ScaleArgs<'_, '_>,
) -> Result<(), RuntimeError> {
    let (request, with_scales) = fp8_request(art, roles, scales)?;
    launch_split_for(rt, art, &with_scales, &request)
}

/// [`launch_fp8_split`] into the caller's workspace `w` [S, M, N] (f32): `S` is its first
/// extent, refused unless 1 < S ≤ the K tiles (every slice must hold a K tile).
pub fn launch_fp8_split_into(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    scales: Fp8ScaleArgs<'_, '_>,
    w: &mut Tensor<f32>,
) -> Result<(), RuntimeError> {
    let (request, with_scales) = fp8_request(art, roles, scales)?;
    launch_plan(rt, art, &with_scales, &request, w.view())
}

/// A GEMM's tensors by role.
type Roles<'a> = Vec<(&'static str, TensorArg<'a>)>;

/// The FP8 request of `roles` (`a`, `b`, `d`) with `scales`, and the roles with `sa`, `sb`
/// added for the row-wise form.
fn fp8_request<'a>(
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'a>)],
    scales: Fp8ScaleArgs<'_, 'a>,
) -> Result<(GemmRequest, Roles<'a>), RuntimeError> {
    let (a, b, d) = (
        get(roles, "a", art)?,
        get(roles, "b", art)?,
        get(roles, "d", art)?,
    );
    let request = GemmRequest::on_fp8(&a, &b, scales, &d);
    let mut with_scales = vec![("a", a), ("b", b), ("d", d)];
    if let Fp8ScaleArgs::Rows(sa, sb) = scales {
        with_scales.extend([("sa", sa.clone()), ("sb", sb.clone())]);
    }
    Ok((request, with_scales))
}

/// [`launch_split`] into the caller's workspace `w` [S, M, N] (f32): `S` is its first extent,
/// refused unless 1 < S ≤ the K tiles (every slice must hold a K tile).
pub fn launch_split_into(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    alpha: f32,
    beta: f32,
    w: &mut Tensor<f32>,
) -> Result<(), RuntimeError> {
    let request = request_of(art, roles, alpha, beta)?;
    launch_plan(rt, art, roles, &request, w.view())
}

/// The plan's two launches on the workspace `w`, after checking that every slice of it holds
/// a K tile and that a reduce kernel applies the request's epilogue into D's type.
fn launch_plan(
    rt: &Runtime,
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    request: &GemmRequest,
    w: TensorArg<'_>,
) -> Result<(), RuntimeError> {
    check_workspace(art, request.shape, &w.meta().shape).map_err(|r| refused(request, art, r))?;
    let reduce = reduce_of(art, request).ok_or_else(|| {
        refused(
            request,
            art,
            Reject::Types {
                found: vec![Some(request.types.output)],
            },
        )
    })?;
    let (a, b, d) = (
        get_ref(roles, "a", art)?,
        get_ref(roles, "b", art)?,
        get(roles, "d", art)?,
    );
    let partial_roles = [("a", a), ("b", b), ("w", &w)];
    // The transposed reduce moves D's rows (and C's, R's) as column statistics of the
    // tensors seen as [M, N, 1].
    fn unit(t: TensorArg<'_>, transposed: bool) -> TensorArg<'_> {
        if transposed { t.with_unit_dim() } else { t }
    }
    let transposed = is_transposed(art);
    let mut reduce_roles = vec![("w", w.clone()), ("d", unit(d, transposed))];
    if reads_c(request) {
        reduce_roles.push(("c", unit(get(roles, "c", art)?, transposed)));
    }
    if matches!(
        request.epilogue,
        Epilogue::Bias(_) | Epilogue::BiasResidual(_)
    ) {
        reduce_roles.push(("bias", get(roles, "bias", art)?));
    }
    if matches!(request.epilogue, Epilogue::BiasResidual(_)) {
        reduce_roles.push(("res", unit(get(roles, "res", art)?, transposed)));
    }
    if request.epilogue == Epilogue::ScaleRows {
        reduce_roles.push(("sa", get(roles, "sa", art)?));
        reduce_roles.push(("sb", get(roles, "sb", art)?));
    }
    let (alpha, beta) = reduce_scalars(request);
    let scalars = [("alpha", alpha), ("beta", beta)];
    // The reduce is checked before the partial product is queued (a refused reduce is an error
    // before anything runs); the reduce's module and descriptors are prepared only once
    // the partial product is queued, so on an idle GPU that host work overlaps the partial
    // product instead of delaying it (`Runtime::prepare_args`).
    family::check_roles(rt, reduce, &reduce_roles, &scalars)?;
    family::prepare_roles(rt, art, &partial_roles, &[])?.submit()?;
    family::prepare_roles(rt, reduce, &reduce_roles, &scalars)?.submit()
}

/// The role `name` of a GEMM's tensors, or the typed error naming it.
fn get<'a>(
    roles: &[(&str, TensorArg<'a>)],
    name: &str,
    art: &KernelArtifact,
) -> Result<TensorArg<'a>, RuntimeError> {
    get_ref(roles, name, art).cloned()
}

/// [`get`] by reference.
fn get_ref<'r, 'a>(
    roles: &'r [(&str, TensorArg<'a>)],
    name: &str,
    art: &KernelArtifact,
) -> Result<&'r TensorArg<'a>, RuntimeError> {
    role(roles, name).ok_or_else(|| RuntimeError::NoKernelFits {
        problem: format!("split K with `{}/{}`", art.kernel, art.config),
        table: format!("  the GEMM has no tensor `{name}`\n"),
    })
}

/// The request the plan's tensors make (plain, or scaled when C is given; refused for 8-bit
/// inputs, whose plan [`launch_fp8_split`] runs).
fn request_of(
    art: &KernelArtifact,
    roles: &[(&str, TensorArg<'_>)],
    alpha: f32,
    beta: f32,
) -> Result<GemmRequest, RuntimeError> {
    let Some(Problem::Gemm(g)) = art.problem else {
        return Err(RuntimeError::NoKernelFits {
            problem: format!("split K with `{}/{}`", art.kernel, art.config),
            table: "  it declares no GEMM\n".into(),
        });
    };
    let (a, b, d) = (
        get_ref(roles, "a", art)?,
        get_ref(roles, "b", art)?,
        get_ref(roles, "d", art)?,
    );
    // An FP8 partial's scales are per tensor or row-wise, which roles alone do not say: its
    // callers build the request ([`launch_fp8_split`]).
    if matches!(a.meta().elem, ElemType::E4m3 | ElemType::E5m2) {
        return Err(RuntimeError::NoKernelFits {
            problem: format!("split K with `{}/{}`", art.kernel, art.config),
            table: "  an FP8 split-K plan takes its scales through `split::launch_fp8_split`\n"
                .into(),
        });
    }
    let c = role(roles, "c");
    let scaled = c.map(|c| (alpha, c, beta));
    let mut request = GemmRequest::on(g.b, a, b, scaled, d);
    request.scalars = (alpha, beta);
    Ok(request)
}

/// A plan the split-K host refuses, as the dispatcher's typed error with its one row.
fn refused(request: &GemmRequest, art: &KernelArtifact, why: Reject) -> RuntimeError {
    use crate::dispatch::ProblemDef;
    RuntimeError::NoKernelFits {
        problem: request.describe(),
        table: format!("  {}/{}  refused: {why}\n", art.kernel, art.config),
    }
}

#[cfg(test)]
mod tests;
