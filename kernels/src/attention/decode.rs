//! Attention decode on the host: the shapes' checks, the split of the keys (how many chunks,
//! from the shape and the SM count), the workspace, and the launches of
//! `attention_sm90_decode` and `attention_decode_combine` (`hopper_decode.rs`, whose module
//! docs give the algorithm and what a split writes).
//!
//! The layout is `attention_sm90`'s: Q and O `[B, SQ, HQ·D]`, K and V `[B, SK, HK·D]` (torch's
//! `[B, S, H, D]`), the LSE `[B·HQ, SQ, 1]` f32 (natural log), with SQ = 1…16 query positions
//! per sequence (the new tokens of a decode step, or a speculative draft), causal masking
//! bottom-right aligned (query s sees keys j ≤ SK − SQ + s) and GQA by head counts (query head
//! h reads K/V head h / (HQ / HK)).
//!
//! [`Plan::new`] picks the kernel: `attention_sm90_decode_gqa` when the G = HQ/HK query heads
//! of a K/V head pack into one tile (one CTA reads each K/V block once for the whole group) —
//! of 64 rows, one consumer warpgroup, for G = 2 or 4 with SQ ≤ 16 and G = 8 with SQ ≤ 8; of
//! 128 rows, two, for G = 8 with SQ 9…16 and G = 16 with SQ ≤ 8 (the smallest tile whose rows
//! per head hold SQ) — else `attention_sm90_decode` (one CTA per query head: G = 16 with SQ > 8,
//! other groups). [`Split::plan`] cuts the SK keys into NS chunks of whole key blocks so that the
//! CTAs of all chunks (B·HK·NS packed, B·HQ·NS not) fill whole waves of the SMs (FA2's
//! heuristic; at least one key block a chunk, no empty chunk), one when the CTAs of one chunk
//! already fill 80% of them.
//! Unpacked with NS = 1 the decode kernel writes O and the LSE itself and no combine runs;
//! otherwise it writes partial results to the caller's f32 workspace ([`Plan::workspace_len`]
//! elements: the partial O, then the partial LSE, `hopper_decode.rs` gives their layout) and
//! `attention_decode_combine` reduces them into O and the LSE. Everything is checked before
//! the first launch: shapes, SQ in 1…16, SK ≥ 1, a tile for the head dim, a workspace large
//! enough — each refusal a typed [`DecodeError`].

use tirx::abi::ElemType;
use tirx::runtime::ScalarArg;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor, TensorArg};

use super::hopper_decode::kernels::{
    attention_decode_combine, attention_sm90_decode, attention_sm90_decode_gqa,
};
use super::reference::Dims;

/// The most query positions a decode call takes (the combine's 16-row tile).
pub const MAX_QUERIES: usize = 16;

/// The most chunks [`Split::plan`] cuts the keys into (FA2's cap).
pub const MAX_SPLITS: usize = 128;

/// Why a decode call is refused before its launch.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// Tensors whose shapes do not fit the layout.
    #[error("decode attention: {0}")]
    Shape(String),
    /// More query positions than the decode path takes (or none).
    #[error(
        "decode attention takes 1…{MAX_QUERIES} query positions per sequence, not {sq} (use attention_sm90 for prefill)"
    )]
    Queries {
        /// SQ asked.
        sq: usize,
    },
    /// No key to attend to (a TMA tensor has no empty extent).
    #[error("decode attention: k and v hold no key (SK = 0)")]
    NoKeys,
    /// No tile of the decode kernels for this head dim, mask and type.
    #[error(
        "no attention_sm90_decode tile for head dim {d}, {}, {}: head dims {have:?}",
        if *.causal { "causal" } else { "full" },
        .elem.name()
    )]
    NoTile {
        /// The head dim asked.
        d: usize,
        /// Causal.
        causal: bool,
        /// The element type.
        elem: ElemType,
        /// The head dims the kernels have.
        have: Vec<usize>,
    },
    /// A split asked of the caller that the keys cannot give.
    #[error("decode attention: {splits} splits of {blocks} key blocks (1…{blocks} splits)")]
    Splits {
        /// Splits asked.
        splits: usize,
        /// Key blocks of the problem.
        blocks: usize,
    },
    /// The caller's workspace holds fewer f32 elements than the split needs.
    #[error(
        "decode attention: the workspace holds {have} f32 elements, and {splits} splits need {need}"
    )]
    Workspace {
        /// Elements needed ([`Plan::workspace_len`]).
        need: usize,
        /// Elements the workspace holds.
        have: usize,
        /// Splits of the call.
        splits: usize,
    },
    /// The runtime refused or failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// Checks `[q, k, v, o, lse]`'s shapes for head dim `d`: q and o `[B, SQ, HQ·D]`, k and v
/// `[B, SK, HK·D]`, HK | HQ, the LSE `[B·HQ, SQ, 1]`, 1 ≤ SQ ≤ 16, SK ≥ 1; gives the dims.
pub fn dims_of([q, k, v, o, lse]: [&[usize]; 5], d: usize) -> Result<Dims, DecodeError> {
    let bad = |why: String| DecodeError::Shape(why);
    if [q, k, v, o].iter().any(|s| s.len() != 3) || q != o || k != v || q[0] != k[0] {
        return Err(bad(format!(
            "q {q:?}, k {k:?}, v {v:?}, o {o:?}: q and o must be one [B, SQ, HQ·D], k and v one [B, SK, HK·D]"
        )));
    }
    if d == 0
        || k[2] == 0
        || !q[2].is_multiple_of(d)
        || !k[2].is_multiple_of(d)
        || !(q[2] / d).is_multiple_of(k[2] / d)
    {
        return Err(bad(format!(
            "head dim {d} over q {q:?} and k {k:?}: D must divide both widths and the K/V heads the query heads"
        )));
    }
    let dims = Dims {
        b: q[0],
        s: q[1],
        sk: k[1],
        hq: q[2] / d,
        hk: k[2] / d,
        d,
        dv: d,
    };
    if lse != [dims.b * dims.hq, dims.s, 1] {
        return Err(bad(format!(
            "lse {lse:?}: it must be [B·HQ, SQ, 1] = {:?}",
            [dims.b * dims.hq, dims.s, 1]
        )));
    }
    if !(1..=MAX_QUERIES).contains(&dims.s) {
        return Err(DecodeError::Queries { sq: dims.s });
    }
    if dims.sk == 0 {
        return Err(DecodeError::NoKeys);
    }
    if dims.b == 0 {
        return Err(bad("an empty batch (B = 0)".into()));
    }
    Ok(dims)
}

/// How the keys are cut: `splits` chunks of `chunk_blocks` key blocks of `block` keys (the
/// last chunk shorter, none empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// NS, the chunks (1: no combine).
    pub splits: usize,
    /// Key blocks per chunk.
    pub chunk_blocks: usize,
    /// Keys per block (the tile's `BN`).
    pub block: usize,
}

impl Split {
    /// The split for `dims` over key blocks of `block` keys on `sms` SMs, with `ctas` CTAs per
    /// split (B·HQ, or B·HK when the query heads of a K/V head are packed into one CTA) —
    /// FA2's `num_splits_heuristic` (`flash_api.cpp`): none when `ctas` already fill 80% of the
    /// SMs; else, over the splits that give distinct chunk lengths (1…min(blocks, SMs, 128)),
    /// the fewest whose wave efficiency (`ctas·NS / SMs` over its ceiling: how full the last
    /// wave is) is within 85% of the best — a whole wave rather than one and a bit, so no
    /// split's CTAs wait on a tail. Then evened out as [`Split::with`] does.
    pub fn plan(dims: &Dims, block: usize, sms: usize, ctas: usize) -> Split {
        let (ctas, sms) = (ctas.max(1), sms.max(1));
        let blocks = dims.sk.div_ceil(block).max(1);
        if ctas * 10 >= sms * 8 {
            return Split::with(dims, block, 1);
        }
        let most = blocks.min(sms).min(MAX_SPLITS);
        let efficiency = |n: usize| {
            let waves = (ctas * n) as f64 / sms as f64;
            waves / waves.ceil()
        };
        // A split whose chunks are as long as the one before's only adds CTAs with no keys.
        let eligible = |n: usize| n == 1 || blocks.div_ceil(n) != blocks.div_ceil(n - 1);
        let best = (1..=most)
            .filter(|&n| eligible(n))
            .map(efficiency)
            .fold(0.0, f64::max);
        let n = (1..=most)
            .find(|&n| eligible(n) && efficiency(n) >= 0.85 * best)
            .unwrap_or(1);
        Split::with(dims, block, n)
    }

    /// `splits` chunks asked (clamped to 1…blocks), evened out as [`Split::plan`] does.
    pub fn with(dims: &Dims, block: usize, splits: usize) -> Split {
        let blocks = dims.sk.div_ceil(block).max(1);
        let chunk_blocks = blocks.div_ceil(splits.clamp(1, blocks));
        Split {
            splits: blocks.div_ceil(chunk_blocks),
            chunk_blocks,
            block,
        }
    }
}

/// GQA packing: the G query heads of a K/V head in one tile of G·`rows` rows (64: one
/// consumer warpgroup; 128: two), `rows` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pack {
    /// G = HQ / HK.
    pub group: usize,
    /// Rows of the tile per query head (SQB; SQ ≤ SQB).
    pub rows: usize,
}

impl Pack {
    /// Rows of the packed tile, G·SQB (64 or 128): the rows of a workspace block.
    pub fn tile_rows(&self) -> usize {
        self.group * self.rows
    }
}

/// The kernels of one call: the decode tile and the combine.
#[derive(Clone, Copy, Debug)]
pub struct Tiles {
    /// `attention_sm90_decode` (writing O in `T`, or f32 partials when split) or
    /// `attention_sm90_decode_gqa` (packed: always f32 partials).
    pub decode: &'static KernelArtifact,
    /// `attention_decode_combine` for the head dim and type.
    pub combine: &'static KernelArtifact,
    /// The packing of the GQA kernel; `None` for `attention_sm90_decode`.
    pub pack: Option<Pack>,
}

/// The artifacts for head dim `d`, the mask and the element type: with `pack`, the GQA
/// kernel of that group and rows per head; else `attention_sm90_decode`, `split` picking its
/// form that writes f32 partials.
pub fn tiles_for(
    d: usize,
    (causal, elem): (bool, ElemType),
    split: bool,
    pack: Option<Pack>,
) -> Result<Tiles, DecodeError> {
    let no_tile = || {
        let mut have: Vec<usize> = attention_sm90_decode::KERNEL
            .artifacts
            .iter()
            .filter_map(|a| a.int("D").map(|d| d as usize))
            .collect();
        have.sort();
        have.dedup();
        DecodeError::NoTile {
            d,
            causal,
            elem,
            have,
        }
    };
    let ours = |a: &&KernelArtifact| {
        a.int("D") == Some(d as i64)
            && a.int("CAUSAL") == Some(i64::from(causal))
            && a.elem_of("q") == Some(elem)
    };
    let out = if split { ElemType::F32 } else { elem };
    let (decode, pack) = match pack {
        Some(p) => {
            let art = attention_sm90_decode_gqa::KERNEL
                .artifacts
                .iter()
                .filter(ours)
                .find(|a| a.int("G") == Some(p.group as i64) && a.int("SQB") == Some(p.rows as i64))
                .ok_or_else(no_tile)?;
            (art, Some(p))
        }
        None => {
            let art = attention_sm90_decode::KERNEL
                .artifacts
                .iter()
                .filter(ours)
                .find(|a| a.elem_of("o") == Some(out))
                .ok_or_else(no_tile)?;
            (art, None)
        }
    };
    let combine = attention_decode_combine::KERNEL
        .artifacts
        .iter()
        .find(|a| a.int("D") == Some(d as i64) && a.elem_of("o") == Some(elem))
        .ok_or_else(no_tile)?;
    Ok(Tiles {
        decode,
        combine,
        pack,
    })
}

/// The groups the GQA kernel packs, with the query positions each takes (SQB = 64 / G, or
/// 128 / G in the two-warpgroup tiles), by group and then rows: the first that holds SQ is
/// the smallest tile.
pub fn pack_groups() -> Vec<Pack> {
    let mut out: Vec<Pack> = attention_sm90_decode_gqa::KERNEL
        .artifacts
        .iter()
        .filter_map(|a| {
            Some(Pack {
                group: a.int("G")? as usize,
                rows: a.int("SQB")? as usize,
            })
        })
        .collect();
    out.sort_by_key(|p| (p.group, p.rows));
    out.dedup();
    out
}

/// The outputs of one call: O `[B, SQ, HQ·D]` and the LSE `[B·HQ, SQ, 1]`.
pub struct Outputs<'a, T: tirx::Element> {
    /// O.
    pub o: &'a mut Tensor<T>,
    /// The log-sum-exp of each query position per head (natural log; −∞ where no key is seen).
    pub lse: &'a mut Tensor<f32>,
}

/// What a caller asks of the plan beyond the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    /// Chunks of the keys; `None`: the host's split for the SMs ([`Split::plan`]).
    pub splits: Option<usize>,
    /// Pack the query heads of a K/V head into one tile where the GQA kernel has the group
    /// and SQ fits its rows ([`pack_groups`]).
    pub pack: bool,
}

impl Default for Ask {
    /// The host's split, packed where it can.
    fn default() -> Ask {
        Ask {
            splits: None,
            pack: true,
        }
    }
}

/// A checked decode call: its dims, split and kernels ([`Plan::new`]), launched by
/// [`Plan::launch`].
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// The problem.
    pub dims: Dims,
    /// The cut of the keys.
    pub split: Split,
    /// The kernels.
    pub tiles: Tiles,
    /// Causal.
    pub causal: bool,
}

impl Plan {
    /// Checks the shapes ([`dims_of`]), picks the kernels (packed when asked and possible),
    /// cuts the keys for `sms` SMs ([`Split::plan`], B·HQ or B·HK CTAs a split) or into
    /// `ask.splits` chunks (refused outside 1…blocks).
    pub fn new(
        shapes: [&[usize]; 5],
        d: usize,
        (causal, elem): (bool, ElemType),
        sms: usize,
        ask: Ask,
    ) -> Result<Plan, DecodeError> {
        let dims = dims_of(shapes, d)?;
        let group = dims.hq / dims.hk;
        // The smallest tile whose rows per head hold SQ (`pack_groups`' order).
        let pack = pack_groups()
            .into_iter()
            .find(|p| ask.pack && p.group == group && dims.s <= p.rows);
        // The block is the tile's, the same in every form.
        let probe = tiles_for(d, (causal, elem), false, pack)?;
        let block = probe.decode.int("BN").unwrap_or(128) as usize;
        let ctas = dims.b * if pack.is_some() { dims.hk } else { dims.hq };
        let split = match ask.splits {
            None => Split::plan(&dims, block, sms, ctas),
            Some(n) => {
                let blocks = dims.sk.div_ceil(block);
                if !(1..=blocks).contains(&n) {
                    return Err(DecodeError::Splits { splits: n, blocks });
                }
                Split::with(&dims, block, n)
            }
        };
        let tiles = tiles_for(d, (causal, elem), split.splits > 1, pack)?;
        Ok(Plan {
            dims,
            split,
            tiles,
            causal,
        })
    }

    /// Whether the combine runs: more than one split, or packed (the GQA kernel writes
    /// partials only).
    pub fn combines(&self) -> bool {
        self.split.splits > 1 || self.tiles.pack.is_some()
    }

    /// The workspace's partial O and LSE shapes: a block per (split, batch, head) of
    /// `[SQ, D]` (unpacked), or per (split, batch, K/V head) of `[G·SQB, D]` (packed: 64 or
    /// 128 rows).
    fn part_shapes(&self) -> ([usize; 3], [usize; 3]) {
        let Dims {
            b, s, hq, hk, d, ..
        } = self.dims;
        let ns = self.split.splits;
        let (blocks, rows) = match self.tiles.pack {
            Some(p) => (ns * b * hk, p.tile_rows()),
            None => (ns * b * hq, s),
        };
        ([blocks, rows, d], [blocks, rows, 1])
    }

    /// f32 elements of the workspace the call needs: the partial O, then the partial LSE
    /// ([`Plan::part_shapes`]); 0 when no combine runs.
    pub fn workspace_len(&self) -> usize {
        if !self.combines() {
            return 0;
        }
        let (o, l) = self.part_shapes();
        o.iter().product::<usize>() + l.iter().product::<usize>()
    }

    /// The combine's `group` and `pitch` (where head h's rows start in its block).
    fn combine_scalars(&self) -> [ScalarArg; 2] {
        let (g, p) = self.tiles.pack.map_or((1, 0), |p| (p.group, p.rows));
        [ScalarArg::U32(g as u32), ScalarArg::U32(p as u32)]
    }

    /// The typed refusal of a workspace of `have` f32 elements, if too small.
    fn check_workspace(&self, have: usize) -> Result<(), DecodeError> {
        let need = self.workspace_len();
        if have < need {
            return Err(DecodeError::Workspace {
                need,
                have,
                splits: self.split.splits,
            });
        }
        Ok(())
    }

    /// Launches the call on `[q, k, v, o, lse]` with the f32 workspace `ws` (used when the
    /// combine runs, of at least [`Plan::workspace_len`] elements), without waiting.
    pub fn launch(
        &self,
        rt: &Runtime,
        [q, k, v, o, lse]: [TensorArg<'_>; 5],
        ws: Option<&Tensor<f32>>,
        scale: f32,
    ) -> Result<(), DecodeError> {
        let shapes = [&q, &k, &v, &o, &lse].map(|t| t.meta().shape.as_slice());
        if dims_of(shapes, self.dims.d)? != self.dims {
            return Err(DecodeError::Shape(format!(
                "the tensors {shapes:?} are not the planned problem {:?}",
                self.dims
            )));
        }
        let scalars = [
            ScalarArg::F32(scale * std::f32::consts::LOG2_E),
            ScalarArg::U32(self.split.chunk_blocks as u32),
        ];
        if !self.combines() {
            rt.launch_args(self.tiles.decode, &[q, k, v, o, lse], &scalars)?;
            return Ok(());
        }
        self.check_workspace(ws.map_or(0, |w| w.buffer().len()))?;
        let Some(ws) = ws else {
            return self.check_workspace(0);
        };
        let (o_shape, l_shape) = self.part_shapes();
        let row_major = |s: [usize; 3]| [s[1] * s[2], s[2], 1];
        let o_part = ws.subview(0, &o_shape, &row_major(o_shape))?;
        let l_at = o_shape.iter().product();
        let l_part = ws.subview(l_at, &l_shape, &row_major(l_shape))?;
        let parts = [q, k, v, o_part.clone(), l_part.clone()];
        rt.launch_args(self.tiles.decode, &parts, &scalars)?;
        let combine = [o_part, l_part, o, lse];
        rt.launch_args(self.tiles.combine, &combine, &self.combine_scalars())?;
        Ok(())
    }
}

/// O = softmax(scale·Q·Kᵀ [+ causal mask])·V and the LSE for SQ ≤ 16 query positions per
/// sequence (module docs): checks, cuts the keys for the device's SMs, launches the decode
/// kernel and, when the plan combines ([`Plan::combines`]), the combine over `workspace` (which must hold
/// [`Plan::workspace_len`] f32 elements of the returned plan: [`Plan::new`] says how many
/// before the call); waits for both. Returns the plan.
#[allow(clippy::too_many_arguments)]
pub fn run<T: tirx::Element>(
    rt: &Runtime,
    q: &Tensor<T>,
    k: &Tensor<T>,
    v: &Tensor<T>,
    out: Outputs<'_, T>,
    workspace: Option<&Tensor<f32>>,
    d: usize,
    causal: bool,
    scale: f32,
) -> Result<Plan, DecodeError> {
    let shapes = [
        q.shape(),
        k.shape(),
        v.shape(),
        out.o.shape(),
        out.lse.shape(),
    ];
    let sms = rt.sm_count() as usize;
    let plan = Plan::new(shapes, d, (causal, T::ELEM), sms, Ask::default())?;
    let args = [q.view(), k.view(), v.view(), out.o.view(), out.lse.view()];
    plan.launch(rt, args, workspace, scale)?;
    rt.synchronize()?;
    Ok(plan)
}

mod sim;
pub use sim::simulate;

#[cfg(test)]
mod tests;
