//! The GEMM problem: D = A·op(B) (plain), D = α·A·op(B) + β·C (scaled), D = act(A·Bᵀ + bias)
//! (fused) or the FP8 GEMMs' D = s ⊙ A·Bᵀ (per-tensor scales `scale_a`, `scale_b`, row-wise
//! `sa` [M], `sb` [N], or block-wise `sa` [M, cdiv(K, 128)], `sb` [cdiv(N, 128), cdiv(K, 128)]),
//! or Blackwell's block-scaled D = (A·sA)·(B·sB)ᵀ (factor images `sfa`, `sfb`: `factors.rs`),
//! B given N×K (TN) or K×N (NN), in one pair of element types — its acceptance rules and its
//! cost model.
//!
//! Acceptance ([`ProblemDef::solves`] and the planner): the artifact declares
//! `solves = gemm` and its signature derives this layout and epilogue; its `a` and `d` hold
//! the requested types; and the runtime plans its launch on exactly these tensors (which checks
//! shapes, 16-byte TMA strides, base alignment, shared memory, the cluster and the grid
//! against the device's SM count).
//!
//! The cost model ([`GemmRequest::cost`]) estimates time from what the artifact is, never
//! from its name: `BM`, `BN` and `STAGES` from its config entries; from its signature, whether
//! A and D go through TMA, the cluster size and whether the grid is persistent (`SMS`). Per
//! 128-row tile of width BN, a wave of `SMS` tiles costs `BN / efficiency(BN)`; a Blackwell
//! CTA pair's 256-row tile is two such tiles on two SMs at once, so its waves count pair tiles
//! over `SMS / 2` ([`ctas_per_tile`]). Ties in cost and launch are broken by the dispatcher
//! (`dispatch::ranked`). The factors below multiply. Every number is a measurement on the H200 (docs/perf/gemm-h200.md):
//! - efficiency 1.0 for 256 columns, 0.97 for 192, 0.92 for 128, 0.82 for 64 (2026-11-30
//!   01:48: 6144³ in 9 waves of 128×256 tiles 682.5 µs, 12 of 128×192 670.5, 18 of 128×128
//!   743.6; 192 and 64 carry the 3 % margin the measured rule of that session demanded of a
//!   narrower tile, since at full waves 8192³ measured 128×256 ahead); 0.87 for 96, between
//!   64's and 128's (the transposed tile's 96 rows, measured on an H100: [`efficiency`]);
//! - D stored from registers instead of by TMA: ×1.02 (levels 7 → 8 at 8192³, 0.98 → 1.01);
//! - a 2-CTA cluster multicasting a shared operand: ×0.98 (levels 6 → 7 with the TMA store);
//!   but sharing A (each CTA's TMA box of A holds fewer than BM rows) on 64-column tiles is
//!   ×0.95 when A's rows are not 128-byte aligned (1000³: pair-N 12.0 µs against 14.6
//!   unshared; scaled 13.6 against 14.9 sharing B) and ×1.06 when they are (1024³: 10.8
//!   against 10.2 unshared; scaled 16.0 against 12.7 sharing B);
//! - a grid that is not persistent: ×1.25, no software pipeline (`STAGES` absent): ×1.3, A
//!   not loaded by TMA: ×3 (the ladder's levels 1–5 at 8192³: 0.22–0.96 of level 8). The
//!   ×1.25 is the cost of launching CTAs wave after wave, so the transposed tile
//!   (`gemm_sm90_t`, warp-specialised, TMA-stored) does not pay it where its tiles make one
//!   wave: each CTA runs its one tile as a persistent grid's would. The ladder's
//!   non-persistent kernels keep it at one wave too, since it also stands for what they lack
//!   beside the persistent ones (stop 56 call 6: at 208×8192×2048, one wave of 128×128
//!   tiles, `gemm_sm90/default` ran 274 TFLOP/s against `gemm_sm90_ws/n128`'s 328, and without
//!   the factor it had tied with it at the stream's bound and won on threads). Measured on an
//!   H100 at stop 56 (`docs/perf/h100-2026-12-07-stop56.md`): the transposed two-warpgroup
//!   tile `gemm_sm90_t/w2n96`, one wave of 128 CTAs, ran 192×8192×8192 at 408 TFLOP/s and
//!   192×8192×4096 at 375, ahead of the persistent 128×128 tiles (`tma_epi/n128` 371 and
//!   337) that the ×1.25 had ranked first; the model's one-wave estimate without it, 134.6
//!   units at 192×8192×8192 (53 µs), is the stream's bound, against 63 µs measured;
//! - the ping-pong consumer schedule (config entry `PINGPONG = 1`: each consumer warpgroup
//!   owns whole tiles, the two taking turns): its MMA efficiency is that of the accumulator one
//!   warpgroup holds (BM×BN, against a cooperative warpgroup's BM/2×BN), then ×1.04 for 64-row
//!   tiles and ×0.98 for 128-row tiles — measured on the H200 on 2026-12-05 after
//!   `carry-stage-counters` (docs/perf/h200-2026-12-05.md): 64×256 ping-pong 2–6 % behind
//!   the cooperative 128×256 at the four large shapes, 128×128 ping-pong (S = 6) 0–5 % ahead
//!   (row-wise 8192³ 1313.6 against 1279.9 TFLOP/s, 8192×28672×4096 1329.4 against 1264.5).
//!
//! - a block-scaled FP8 tile straddling weight blocks (`BN` not dividing 128): ×1.25, which
//!   keeps the 128-wide tile first as measured at three of four shapes ([`BLOCK_STRADDLE`]);
//!   the block-scaled kernel's warpgroups by turns (`PING`): ×1.045, measured ([`BLOCK_TURNS`]).
//!
//! Skinny shapes are bound by the stream, not the tiles: the cost is at least the time of
//! reading A and B and writing D ([`memory_units`]) at the device's HBM rate (its measured
//! device copy, `Device::hbm_bytes_per_s`: 4.3 TB/s on the H200, 2.87 on the H100) or at what
//! the CTAs' pipelines pull ([`pull_rate`]: their stage bytes in flight over [`STAGE_LATENCY_S`]),
//! whichever is less, plus one pipeline fill ([`fill_units`]). The CTAs that pull are counted
//! by the busiest one (wave quantisation of the stream): a grid of `T` tiles on `R < T`
//! resident CTAs (persistent, or in waves) gives `⌈T / R⌉` tiles' bytes to one CTA, so the
//! stream takes as long as `T / ⌈T / R⌉` CTAs pulling the whole time, not `R`. Measured on an
//! H100 on 2026-12-06
//! (`docs/perf/h100-2026-12-06-stop48/call4/bench-gemm.json`): at 64×14336×4096,
//! `gemm_sm90_ws/n64`'s 224 tiles on 132 CTAs took 62.8 µs, 2.2× the 28.8 µs of its one tile a
//! CTA at 64×4096×4096, and behind `gemm_sm90_ws/n128`'s 112 tiles in one wave (51.2 µs);
//! counting all 132 CTAs had ranked it first (at 0.777 of the fastest config measured there).
//! A one-launch kernel's HBM rate counts only the bytes of its TMA boxes inside the tensors
//! ([`box_share`]: rows past M are zero fill the stream carries too): at 64×8192×8192 and
//! 64×14336×4096 the 128-row kernels had ranked first at the full rate, at 0.820 and 0.952 of
//! the fastest config measured there (a 64-row split-K plan, 1.000 now).
//! The boxes themselves pass through the L2: A's rows once per column of tiles, B's once per
//! row of tiles, and a box's rows past M as zero fill that costs the stream more than the rows
//! it stands for. `reread.rs` charges them at the L2's measured rate, counted by the
//! busiest CTA (issue #32: a 96-row tile splitting M = 240 into three blocks, or a tile with 32
//! of its 96 rows fill at M = 160, had cost no more than a fuller one).
//! `dispatch::measured` checks the choice against the H100 measurements since (stop 53's 18
//! skinny TN shapes, stop 56's 9 at M = 80…256 and stop 54's 10 NN ones).
//!
//! The model ranks; the tune cache corrects it where it is wrong.
//!
//! **Untimed configs.** A config whose constants say `UNTIMED = 1` has never run on a GPU;
//! [`GemmRequest::cost`] refuses it and the host never chooses it (`untimed.rs`).

use tirx::abi::ElemType;
use tirx::problem::{BLayout, Epilogue, GemmProblem, Problem};
use tirx::runtime::TensorMeta;
use tirx::{KernelArtifact, TensorArg};

use super::fp8_ref::{Fp8Accum, Fp8ScaleMode};
use super::{reread, split, untimed};
use crate::dispatch::tune::{self, Key};
use crate::dispatch::{Device, ProblemDef, Reject, mentions_sms};

/// One GEMM to run: the problem and the tensors it runs on.
#[derive(Clone, Debug)]
pub struct GemmRequest {
    /// How B is given.
    pub layout: BLayout,
    /// Plain or scaled.
    pub epilogue: Epilogue,
    /// A's/B's and D's element types.
    pub types: GemmTypes,
    /// M, N, K.
    pub shape: (usize, usize, usize),
    /// A (M×K), B (N×K or K×N), C (M×N, scaled only), D (M×N).
    pub a: TensorMeta,
    /// B.
    pub b: TensorMeta,
    /// C, for the scaled epilogue.
    pub c: Option<TensorMeta>,
    /// The bias vector [N], for the fused bias epilogues.
    pub bias: Option<TensorMeta>,
    /// The residual R (M×N, D's type), for [`Epilogue::BiasResidual`].
    pub res: Option<TensorMeta>,
    /// D.
    pub d: TensorMeta,
    /// α, β (scaled); `scale_a`, `scale_b` (per-tensor FP8 scales); 1, 0 otherwise.
    pub scalars: (f32, f32),
    /// The FP8 scale tensors `sa` and `sb` (f32): [M] and [N] for [`Epilogue::ScaleRows`],
    /// [M, KB] and [NB, KB] for [`Epilogue::ScaleBlocks`], [KB, M4] and [NB, KB] for
    /// [`Epilogue::ScaleBlocksMn`] (`fp8_ref::Fp8ScaleMode::shapes`).
    pub row_scales: Option<(TensorMeta, TensorMeta)>,
    /// The factor images `sfa` [MS, KS] and `sfb` [NS, KS] of a block-scaled GEMM
    /// ([`Epilogue::ScaleFactors`], `super::factors`).
    pub factors: Option<(TensorMeta, TensorMeta)>,
    /// How an FP8 GEMM (per-tensor, row-wise or block-wise scales) accumulates: a
    /// [`Fp8Accum::Promoted`] request accepts only kernels that promote into f32 every 128 of
    /// K. Every constructor gives [`Fp8Accum::Fast`] (any kernel); set it with
    /// [`GemmRequest::with_accum`]. Other GEMMs ignore it.
    pub accum: Fp8Accum,
}

/// The scales of an FP8 GEMM's request ([`GemmRequest::on_fp8`]).
#[derive(Clone, Copy)]
pub enum Fp8ScaleArgs<'t, 'a> {
    /// `scale_a`, `scale_b`: D = (scale_a·scale_b)·A·Bᵀ.
    Tensor(f32, f32),
    /// `sa` [M], `sb` [N]: D = diag(sa)·A·Bᵀ·diag(sb).
    Rows(&'t TensorArg<'a>, &'t TensorArg<'a>),
    /// `sa` [M, KB], `sb` [NB, KB]: D = Σ_kb (A_kb·B_kbᵀ)·sa[:, kb]·sb[n / 128, kb].
    Blocks(&'t TensorArg<'a>, &'t TensorArg<'a>),
    /// `sa` [KB, M4] (MN-major), `sb` [NB, KB]: [`Epilogue::ScaleBlocksMn`].
    BlocksMn(&'t TensorArg<'a>, &'t TensorArg<'a>),
}

impl GemmRequest {
    /// The request on contiguous tensors at 256-byte aligned addresses: what a choice made
    /// before any tensor exists (listings, tests, the bench) judges.
    pub fn contiguous(
        layout: BLayout,
        epilogue: Epilogue,
        types: GemmTypes,
        (m, n, k): (usize, usize, usize),
    ) -> GemmRequest {
        let meta = |elem, shape: &[usize]| TensorMeta::row_major(elem, shape, 0);
        let b_shape = match layout {
            BLayout::Tn => [n, k],
            BLayout::Nn => [k, n],
        };
        let factors = match epilogue {
            Epilogue::ScaleFactors(f) => {
                let (sfa, sfb) = super::factors::image_shapes(f, types.input, (m, n, k));
                Some((meta(f.elem(), &sfa), meta(f.elem(), &sfb)))
            }
            _ => None,
        };
        GemmRequest {
            layout,
            epilogue,
            types,
            shape: (m, n, k),
            a: meta(types.input, &[m, k]),
            b: meta(types.input, &b_shape),
            c: (epilogue == Epilogue::Scaled).then(|| meta(types.output, &[m, n])),
            bias: matches!(epilogue, Epilogue::Bias(_) | Epilogue::BiasResidual(_))
                .then(|| meta(types.output, &[n])),
            res: matches!(epilogue, Epilogue::BiasResidual(_)).then(|| meta(types.output, &[m, n])),
            d: meta(types.output, &[m, n]),
            scalars: if epilogue == Epilogue::ScaleTensor {
                (1.0, 1.0)
            } else {
                (1.0, 0.0)
            },
            row_scales: match Fp8ScaleMode::of(epilogue) {
                Some(
                    mode @ (Fp8ScaleMode::Rows | Fp8ScaleMode::Blocks | Fp8ScaleMode::BlocksMn),
                ) => {
                    let (sa, sb) = mode.shapes((m, n, k));
                    Some((meta(ElemType::F32, &sa), meta(ElemType::F32, &sb)))
                }
                _ => None,
            },
            factors,
            accum: Fp8Accum::Fast,
        }
    }

    /// The request on the tensors given (their real strides and addresses count: a base that is
    /// not 16-byte aligned refuses the TMA kernels). M and K come from A, N from D.
    pub fn on(
        layout: BLayout,
        a: &TensorArg<'_>,
        b: &TensorArg<'_>,
        scaled: Option<(f32, &TensorArg<'_>, f32)>,
        d: &TensorArg<'_>,
    ) -> GemmRequest {
        let dim = |t: &TensorMeta, i: usize| t.shape.get(i).copied().unwrap_or(0);
        let (a, b, d) = (a.meta().clone(), b.meta().clone(), d.meta().clone());
        let shape = (dim(&a, 0), dim(&d, 1), dim(&a, 1));
        let types = GemmTypes {
            input: a.elem,
            output: d.elem,
        };
        let (epilogue, c, scalars) = match scaled {
            None => (Epilogue::Plain, None, (1.0, 0.0)),
            Some((alpha, c, beta)) => (Epilogue::Scaled, Some(c.meta().clone()), (alpha, beta)),
        };
        GemmRequest {
            layout,
            epilogue,
            types,
            shape,
            a,
            b,
            c,
            bias: None,
            res: None,
            d,
            scalars,
            row_scales: None,
            factors: None,
            accum: Fp8Accum::Fast,
        }
    }

    /// The request of D = act(A·op(B) + bias) on the tensors given.
    pub fn on_bias(
        layout: BLayout,
        act: tirx::problem::Act,
        a: &TensorArg<'_>,
        b: &TensorArg<'_>,
        bias: &TensorArg<'_>,
        d: &TensorArg<'_>,
    ) -> GemmRequest {
        GemmRequest {
            epilogue: Epilogue::Bias(act),
            bias: Some(bias.meta().clone()),
            ..GemmRequest::on(layout, a, b, None, d)
        }
    }

    /// The request of D = act(A·op(B) + bias) + R on the tensors given (`bias` with its
    /// activation), or of D = A·op(B) + R without them — which is BLAS's β = 1: the scaled
    /// request with C = R and α = β = 1, so every scaled kernel (and split K) computes it.
    pub fn on_residual(
        layout: BLayout,
        a: &TensorArg<'_>,
        b: &TensorArg<'_>,
        bias: Option<(tirx::problem::Act, &TensorArg<'_>)>,
        res: &TensorArg<'_>,
        d: &TensorArg<'_>,
    ) -> GemmRequest {
        match bias {
            None => GemmRequest::on(layout, a, b, Some((1.0, res, 1.0)), d),
            Some((act, bias)) => GemmRequest {
                epilogue: Epilogue::BiasResidual(act),
                res: Some(res.meta().clone()),
                ..GemmRequest::on_bias(layout, act, a, b, bias, d)
            },
        }
    }

    /// The request of an FP8 GEMM, D = s ⊙ A·Bᵀ (B given N×K, A and B E4M3 or E5M2), with
    /// per-tensor, row-wise or block-wise scales, on the tensors given.
    pub fn on_fp8(
        a: &TensorArg<'_>,
        b: &TensorArg<'_>,
        scales: Fp8ScaleArgs<'_, '_>,
        d: &TensorArg<'_>,
    ) -> GemmRequest {
        let plain = GemmRequest::on(BLayout::Tn, a, b, None, d);
        match scales {
            Fp8ScaleArgs::Tensor(sa, sb) => GemmRequest {
                epilogue: Epilogue::ScaleTensor,
                scalars: (sa, sb),
                ..plain
            },
            Fp8ScaleArgs::Rows(sa, sb) => GemmRequest {
                epilogue: Epilogue::ScaleRows,
                row_scales: Some((sa.meta().clone(), sb.meta().clone())),
                ..plain
            },
            Fp8ScaleArgs::Blocks(sa, sb) => GemmRequest {
                epilogue: Epilogue::ScaleBlocks,
                row_scales: Some((sa.meta().clone(), sb.meta().clone())),
                ..plain
            },
            Fp8ScaleArgs::BlocksMn(sa, sb) => GemmRequest {
                epilogue: Epilogue::ScaleBlocksMn,
                row_scales: Some((sa.meta().clone(), sb.meta().clone())),
                ..plain
            },
        }
    }

    /// The request with FP8 accumulation `accum` ([`GemmRequest::accum`]).
    pub fn with_accum(self, accum: Fp8Accum) -> GemmRequest {
        GemmRequest { accum, ..self }
    }

    /// `gemm tn plain`: the problem without types or shape (a cache key's part); a promoted
    /// FP8 request adds `promoted` (`gemm tn scale-rows promoted`), so its measured entries
    /// never mix with the fast form's.
    pub fn problem_name(&self) -> String {
        let promoted =
            self.accum == Fp8Accum::Promoted && Fp8ScaleMode::of(self.epilogue).is_some();
        let accum = if promoted { " promoted" } else { "" };
        format!(
            "gemm {} {}{accum}",
            self.layout.name(),
            self.epilogue.name()
        )
    }
}

impl ProblemDef for GemmRequest {
    fn describe(&self) -> String {
        let (m, n, k) = self.shape;
        format!("{}, {}, {m}x{n}x{k}", self.problem_name(), self.types)
    }

    fn solves(&self, artifact: &KernelArtifact) -> Result<(), Reject> {
        let want = Problem::Gemm(GemmProblem {
            b: self.layout,
            epilogue: self.epilogue,
        });
        if split::is_partial(artifact) {
            self.solves_split(artifact)?;
        } else if artifact.problem != Some(want) {
            return Err(Reject::problem(artifact));
        } else {
            let types = (artifact.elem_of("a"), artifact.elem_of("d"));
            if types != (Some(self.types.input), Some(self.types.output)) {
                return Err(Reject::Types {
                    found: vec![types.0, types.1],
                });
            }
        }
        // Promoted FP8 requests take only promoted kernels (the FP8 partials of split K
        // included; the plain and scaled ones never meet an FP8 request).
        if Fp8ScaleMode::of(self.epilogue).is_some() && !self.accum.admits(artifact) {
            return Err(Reject::FastAccum);
        }
        Ok(())
    }

    fn arguments(&self, artifact: &KernelArtifact) -> (Vec<TensorMeta>, Vec<f32>) {
        let (m, n, _) = self.shape;
        let sig = artifact.sig();
        let tensors = sig
            .tensors
            .iter()
            .filter_map(|t| match t.name.as_str() {
                "a" => Some(self.a.clone()),
                "b" => Some(self.b.clone()),
                "c" => self.c.clone(),
                "bias" => self.bias.clone(),
                "res" => self.res.clone(),
                "sa" => self.row_scales.as_ref().map(|s| s.0.clone()),
                "sb" => self.row_scales.as_ref().map(|s| s.1.clone()),
                "sfa" => self.factors.as_ref().map(|s| s.0.clone()),
                "sfb" => self.factors.as_ref().map(|s| s.1.clone()),
                // A split-K plan's workspace, for planning only (address 0; `split::launch_split`
                // runs the plan), at the slices an H200 would take (the
                // planner's checks of `w` do not depend on S).
                "w" => {
                    let s =
                        split::best_split(self, artifact, &Device::h200()).map_or(2, |(s, _)| s);
                    let shape = split::workspace_shape(artifact, s, (m, n));
                    Some(TensorMeta::row_major(ElemType::F32, &shape, 0))
                }
                // The transposed reduce's D is [M, N, 1] (`split::launch_plan`).
                "d" if t.shape.len() == 3 => {
                    let mut d = self.d.clone();
                    d.shape.push(1);
                    d.strides.push(1);
                    Some(d)
                }
                "d" => Some(self.d.clone()),
                _ => None,
            })
            .collect();
        let scalars = sig
            .scalars
            .iter()
            .map(|s| match s.as_str() {
                "alpha" | "scale_a" => self.scalars.0,
                _ => self.scalars.1,
            })
            .collect();
        (tensors, scalars)
    }

    fn cost(&self, artifact: &KernelArtifact, device: &Device) -> Result<f64, Reject> {
        if untimed::is_untimed(artifact) {
            return Err(Reject::Unranked(untimed::UNTIMED_REASON.into()));
        }
        self.model_cost(artifact, device)
    }

    fn cache_key(&self, device: &Device) -> Key {
        let (m, n, k) = self.shape;
        Key {
            device: device.name.clone(),
            sms: device.limits.sm_count,
            problem: self.problem_name(),
            types: self.types.to_string(),
            bucket: [tune::bucket(m), tune::bucket(n), tune::bucket(k)],
            align: [tune::alignment(m), tune::alignment(n), tune::alignment(k)],
        }
    }
}

impl GemmRequest {
    /// The cost model's estimate ([`ProblemDef::cost`] without the untimed guard:
    /// `untimed.rs`).
    pub(crate) fn model_cost(
        &self,
        artifact: &KernelArtifact,
        device: &Device,
    ) -> Result<f64, Reject> {
        let promotes = if artifact.int("PROMOTE").is_some_and(|p| p > 0) {
            PROMOTED
        } else {
            1.0
        };
        if split::is_partial(artifact) {
            return split::best_split(self, artifact, device).map(|(_, c)| c * promotes);
        }
        let (m, n, k) = self.shape;
        let transposed = is_transposed_tile(artifact);
        if transposed && !self.fits_transposed_tile() {
            return Err(Reject::Unranked(TRANSPOSED_RANGE.into()));
        }
        let Some((bm, bn)) = tile_extent(artifact) else {
            return Err(Reject::Unranked(
                "the cost model needs the config constants BM and BN".into(),
            ));
        };
        let sig = artifact.sig();
        let by_tma = |tensor: &str| {
            sig.params.iter().any(
                |p| matches!(p, tirx::abi::AbiParam::TensorMap { tensor: t, .. } if t == tensor),
            )
        };
        let persistent = sig.grid.iter().any(mentions_sms);
        let cluster: u32 = sig.cluster.iter().product();
        let pingpong = artifact.int("PINGPONG") == Some(1);
        // A ping-pong warpgroup accumulates its whole BM×BN tile, a cooperative one its half of
        // the rows: the MMA width that matters is the accumulator a warpgroup holds.
        // A transposed tile's MMA is `m64nBNk16` with BN its rows of D ([`tile_extent`]).
        let efficiency = if pingpong {
            efficiency(bm * bn / 64)
        } else if transposed {
            efficiency(bm)
        } else {
            efficiency(bn)
        };
        let tiles = m.div_ceil(bm) * n.div_ceil(bn);
        // A wave is one tile on every group of CTAs that computes a tile together (one CTA,
        // or a CTA pair), and costs one CTA's rows of it.
        let per_tile = ctas_per_tile(artifact);
        let slots = (device.limits.sm_count as usize / per_tile).max(1);
        let waves = tiles.div_ceil(slots);
        let base = waves as f64 * ((bm / per_tile) as f64 / 128.0) * bn as f64 / efficiency;
        let mut cost = base;
        if !by_tma("d") {
            cost *= 1.02;
        }
        if cluster > 1 {
            // A is the shared operand when each CTA's box of A holds fewer rows than the CTA
            // computes (the pair along N loads half each and multicasts it; a CTA pair of one
            // tile loads its own rows of A and shares B).
            let a_rows = sig.params.iter().find_map(|p| match p {
                tirx::abi::AbiParam::TensorMap {
                    tensor, box_dims, ..
                } if tensor == "a" => box_dims.last().copied(),
                _ => None,
            });
            let shares_a = a_rows.is_some_and(|r| (r as usize) < bm / per_tile);
            let a_rows_aligned = (k * self.types.input.bytes() as usize).is_multiple_of(128);
            cost *= match (shares_a && bn < 128, a_rows_aligned) {
                (false, _) => 0.98,
                (true, false) => 0.95,
                (true, true) => 1.06,
            };
        }
        // A grid that is not persistent pays for launching its CTAs wave after wave; the
        // transposed tile's one wave runs each CTA's one tile as a persistent grid would (the
        // module docs: the ladder's kernels keep the factor).
        if !persistent && (waves > 1 || !transposed) {
            cost *= 1.25;
        }
        if artifact.int("STAGES").is_none() {
            cost *= 1.3;
        }
        if !by_tma("a") {
            cost *= 3.0;
        }
        if pingpong {
            cost *= if bm >= 128 { 0.98 } else { 1.04 };
        }
        if self.epilogue == Epilogue::ScaleBlocks && !128usize.is_multiple_of(bn) {
            cost *= BLOCK_STRADDLE;
        }
        // Turns between the cooperative warpgroups' K blocks (`gemm_sm90_fp8_block/ping`):
        // measured 4 % slower than without them at every shape (H100, 2026-12-06).
        if artifact.int("PING") == Some(1) {
            cost *= BLOCK_TURNS;
        }
        cost *= promotes;
        // Skinny shapes stream A and B through few SMs: the time is their bytes at what those
        // CTAs pull, whenever that exceeds the tile work.
        let room = device.limits.sm_count as usize * ctas_per_sm(artifact);
        let ctas = tiles * per_tile;
        let resident = ctas.min(room);
        // The busiest CTA streams `⌈ctas / resident⌉` tiles' bytes: as long as
        // `ctas / ⌈ctas / resident⌉` CTAs streaming the whole time (the header's wave
        // quantisation of the stream).
        let streams = ctas as f64 / ctas.div_ceil(resident.max(1)) as f64;
        let rate = pull_rate(self, artifact);
        // One pipeline fill before anything streams (the later waves of a grid that is not
        // persistent are in its ×1.25).
        let hbm = device.hbm_bytes_per_s * box_share(self, artifact);
        let memory = memory_units(self, (streams, rate), 0.0, hbm);
        // The boxes every CTA pulls through the L2, re-reads and zero fill included, at the
        // tile's factors (`reread.rs`).
        let reread = reread::reread_units(self, artifact, device) * (cost / base);
        Ok(cost.max(memory).max(reread) + fill_units(1, k))
    }
}

/// A block-scaled FP8 tile whose N extent does not divide the 128-row weight blocks
/// (`fp8_block_wide.rs`: a tile straddling two blocks chooses each column's scale in the
/// promotion). Measured on an H100 on 2026-12-06 (`docs/perf/h100-2026-12-06-stop48.md`), the
/// 128×192 tile against the 128-wide one: 767 / 875 TFLOP/s at 4096³, 893 / 890 at 8192³,
/// 840 / 901 at 4096×7168×16384, 800 / 752 at 4096×2112×7168 — ahead only where the 128-wide
/// grid leaves a partial last wave. The factor keeps the 128-wide tile first at every shape
/// (the model alone would rank 128×192 ahead by up to 15 %), which costs 6 % at
/// 4096×2112×7168; `tirx tune` picks the wide tile there.
pub(crate) const BLOCK_STRADDLE: f64 = 1.25;
/// An FP8 kernel promoting every K tile (`fp8.rs`'s and `fp8_splitk.rs`'s `promoted*`
/// configs, `PROMOTE = 128`, all 128×128) against the same tile accumulating on the tensor
/// core. Measured on an H100: the promoted row-wise kernel ran 8192³ at 1173.9 TFLOP/s
/// (4096³ 1163.3, 4096×2112×7168 1006.9: 0.974–0.987 of cuBLASLt with `FAST_ACCUM = 0`;
/// stop 51, `docs/perf/h100-2026-12-06-stop51.md`), the fast row-wise 128×256 kernel 1288.0
/// (stop 47, `docs/perf/h100-2026-12-06-stop47.md`; 1314.9 at 4096×7168×16384): 1.097. The
/// fast 128×128 tile ran 8192³ at 0.985 of the fast 128×256 on the H200 (row-wise, 1260.7
/// against 1279.9 TFLOP/s, `docs/perf/h200-2026-12-05.md`), so against its own tile the
/// promotion costs 1.097 × 0.985 = 1.08. (It was 1.25, predicted from the block-scaled
/// kernel before any promoted kernel ran.) It ranks promoted kernels after fast ones for a
/// fast request (a promoted request sees no fast kernel).
pub(crate) const PROMOTED: f64 = 1.08;
/// `gemm_sm90_fp8_block/ping` against `/default` (the same tile, the warpgroups' MMAs issued
/// by turns): 845 / 880, 856 / 894, 857 / 898 and 739 / 773 TFLOP/s at 4096³, 8192³,
/// 4096×7168×16384 and 4096×2112×7168 (H100, 2026-12-06, `docs/perf/h100-2026-12-06-stop48.md`).
pub(crate) const BLOCK_TURNS: f64 = 1.045;
/// Bytes a second one CTA's TMA pipeline pulls from HBM when its config does not say how deep
/// it is (no `STAGES`): an estimate from issue #32's decode ratios (32–41 GB/s a CTA); the
/// tune cache corrects it.
pub(crate) const SM_BYTES_PER_S: f64 = 36e9;
/// The time a pipeline stage's load stays in flight under a streaming load, from its issue to
/// the consumer's release (Little's law: a CTA pulls its stages' bytes in flight per this
/// time). Measured on the H200 by ncu on 2026-12-04 (`docs/perf/decode-splitk-h200.md`):
/// `gemm_sm90_splitk/n64` at 1×4096×4096 pulled 16.9 GB/s a CTA with 8 stages of 8.3 KB
/// of bytes inside the tensors in flight (3.9 µs); `gemm_sm90_ws/n64` at 1×8192×8192 13.3 GB/s
/// with 8 of 8.3 KB (5.0 µs); cuBLAS's 64×8 decode kernel about 29 GB/s with about 147 KB
/// (5 µs).
pub(crate) const STAGE_LATENCY_S: f64 = 4.5e-6;
/// Shared memory of one SM (H100/H200: 228 KB, of which one CTA may take 227 KB), for the CTAs
/// of an artifact that fit an SM at once.
const SM_SHARED_BYTES: u32 = 228 * 1024;
/// Threads one SM holds at once.
const SM_THREADS: u32 = 2048;

/// The CTAs of `art` one SM holds at once, by its shared memory (with the 1 KB the driver
/// reserves per CTA) and its threads (registers are not modelled).
pub(crate) fn ctas_per_sm(art: &KernelArtifact) -> usize {
    let sig = art.sig();
    let by_smem = SM_SHARED_BYTES / (sig.smem_bytes + 1024).max(1);
    let by_threads = SM_THREADS / sig.threads.max(1);
    by_smem.min(by_threads).max(1) as usize
}

/// The CTAs that compute one `BM`-row tile of `art` together: on a tcgen05 target a CTA's
/// accumulator has the 128 lanes of its tensor memory, one row of D each (a `cta_group::1`
/// MMA is at most M = 128; M = 256 is the CTA pair's `cta_group::2`, PTX ISA §9.7.16.10.1), so
/// a tile of more rows is computed by `BM / 128` CTAs of its cluster; on Hopper every CTA
/// computes its own tile (a cluster shares operands, never a tile). A pair tile occupies two
/// SMs for the time one CTA's 128 rows take: waves count tiles over `SMS / 2` pair slots.
pub(crate) fn ctas_per_tile(art: &KernelArtifact) -> usize {
    let bm = art.int("BM").unwrap_or(128).max(1) as usize;
    let cluster: u32 = art.sig().cluster.iter().product();
    if art.target.has_tcgen05() && bm > 128 {
        (bm / 128).clamp(1, cluster.max(1) as usize)
    } else {
        1
    }
}

/// Bytes a second one CTA of `art` pulls from HBM on `request`: the bytes of its `STAGES`
/// pipeline stages that lie inside the tensors (a stage holds `BM` rows of A and `BN` of B,
/// halved for each CTA of a pair ([`ctas_per_tile`]),
/// `BK` wide; rows past M or N are TMA's zero fill and read nothing) over
/// [`STAGE_LATENCY_S`]; [`SM_BYTES_PER_S`] when the config does not name its stages.
pub(crate) fn pull_rate(request: &GemmRequest, art: &KernelArtifact) -> f64 {
    let (m, n, k) = request.shape;
    let (Some(stages), Some((bm, bn))) = (art.int("STAGES"), tile_extent(art)) else {
        return SM_BYTES_PER_S;
    };
    let bk = art.int("BK").unwrap_or(64).max(1) as usize;
    // A CTA pair's CTA loads half of the tile's rows of A and half of B's.
    // A transposed split-K partial (`split::is_transposed`) takes BM of B's rows, BN of A's.
    let (m, n) = if split::is_transposed(art) {
        (n, m)
    } else {
        (m, n)
    };
    let rows = (bm.min(m) + bn.min(n)) / ctas_per_tile(art);
    let stage = rows * bk.min(k) * request.types.input.bytes() as usize;
    (stages.max(1) as usize * stage) as f64 / STAGE_LATENCY_S
}
/// The share of the bytes `art`'s TMA boxes move on `request` that lie inside A and B: the
/// rows of A and B its tiles load inside the tensors, over the box rows `BM + BN` of every
/// tile. Rows past M or N are TMA's zero fill: they read nothing from HBM, but a one-launch
/// kernel streaming at the HBM's pace delivers only this share of the device's rate in bytes
/// that count, as if the fill passed through the stream with them. Measured on an H100
/// (`docs/perf/h100-2026-12-06-stop48/call4/bench-gemm.json`): at 64×8192×8192 every 128-row
/// one-launch config streamed at 1.60–2.13 TB/s (`gemm_sm90/default` and `gemm_sm90_ws1`
/// 2.13 with boxes 0.75 inside, 2.15 predicted; `gemm_sm90_ws/n64` 2.13 with 0.67, 1.91
/// predicted) against 2.24–2.63 at 128×8192×8192, where no row is fill, while the 64-row
/// split-K plans, no row past M, streamed 2.75 TB/s at M = 64; at 64×14336×4096 `ws/n64`'s
/// 1.91 TB/s is the predicted one. This is the persistent `ws` kernel's "14 GB/s a CTA at
/// M = 64" of `docs/perf/decode-splitk-h200.md` seen from the HBM's side. The split-K plans
/// (`split::best_split`) keep the whole rate: their 64-row boxes at M = 8 streamed faster than
/// the share would allow (8×4096×4096, `gemm_sm90_splitk/default`, boxes 0.71 inside: 34.7 MB
/// in 18.6 µs with its fill and second launch, where 0.71 of 2.87 TB/s alone takes 17 µs).
pub(crate) fn box_share(request: &GemmRequest, art: &KernelArtifact) -> f64 {
    let (m, n, _) = request.shape;
    let Some((bm, bn)) = tile_extent(art) else {
        return 1.0;
    };
    let (tm, tn) = (m.div_ceil(bm), n.div_ceil(bn));
    let inside = (m * tn + n * tm) as f64;
    let boxes = (tm * tn * (bm + bn)).max(1) as f64;
    (inside / boxes).min(1.0)
}

/// Whether `art` computes D transposed, Dᵀ = B·Aᵀ (`transposed.rs`' `gemm_sm90_t`: its config
/// constant `TRANS = 1`): `BM` (64) of B's rows for each of its `WG` consumer warpgroups on
/// the MMA's 64-row side, `BN` of A's rows on its N side.
pub(crate) fn is_transposed_tile(art: &KernelArtifact) -> bool {
    art.int("TRANS") == Some(1)
}

/// The rows of D (of M) and the columns (of N) one tile of `art` covers: `BM × BN`, or for a
/// transposed tile ([`is_transposed_tile`]) `BN × BM·WG`. `None` without `BM` and `BN`.
pub(crate) fn tile_extent(art: &KernelArtifact) -> Option<(usize, usize)> {
    let (bm, bn) = (
        art.int("BM")?.max(1) as usize,
        art.int("BN")?.max(1) as usize,
    );
    if is_transposed_tile(art) {
        let wg = art.int("WG").unwrap_or(1).max(1) as usize;
        Some((bn, bm * wg))
    } else {
        Some((bm, bn))
    }
}

/// Why a transposed tile is not ranked for a request ([`GemmRequest::fits_transposed_tile`]).
const TRANSPOSED_RANGE: &str = "the cost model ranks a transposed tile (`TRANS = 1`) only for a \
     request whose M is 65…256 and not a multiple of 128 (issue #32; measured there only, \
     at stop 56)";

/// FLOP/s one SM sustains in the shipped GEMM: 697 TFLOP/s at 8192³ over 132 SMs
/// (`level_08_tma_epi.rs`).
pub(crate) const SM_FLOPS: f64 = 697e12 / 132.0;

/// Seconds one unit of the cost model stands for at depth K: a 128-row, one-column slice of a
/// tile over the whole of K (a wave of 128×256 tiles is 256 units).
pub(crate) fn unit_seconds(k: usize) -> f64 {
    2.0 * 128.0 * k.max(1) as f64 / SM_FLOPS
}

/// The time, in units, of reading A and B once and writing D (plus `extra` bytes) by
/// `resident` CTAs each pulling `rate` bytes a second: at the HBM's rate `hbm` (the device's,
/// `Device::hbm_bytes_per_s`), or at what those
/// CTAs pull when that is less. `resident` need not be whole: a grid whose busiest CTA streams
/// more than its share counts as the fewer CTAs that would stream it all in that time (this
/// file's header).
pub(crate) fn memory_units(
    request: &GemmRequest,
    (resident, rate): (f64, f64),
    extra: f64,
    hbm: f64,
) -> f64 {
    let (m, n, k) = request.shape;
    let (mf, nf, kf) = (m as f64, n as f64, k as f64);
    let bytes = (mf + nf) * kf * request.types.input.bytes() as f64
        + mf * nf * request.types.output.bytes() as f64
        + extra;
    let rate = hbm.min(resident.max(1.0) * rate);
    bytes / rate / unit_seconds(k)
}

/// The time, in units, of `waves` pipeline fills: each wave of CTAs waits one
/// [`STAGE_LATENCY_S`] for its first stage before the stream runs (a split of K into more
/// CTAs than fit the SMs at once pays it again per wave).
pub(crate) fn fill_units(waves: usize, k: usize) -> f64 {
    waves as f64 * STAGE_LATENCY_S / unit_seconds(k)
}

/// The efficiency of a tile BN columns wide, relative to 256 (this file's header); 96…127
/// columns (the transposed tile's 96 rows of D on its MMA's N side) between 64's and 128's:
/// `gemm_sm90_t/w2n96`'s 64 CTAs ran 4.6–4.75 TFLOP/s each at 160 and 192×4096×4096 (H100,
/// stop 56), 0.87–0.90 of [`SM_FLOPS`].
pub(crate) fn efficiency(bn: usize) -> f64 {
    match bn {
        256.. => 1.0,
        192..=255 => 0.97,
        128..=191 => 0.92,
        96..=127 => 0.87,
        _ => 0.82,
    }
}

impl GemmRequest {
    /// Whether the cost model ranks a transposed tile ([`is_transposed_tile`]) for this
    /// request: M in 65…256, not a multiple of 128, TN or NN — the shapes where the row-major
    /// tiles leave rows of zero fill or too few CTAs (issue #32: 0.66–0.87 of cuBLASLt at
    /// M = 160…224, where cuBLAS runs a transposed 64×96 tile; NN 0.66–0.77 at stop 56, where
    /// `nn_n96` ran 0.939 at 192×4096×4096 and `nn_w2n96` led at N = 6144…14336,
    /// docs/perf/h100-2026-12-07-stop56.md). Elsewhere the kernel runs by name only.
    fn fits_transposed_tile(&self) -> bool {
        let m = self.shape.0;
        (65..=256).contains(&m) && !m.is_multiple_of(128)
    }

    /// Whether a split-K artifact (`Epilogue::Partial`, `split.rs`) computes this request: B in
    /// this layout, A in the input type, an epilogue of the artifact's kind
    /// ([`split::epilogue_fits`]: a plain, scaled or fused bias epilogue, with or without a
    /// residual, for 16-bit inputs; the FP8 scales, per tensor or row-wise, for 8-bit ones),
    /// and a reduce kernel on the artifact's target that writes D's type with that epilogue.
    fn solves_split(&self, artifact: &KernelArtifact) -> Result<(), Reject> {
        let layout_ok = matches!(artifact.problem, Some(Problem::Gemm(g)) if g.b == self.layout);
        if !layout_ok || self.epilogue == Epilogue::Partial {
            return Err(Reject::problem(artifact));
        }
        if !split::epilogue_fits(artifact, self) {
            return Err(Reject::problem(artifact));
        }
        let reduce = split::reduce_of(artifact, self);
        if artifact.elem_of("a") != Some(self.types.input) || reduce.is_none() {
            return Err(Reject::Types {
                found: vec![artifact.elem_of("a"), reduce.and_then(|r| r.elem_of("d"))],
            });
        }
        Ok(())
    }
}

/// Relative Frobenius error a bf16-output GEMM must stay under.
pub const GEMM_TOL: f64 = 1e-2;

/// The element types of a GEMM: A and B (`input`) and D (`output`); accumulation is f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmTypes {
    /// A's and B's element type.
    pub input: ElemType,
    /// D's element type.
    pub output: ElemType,
}

impl GemmTypes {
    /// BF16 in, BF16 out: the `default` configs.
    pub const BF16: GemmTypes = GemmTypes {
        input: ElemType::Bf16,
        output: ElemType::Bf16,
    };

    /// Every combination the shipped GEMMs take: BF16/FP16 in × BF16/FP16/FP32 out.
    pub const ALL: [GemmTypes; 6] = {
        use ElemType::{Bf16, F16, F32};
        [
            GemmTypes {
                input: Bf16,
                output: Bf16,
            },
            GemmTypes {
                input: Bf16,
                output: F16,
            },
            GemmTypes {
                input: Bf16,
                output: F32,
            },
            GemmTypes {
                input: F16,
                output: Bf16,
            },
            GemmTypes {
                input: F16,
                output: F16,
            },
            GemmTypes {
                input: F16,
                output: F32,
            },
        ]
    };

    /// Whether the shipped GEMMs take this combination ([`GemmTypes::ALL`]).
    pub fn is_shipped(self) -> bool {
        GemmTypes::ALL.contains(&self)
    }

    /// Relative Frobenius error a GEMM with this output type must stay under: the output's
    /// rounding (2⁻⁹ relative for bf16, 2⁻¹² for f16) with a margin; for f32 the f32
    /// accumulation order only, since the inputs are exact.
    pub fn tolerance(self) -> f64 {
        match self.output {
            ElemType::Bf16 => GEMM_TOL,
            ElemType::F16 => 2e-3,
            ElemType::F32 => 1e-4,
            // No GEMM writes 8-bit floats (the FP8 GEMMs read them); their rounding is 2⁻⁴
            // (E4M3) relative.
            ElemType::E4m3
            | ElemType::E5m2
            | ElemType::Ue8m0
            | ElemType::Ue4m3
            | ElemType::E2m1x2
            | ElemType::E3m2
            | ElemType::E2m3
            | ElemType::E2m1 => 2f64.powi(-3),
            // No GEMM writes integers (no `Tensor<i32>` GEMM is catalogued); exact if one did.
            ElemType::I32 | ElemType::U32 | ElemType::I8 | ElemType::U8 => 0.0,
            ElemType::I64 | ElemType::U64 => 0.0,
        }
    }
}

impl std::fmt::Display for GemmTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.input.name(), self.output.name())
    }
}
