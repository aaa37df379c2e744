//! Variable-length attention batches on the host: the offsets' checks, the tile for a head dim,
//! mask and element type, the launch of `attention_sm90_varlen` (`hopper_varlen.rs`), its f64
//! reference and its run in the emulator.
//!
//! The layout is FA2/FA3's `flash_attn_varlen_func`'s: the B sequences packed one after the
//! other, Q `[TQ, HQ·D]`, K and V `[TK, HK·D]` (torch's `[total, H, D]`), O as Q, and the
//! cumulative offsets `cu_seqlens_q`, `cu_seqlens_k` (B + 1 non-decreasing i32 each, the last
//! the total): sequence `b` is rows `cu_q[b]…cu_q[b + 1]` of Q and `cu_k[b]…cu_k[b + 1]` of K/V.
//! The LSE is `[HQ, TQ, 1]` f32, one row per query head, one value per token (FA3's varlen
//! layout). Empty sequences and sequences of one token are allowed; a sequence's query and key
//! lengths may differ (a prefill after a cached prefix), causal then bottom-right aligned per
//! sequence (query i sees keys j ≤ i + SK − SQ); a query that sees no key (SQ > SK) gets O = 0
//! and LSE = −∞.
//!
//! The offsets are taken as host slices: they are checked here ([`Offsets::new`]) before
//! anything is launched — an offset array of the wrong length, one that decreases, starts below
//! zero or does not end at its tensor's total is a typed [`VarlenError`] — and uploaded for the
//! kernel (a few bytes), with the list of the batch's query tiles ([`Offsets::tiles`], longest
//! first), which is the kernel's grid: one CTA per (tile, query head), whatever the lengths.
//! [`Batch`] holds both for one artifact; [`launch`] checks the tensors against it on the host.
//! A batch with no query token has no tile and launches nothing.

use std::num::NonZeroUsize;

use tirx::abi::ElemType;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor};

use super::hopper_varlen::kernels::attention_sm90_varlen;
use crate::reference::HostElem;

/// Why a variable-length attention call is refused before its launch.
#[derive(Debug, thiserror::Error)]
pub enum VarlenError {
    /// The two offset arrays have different lengths (they describe one batch).
    #[error("cu_seqlens_q has {q} entries and cu_seqlens_k {k}: both are B + 1 for one batch")]
    LengthsDiffer {
        /// Entries of `cu_seqlens_q`.
        q: usize,
        /// Entries of `cu_seqlens_k`.
        k: usize,
    },
    /// No entry at all (B + 1 ≥ 1).
    #[error("cu_seqlens_{which} is empty: it holds B + 1 offsets, at least [0]")]
    Empty {
        /// `q` or `k`.
        which: &'static str,
    },
    /// An offset below zero.
    #[error("cu_seqlens_{which}[0] = {first}: offsets start at 0 or above")]
    Negative {
        /// `q` or `k`.
        which: &'static str,
        /// The first offset.
        first: i32,
    },
    /// Offsets that decrease: a negative sequence length.
    #[error(
        "cu_seqlens_{which} decreases at {at}: {before} then {after} (offsets are cumulative lengths, non-decreasing)"
    )]
    NotMonotone {
        /// `q` or `k`.
        which: &'static str,
        /// Index of the smaller entry.
        at: usize,
        /// The entry before it.
        before: i32,
        /// The entry.
        after: i32,
    },
    /// The last offset is not the tensor's token count.
    #[error("cu_seqlens_{which} ends at {last}, but {tensor} holds {total} tokens")]
    LastNotTotal {
        /// `q` or `k`.
        which: &'static str,
        /// The last offset.
        last: i32,
        /// `q` or `k`/`v`.
        tensor: &'static str,
        /// Rows of that tensor.
        total: usize,
    },
    /// Tensors whose shapes do not fit the layout.
    #[error("{0}")]
    Shape(String),
    /// No tile of `attention_sm90_varlen` for this head dim, mask and type.
    #[error(
        "no attention_sm90_varlen tile for head dim {d}, {}, {}: head dims {have:?}",
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
        /// The head dims the kernel has.
        have: Vec<usize>,
    },
    /// An artifact that is not a tile of `attention_sm90_varlen`.
    #[error("artifact `{config}` is not a tile of attention_sm90_varlen")]
    NotVarlen {
        /// The artifact's config.
        config: &'static str,
    },
    /// The runtime refused or failed (upload, launch).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// Checked cumulative offsets of one batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offsets {
    /// `cu_seqlens_q`, B + 1 entries.
    pub q: Vec<i32>,
    /// `cu_seqlens_k`, B + 1 entries.
    pub k: Vec<i32>,
}

impl Offsets {
    /// Checks `cu_q` and `cu_k` against the token counts `total_q` (Q's rows) and `total_k`
    /// (K's and V's): equal lengths, at least one entry, starting at 0 or above,
    /// non-decreasing, ending at the totals.
    pub fn new(
        cu_q: &[i32],
        cu_k: &[i32],
        total_q: usize,
        total_k: usize,
    ) -> Result<Offsets, VarlenError> {
        if cu_q.len() != cu_k.len() {
            return Err(VarlenError::LengthsDiffer {
                q: cu_q.len(),
                k: cu_k.len(),
            });
        }
        for (which, cu, tensor, total) in [("q", cu_q, "q", total_q), ("k", cu_k, "k/v", total_k)] {
            let (&first, &last) = cu
                .first()
                .zip(cu.last())
                .ok_or(VarlenError::Empty { which })?;
            if first < 0 {
                return Err(VarlenError::Negative { which, first });
            }
            if let Some(at) = cu.windows(2).position(|w| w[1] < w[0]) {
                return Err(VarlenError::NotMonotone {
                    which,
                    at: at + 1,
                    before: cu[at],
                    after: cu[at + 1],
                });
            }
            if usize::try_from(last).ok() != Some(total) {
                return Err(VarlenError::LastNotTotal {
                    which,
                    last,
                    tensor,
                    total,
                });
            }
        }
        Ok(Offsets {
            q: cu_q.to_vec(),
            k: cu_k.to_vec(),
        })
    }

    /// Sequences in the batch.
    pub fn batch(&self) -> usize {
        self.q.len() - 1
    }

    /// The batch's query tiles of `rows` rows (the kernel's `tiles` list, [`tile_list`]):
    /// every tile of every sequence with queries once — a sequence of SQ queries has
    /// `cdiv(SQ, rows)`, an empty one none — those that read the most keys first (FA3's
    /// longest-first order: a long sequence's tiles before a short one's, and with the causal
    /// mask a sequence's later tiles, which see more keys, before its earlier ones), sequence
    /// then tile order between equals. Empty when no sequence has a query (TQ = 0).
    pub fn tiles(&self, rows: NonZeroUsize, causal: bool) -> Vec<QueryTile> {
        let rows = rows.get();
        let mut all: Vec<QueryTile> = Vec::new();
        for seq in 0..self.batch() {
            let (rq, rk) = self.seq(seq);
            let (sq, sk) = (rq.len(), rk.len());
            for tile in 0..sq.div_ceil(rows) {
                // The tile's last row, (tile + 1)·rows − 1, sees keys j ≤ i + SK − SQ when
                // causal (bottom-right aligned); at most SK, at least none.
                let keys = if causal {
                    ((tile + 1) * rows + sk).saturating_sub(sq).min(sk)
                } else {
                    sk
                };
                all.push(QueryTile { seq, tile, keys });
            }
        }
        all.sort_by_key(|t| (std::cmp::Reverse(t.keys), t.seq, t.tile));
        all
    }

    /// Sequence `b`'s query rows and key rows.
    pub fn seq(&self, b: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let r = |cu: &[i32]| cu[b] as usize..cu[b + 1] as usize;
        (r(&self.q), r(&self.k))
    }
}

/// One query tile of a batch: query rows `tile·rows…(tile + 1)·rows` of sequence `seq` (the
/// rows past the sequence's end are not its own, and are never stored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryTile {
    /// The sequence.
    pub seq: usize,
    /// The tile within the sequence.
    pub tile: usize,
    /// Keys its last row sees: all the sequence's, or with the causal mask those up to the
    /// row's bottom-right aligned diagonal (the order's key, [`Offsets::tiles`]).
    pub keys: usize,
}

/// `tiles` as the kernel's `tiles` tensor, `[NT, 2]` i32 row-major: `(seq, tile)` per row.
pub fn tile_list(tiles: &[QueryTile]) -> Vec<i32> {
    // Both fit an i32: a sequence is an index into `cu_seqlens` (an i32 array's length − 1)
    // and a tile's first row is an i32 offset.
    tiles
        .iter()
        .flat_map(|t| [t.seq as i32, t.tile as i32])
        .collect()
}

/// The `attention_sm90_varlen` artifact for head dim `d`, the mask and the element type.
pub fn tile_for(
    d: usize,
    causal: bool,
    elem: ElemType,
) -> Result<&'static KernelArtifact, VarlenError> {
    let arts = attention_sm90_varlen::KERNEL.artifacts;
    arts.iter()
        .find(|a| {
            a.int("D") == Some(d as i64)
                && a.int("CAUSAL") == Some(i64::from(causal))
                && a.elem_of("q") == Some(elem)
        })
        .ok_or_else(|| {
            let mut have: Vec<usize> = arts
                .iter()
                .filter_map(|a| a.int("D").map(|d| d as usize))
                .collect();
            have.sort();
            have.dedup();
            VarlenError::NoTile {
                d,
                causal,
                elem,
                have,
            }
        })
}

/// The outputs of one call: O `[TQ, HQ·D]` and the LSE `[HQ, TQ, 1]`.
pub struct Outputs<'a, T: tirx::Element> {
    /// O.
    pub o: &'a mut Tensor<T>,
    /// The log-sum-exp of each query token per head (natural log; −∞ where no key is seen).
    pub lse: &'a mut Tensor<f32>,
}

/// Checks the shapes of a call: q and o `[TQ, HQ·D]`, k and v `[TK, HK·D]`, HK | HQ, the LSE
/// `[HQ, TQ, 1]`; gives (HQ, HK). The paged kernel's shapes are these, its caches merged.
pub(super) fn heads(
    [q, k, v, o, lse]: [&[usize]; 5],
    d: usize,
) -> Result<(usize, usize), VarlenError> {
    let bad = |why: String| VarlenError::Shape(format!("varlen attention: {why}"));
    if [q, k, v, o].iter().any(|s| s.len() != 2) || q != o || k != v {
        return Err(bad(format!(
            "q {q:?}, k {k:?}, v {v:?}, o {o:?}: q and o must be one [TQ, HQ·D], k and v one [TK, HK·D]"
        )));
    }
    if d == 0
        || k[1] == 0
        || !q[1].is_multiple_of(d)
        || !k[1].is_multiple_of(d)
        || !(q[1] / d).is_multiple_of(k[1] / d)
    {
        return Err(bad(format!(
            "head dim {d} over q {q:?} and k {k:?}: D must divide both widths and the K/V heads the query heads"
        )));
    }
    let hq = q[1] / d;
    if lse != [hq, q[0], 1] {
        return Err(bad(format!(
            "lse {lse:?}: it must be [HQ, TQ, 1] = {:?}",
            [hq, q[0], 1]
        )));
    }
    Ok((hq, k[1] / d))
}

/// O = softmax(scale·Q·Kᵀ [+ causal mask])·V per sequence and head, and the LSE, over the
/// packed batch the offsets describe (module docs). Checks the shapes and the offsets, then
/// launches `attention_sm90_varlen` on the runtime's stream over the batch's query tiles
/// ([`Batch`]); returns the artifact. A batch with no query token (TQ = 0, every sequence
/// empty: no tile) launches nothing and leaves O and the LSE (both empty) as they are.
#[allow(clippy::too_many_arguments)]
pub fn run<T: tirx::Element>(
    rt: &Runtime,
    q: &Tensor<T>,
    k: &Tensor<T>,
    v: &Tensor<T>,
    out: Outputs<'_, T>,
    (cu_q, cu_k): (&[i32], &[i32]),
    d: usize,
    causal: bool,
    scale: f32,
) -> Result<&'static KernelArtifact, VarlenError> {
    let shapes = [
        q.shape(),
        k.shape(),
        v.shape(),
        out.o.shape(),
        out.lse.shape(),
    ];
    heads(shapes, d)?;
    let off = Offsets::new(cu_q, cu_k, q.shape()[0], k.shape()[0])?;
    let art = tile_for(d, causal, T::ELEM)?;
    if q.shape()[0] == 0 {
        return Ok(art); // no query token: nothing to compute, nothing to upload
    }
    let batch = Batch::new(rt, &off, art)?;
    let args = [q.view(), k.view(), v.view(), out.o.view(), out.lse.view()];
    launch(rt, &batch, args, scale)?;
    // The batch's buffers are freed when it goes out of scope: wait for the kernel first.
    rt.synchronize()?;
    Ok(art)
}

/// Query rows of one tile of `art` (64 per consumer warpgroup): what [`Offsets::tiles`] cuts
/// the sequences into for it. `art` must be one of `attention_sm90_varlen`'s artifacts
/// (known by address, not by name).
pub fn rows_of(art: &KernelArtifact) -> Result<NonZeroUsize, VarlenError> {
    let ours = attention_sm90_varlen::KERNEL
        .artifacts
        .as_ptr_range()
        .contains(&std::ptr::from_ref(art));
    rows_in(art)
        .filter(|_| ours)
        .ok_or(VarlenError::NotVarlen { config: art.config })
}

/// Query rows of one tile of a varlen-style artifact (`attention_sm90_varlen`, and
/// `attention_sm90_paged`, which cuts its queries the same way): 64 per consumer warpgroup
/// (`NWG` of 1…4).
pub(super) fn rows_in(art: &KernelArtifact) -> Option<NonZeroUsize> {
    art.int("NWG")
        .filter(|&n| (1..=4).contains(&n))
        .and_then(|n| NonZeroUsize::new(64 * n as usize))
}

/// A checked batch on the device for one `attention_sm90_varlen` artifact: the offsets and
/// the list of its query tiles cut at the artifact's rows ([`Offsets::tiles`] at
/// [`rows_of`]), uploaded once and launched any number of times ([`launch`]). Built only from
/// checked [`Offsets`] and bound to its artifact, so a launch cannot take a list cut for
/// another tile size or offsets that were not checked.
pub struct Batch {
    art: &'static KernelArtifact,
    cu_q: Tensor<i32>,
    cu_k: Tensor<i32>,
    /// `[NT, 2]`; `None` when no sequence has a query (NT = 0: nothing to launch, and a
    /// grid of no CTA is not launched).
    tiles: Option<Tensor<i32>>,
    /// (TQ, TK): the rows the batch's Q and K/V must have.
    totals: (usize, usize),
}

impl Batch {
    /// Cuts `off` into `art`'s query tiles (longest first, with `art`'s mask) and uploads the
    /// offsets and the list.
    pub fn new(
        rt: &Runtime,
        off: &Offsets,
        art: &'static KernelArtifact,
    ) -> Result<Batch, VarlenError> {
        let causal = art.int("CAUSAL") == Some(1);
        let map = tile_list(&off.tiles(rows_of(art)?, causal));
        let tiles = if map.is_empty() {
            None
        } else {
            Some(rt.upload(&map, &[map.len() / 2, 2])?)
        };
        let total = |cu: &[i32]| cu.last().map_or(0, |&t| t as usize);
        Ok(Batch {
            art,
            cu_q: rt.upload(&off.q, &[off.q.len()])?,
            cu_k: rt.upload(&off.k, &[off.k.len()])?,
            tiles,
            totals: (total(&off.q), total(&off.k)),
        })
    }

    /// The artifact the batch is cut for.
    pub fn artifact(&self) -> &'static KernelArtifact {
        self.art
    }

    /// Query tiles, the grid's x (0 when no sequence has a query).
    pub fn tiles(&self) -> usize {
        self.tiles.as_ref().map_or(0, |t| t.shape()[0])
    }
}

/// Launches the batch's artifact on `[q, k, v, o, lse]` over its query tiles, one CTA per
/// (tile, query head), without waiting (the bench's repeated launches; [`run`] waits). Checks
/// on the host first, with no transfer: the shapes against the layout and the batch's totals
/// (Q and O of TQ rows, K and V of TK). A batch with no tile (no query token) launches
/// nothing; keys are needed otherwise (TK ≥ 1: a TMA tensor has no empty extent).
pub fn launch(
    rt: &Runtime,
    batch: &Batch,
    [q, k, v, o, lse]: [tirx::TensorArg<'_>; 5],
    scale: f32,
) -> Result<(), VarlenError> {
    let art = batch.art;
    let shapes = [&q, &k, &v, &o, &lse].map(|t| t.meta().shape.as_slice());
    let queries = check_launch(art, batch.totals, shapes)?;
    // No query token: no tile (the list is empty exactly then), no CTA.
    let Some(tiles) = batch.tiles.as_ref().filter(|_| queries) else {
        return Ok(());
    };
    let roles = [
        ("q", q),
        ("k", k),
        ("v", v),
        ("o", o),
        ("lse", lse),
        ("cu_q", batch.cu_q.view()),
        ("cu_k", batch.cu_k.view()),
        ("tiles", tiles.view()),
    ];
    let scale_log2 = scale * std::f32::consts::LOG2_E;
    crate::family::launch_roles(rt, art, &roles, &[("scale_log2", scale_log2)])?;
    Ok(())
}

/// [`launch`]'s checks of `[q, k, v, o, lse]`'s shapes against `art`'s layout ([`heads`] at
/// its head dim) and a batch of `(TQ, TK)` tokens: Q of TQ rows, K of TK, and keys to read
/// (TK ≥ 1: a TMA tensor has no empty extent) when there are queries. `Ok(false)`: no query
/// token, nothing to launch.
fn check_launch(
    art: &KernelArtifact,
    (tq, tk): (usize, usize),
    shapes: [&[usize]; 5],
) -> Result<bool, VarlenError> {
    let d = art
        .int("D")
        .ok_or(VarlenError::NotVarlen { config: art.config })?;
    heads(shapes, d as usize)?;
    if (shapes[0][0], shapes[1][0]) != (tq, tk) {
        return Err(VarlenError::Shape(format!(
            "varlen attention: q has {} rows and k {}, but the batch's offsets end at {tq} and {tk}",
            shapes[0][0], shapes[1][0]
        )));
    }
    if tq > 0 && tk == 0 {
        return Err(VarlenError::Shape(
            "varlen attention: k and v hold no token (TK = 0), and a TMA tensor needs extents of 1 or more: pass K and V with at least one token (sequences of no key still give O = 0 and LSE = −∞)".into(),
        ));
    }
    Ok(tq > 0)
}

/// The f64 reference: O `[TQ, HQ·D]` and the LSE `[HQ, TQ]` of each sequence, computed as
/// one batch of its own lengths ([`super::reference::attention_row`]).
#[allow(clippy::too_many_arguments)]
pub fn attention_varlen_f64<T: HostElem>(
    q: &[T],
    k: &[T],
    v: &[T],
    off: &Offsets,
    (hq, hk, d): (usize, usize, usize),
    causal: bool,
    scale: f64,
) -> (Vec<f64>, Vec<f64>) {
    use super::reference::{Dims, attention_row};
    let total_q = *off.q.last().unwrap_or(&0) as usize;
    let mut o = vec![0.0; total_q * hq * d];
    let mut lse = vec![f64::NEG_INFINITY; hq * total_q];
    for b in 0..off.batch() {
        let (rq, rk) = off.seq(b);
        let dims = Dims {
            b: 1,
            s: rq.len(),
            sk: rk.len(),
            hq,
            hk,
            d,
            dv: d,
        };
        let qs = &q[rq.start * hq * d..rq.end * hq * d];
        let ks = &k[rk.start * hk * d..rk.end * hk * d];
        let vs = &v[rk.start * hk * d..rk.end * hk * d];
        for h in 0..hq {
            for i in 0..rq.len() {
                let (row, l) = attention_row(qs, ks, vs, dims, causal, scale, (0, h, i));
                let t = rq.start + i;
                o[t * hq * d + h * d..][..d].copy_from_slice(&row);
                lse[h * total_q + t] = l;
            }
        }
    }
    (o, lse)
}

/// `art` (an `attention_sm90_varlen` artifact) in the emulator on the batch `cu_q`/`cu_k`
/// with `hq` query heads over `hk` K/V heads, inputs from `seed`, outputs poisoned: O within
/// 2e-2 and the LSE within 2e-3 of [`attention_varlen_f64`] (−∞ exactly where no key is
/// seen), or the first element that is not. Returns max |o − ref|. The kernel's tile list is
/// [`Offsets::tiles`] at the artifact's rows; a batch with no query token launches nothing
/// (0.0).
pub fn simulate(
    art: &KernelArtifact,
    (cu_q, cu_k): (&[i32], &[i32]),
    (hq, hk): (usize, usize),
    sms: u32,
    seed: u64,
    policy: &tirx_sim::Policy,
) -> Result<f64, String> {
    use crate::simulate::{encode, put, random_values};
    let d = art.int("D").ok_or("no head dim `D`")? as usize;
    let causal = art.int("CAUSAL") == Some(1);
    let elem = art.sig().tensors[0].elem;
    let (tq, tk) = (
        *cu_q.last().unwrap_or(&0) as usize,
        *cu_k.last().unwrap_or(&0) as usize,
    );
    let off = Offsets::new(cu_q, cu_k, tq, tk).map_err(|e| e.to_string())?;
    let rows = rows_of(art).map_err(|e| e.to_string())?;
    let map = tile_list(&off.tiles(rows, causal));
    if map.is_empty() {
        return Ok(0.0); // no query token: no tile, nothing launched (as `run`)
    }
    let mut rng = crate::reference::Rng::new(seed);
    let (_, qv) = random_values(&mut rng, elem, tq * hq * d);
    let (_, kv) = random_values(&mut rng, elem, tk * hk * d);
    let (_, vv) = random_values(&mut rng, elem, tk * hk * d);
    let [(qb, qv), (kb, kv), (vb, vv)] = [&qv, &kv, &vv].map(|x| encode(x, elem));
    let mut dev = tirx_sim::Device::new();
    let ints = |cu: &[i32]| cu.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let ob = tq * hq * d * elem.bytes() as usize;
    let tensors = [
        put(&mut dev, &qb, elem, &[tq, hq * d]),
        put(&mut dev, &kb, elem, &[tk, hk * d]),
        put(&mut dev, &vb, elem, &[tk, hk * d]),
        put(&mut dev, &vec![0xff; ob], elem, &[tq, hq * d]),
        put(
            &mut dev,
            &vec![0xff; hq * tq * 4],
            ElemType::F32,
            &[hq, tq, 1],
        ),
        put(&mut dev, &ints(cu_q), ElemType::I32, &[cu_q.len()]),
        put(&mut dev, &ints(cu_k), ElemType::I32, &[cu_k.len()]),
        put(&mut dev, &ints(&map), ElemType::I32, &[map.len() / 2, 2]),
    ];
    launch_and_check(
        art,
        dev,
        &tensors,
        (tq, hq, d),
        (sms, seed, policy),
        (&qv, &kv, &vv),
        |(q, k, v), scale| attention_varlen_f64(q, k, v, &off, (hq, hk, d), causal, scale),
    )
}

/// The emulator run both `simulate`s (this one, `paged::simulate`) end with: `art` launched on
/// `dev` with `tensors` (O at 3, `[TQ, HQ·D]`, and the LSE at 4, `[HQ, TQ, 1]`, both poisoned)
/// and the scale 1/√D, then O within 2e-2 and the LSE within 2e-3 of `reference` (given the
/// inputs `q`, `k`, `v` as the kernel reads them, in f32, and the scale; −∞ exactly where no
/// key is seen), or the first element that is not, or the emulator's report. Returns
/// max |o − ref|.
pub(super) fn launch_and_check(
    art: &KernelArtifact,
    mut dev: tirx_sim::Device,
    tensors: &[tirx::runtime::TensorMeta],
    (tq, hq, d): (usize, usize, usize),
    (sms, seed, policy): (u32, u64, &tirx_sim::Policy),
    (qv, kv, vv): (&[f64], &[f64], &[f64]),
    reference: impl FnOnce((&[f32], &[f32], &[f32]), f64) -> (Vec<f64>, Vec<f64>),
) -> Result<f64, String> {
    use crate::simulate::{decode, launch_with};
    let elem = art.sig().tensors[0].elem;
    let ob = tq * hq * d * elem.bytes() as usize;
    let scale = 1.0 / (d as f64).sqrt();
    let scalars = [(scale * std::f64::consts::LOG2_E) as f32];
    let limits = tirx::runtime::DeviceLimits {
        sm_count: sms,
        ..tirx::runtime::DeviceLimits::HOPPER
    };
    launch_with(
        art.ptx,
        art.sig(),
        &mut dev,
        (tensors, &scalars),
        seed,
        &limits,
        policy,
    )
    .map_err(|e| crate::simulate::with_source_lines(art, &e.to_string()))?;
    let read = |t: &tirx::runtime::TensorMeta, bytes: usize, elem| {
        dev.read(t.addr, bytes)
            .map(|b| decode(&b, elem))
            .map_err(|e| e.to_string())
    };
    let got = read(&tensors[3], ob, elem)?;
    let got_lse = read(&tensors[4], hq * tq * 4, ElemType::F32)?;
    let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let (want, want_lse) = reference((&f(qv), &f(kv), &f(vv)), scale);
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
            return Err(format!(
                "LSE of head {} token {} is {g}, the reference {w:.6e}",
                i / tq.max(1),
                i % tq.max(1)
            ));
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests;
