//! The attention problem: O = softmax(scale·Q·Kᵀ [+ causal mask])·V and the LSE per row, Q
//! `[B, S, HQ·D]`, K `[B, SK, HK·D]`, V `[B, SK, HK·DV]`, O `[B, S, HQ·DV]` (torch's
//! `[B, S, H, D]` row-major; DV = D but for MLA-style shapes such as D = 192, DV = 128), LSE
//! `[B·HQ, S, 1]` f32 — its acceptance rules and its cost model.
//!
//! Acceptance ([`ProblemDef::solves`] and the planner): the artifact declares
//! `solves = attention`; its config's head dims ([`crate::attention::family::head_dims`]:
//! `D_QK` and `D_V`, or `D` for both) and `CAUSAL` are the request's head dimensions and
//! mask — a kernel with one `D` refuses a request whose D and DV differ
//! ([`Reject::OneHeadDim`]); its `q` holds the request's element type; and the runtime plans its launch on exactly
//! these tensors. A request may force one tile ([`AttentionRequest::tile`]): then only that
//! artifact's siblings are accepted — the artifacts of the same kernel whose config entries
//! equal its own except the element type and the mask, the two axes the problem chooses.
//!
//! The cost model ([`AttentionRequest::cost`]) estimates time from what the artifact is: its
//! query tile (`BM` rows, or `64·NWG` on Hopper), key block `BN` and head dimension from its config, whether its
//! grid is persistent (`SMS`) from its signature. A CTA's tile costs one unit per key block
//! (`rows·BN·D`, divided by the tile's efficiency), and a wave of CTAs costs its longest
//! tile; a tile of a one-CTA-per-tile grid also pays its Q load, first Q·Kᵀ and O store
//! unoverlapped, which a persistent CTA overlaps with its previous tile. With the causal
//! mask the tiles differ (tile `mb` reads about `mb + 1` blocks), so the cost is the busiest
//! SM's: a one-CTA-per-tile grid's tiles handed, longest first, to the first SM free (the
//! hardware's CTA scheduler, `greedy`); a persistent grid's static walk of pairs of tiles
//! (`walk_item` in `attention_pieces`, `paired_walk`). Every number is a
//! measurement on the H200 (docs/perf/attention-h200.md):
//! - the unoverlapped prologue and epilogue: 0.8 of a key block (hd 128 unmasked, persistent
//!   against one CTA per tile, 2026-12-02: +20% at seq 512 = 4 blocks, +12% at 1k, +6% at 2k,
//!   +1% at 8k);
//! - three consumer warpgroups (192-row tiles): efficiency 1.13 (hd 64, 2026-12-02 15:08: the
//!   third warpgroup +13% over two);
//! - ping-pong scheduling (`PING`): efficiency 0.99 (measured a wash, hd128 s2k +1.7%, s8k
//!   causal −1.3%: it stays behind the plain schedule so the host keeps the simpler one).
//!
//! The model ranks; the tune cache corrects it where it is wrong.

use tirx::abi::ElemType;
use tirx::problem::Problem;
use tirx::runtime::TensorMeta;
use tirx::{KernelArtifact, RuntimeError, TensorArg};

use crate::dispatch::tune::{self, Key};
use crate::dispatch::{Device, ProblemDef, Reject, mentions_sms};

/// Key blocks' worth of time a one-CTA-per-tile grid spends per tile on its unoverlapped Q
/// load, first Q·Kᵀ and O store (see the module docs).
const EXPOSED_BLOCKS: f64 = 0.8;

/// One attention call to run: the problem and the tensors it runs on.
#[derive(Clone, Debug)]
pub struct AttentionRequest {
    /// Head dimension of Q and K (the scores' contraction).
    pub d: usize,
    /// Head dimension of V and O (`d` but for MLA-style shapes).
    pub dv: usize,
    /// Causal (bottom-right aligned) mask.
    pub causal: bool,
    /// Q, K, V and O's element type.
    pub elem: ElemType,
    /// `[q, k, v, o, lse]`.
    pub tensors: [TensorMeta; 5],
    /// scale·log2(e), the kernel's one scalar.
    pub scale_log2: f32,
    /// A forced tile: only this artifact's siblings (same kernel, same entries but the element
    /// type and the mask) are accepted. `None`: every attention artifact competes.
    pub tile: Option<&'static KernelArtifact>,
}

/// The batch, query length, key length, query heads and K/V heads of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Batch.
    pub b: usize,
    /// Query length.
    pub s: usize,
    /// Key length.
    pub sk: usize,
    /// Query heads.
    pub hq: usize,
    /// K/V heads.
    pub hk: usize,
}

impl AttentionRequest {
    /// The request on contiguous tensors at 256-byte aligned addresses (listings, tests, the
    /// bench's choice before any tensor exists).
    pub fn contiguous(
        dims: Dims,
        d: usize,
        elem: ElemType,
        causal: bool,
    ) -> Result<AttentionRequest, RuntimeError> {
        AttentionRequest::contiguous_split(dims, (d, d), elem, causal)
    }

    /// [`AttentionRequest::contiguous`] with head dims `(d, dv)`: `d` for Q and K, `dv` for V
    /// and O.
    pub fn contiguous_split(
        dims: Dims,
        (d, dv): (usize, usize),
        elem: ElemType,
        causal: bool,
    ) -> Result<AttentionRequest, RuntimeError> {
        let Dims { b, s, sk, hq, hk } = dims;
        let meta = |elem, shape: &[usize]| TensorMeta::row_major(elem, shape, 0);
        let tensors = [
            meta(elem, &[b, s, hq * d]),
            meta(elem, &[b, sk, hk * d]),
            meta(elem, &[b, sk, hk * dv]),
            meta(elem, &[b, s, hq * dv]),
            meta(ElemType::F32, &[b * hq, s, 1]),
        ];
        AttentionRequest::of(tensors, d, causal, 1.0 / (d.max(1) as f32).sqrt())
    }

    /// The request on the tensors given `[q, k, v, o, lse]` (their strides and addresses
    /// count), with `scale` the softmax scale and `d` the head dimension of Q and K; that of V
    /// and O is v's width over the K/V heads (`d` unless they differ, as in MLA). Shapes that
    /// no attention kernel can take (q and o, or k and v, disagreeing in batch or length; a
    /// head dimension that does not divide the widths; o not as wide as the query heads at
    /// V's head dimension; K/V heads that do not divide the query heads; an LSE not
    /// `[B·HQ, S, 1]`) are a typed error here, before any candidate is judged.
    pub fn on(
        args: &[TensorArg<'_>; 5],
        d: usize,
        causal: bool,
        scale: f32,
    ) -> Result<AttentionRequest, RuntimeError> {
        AttentionRequest::of(args.clone().map(|a| a.meta().clone()), d, causal, scale)
    }

    pub(crate) fn of(
        tensors: [TensorMeta; 5],
        d: usize,
        causal: bool,
        scale: f32,
    ) -> Result<AttentionRequest, RuntimeError> {
        let bad = |why: String| RuntimeError::NoKernelFits {
            problem: format!("attention with {why}"),
            table: String::new(),
        };
        let [qs, ks, vs, os, ls] = [0, 1, 2, 3, 4].map(|i| tensors[i].shape.clone());
        let three = [&qs, &ks, &vs, &os].iter().all(|t| t.len() == 3);
        if !three || vs[..2] != ks[..2] || os[..2] != qs[..2] {
            return Err(bad(format!(
                "q/o {qs:?}/{os:?} and k/v {ks:?}/{vs:?}: q and o must be [B, S, HQ·D] and [B, S, HQ·DV], k and v [B, SK, HK·D] and [B, SK, HK·DV]"
            )));
        }
        if d == 0 || qs[2] % d != 0 || ks[2] % d != 0 || qs[0] != ks[0] {
            return Err(bad(format!("head dim {d} over q {qs:?}, k {ks:?}")));
        }
        let (hq, hk) = (qs[2] / d, ks[2] / d);
        let dv = vs[2].checked_div(hk).unwrap_or(0);
        if hk > 0 && (dv == 0 || vs[2] % hk != 0 || os[2] != hq * dv) {
            return Err(bad(format!(
                "v {vs:?} and o {os:?} over {hq} query and {hk} K/V heads: v must be [B, SK, HK·DV] and o [B, S, HQ·DV] for one V head dim DV"
            )));
        }
        if ls != [qs[0] * hq, qs[1], 1] {
            return Err(bad(format!(
                "lse {ls:?}: it must be [B·HQ, S, 1] = {:?}",
                [qs[0] * hq, qs[1], 1]
            )));
        }
        if hk == 0 || hq % hk != 0 {
            return Err(bad(format!(
                "{hq} query heads over {hk} K/V heads (GQA needs HK | HQ)"
            )));
        }
        Ok(AttentionRequest {
            d,
            dv,
            causal,
            elem: tensors[0].elem,
            tensors,
            scale_log2: scale * std::f32::consts::LOG2_E,
            tile: None,
        })
    }

    /// The same request with only `tile`'s siblings accepted.
    pub fn forced(self, tile: &'static KernelArtifact) -> AttentionRequest {
        AttentionRequest {
            tile: Some(tile),
            ..self
        }
    }

    /// Batch, lengths and heads.
    pub fn dims(&self) -> Dims {
        let (q, k) = (&self.tensors[0].shape, &self.tensors[1].shape);
        Dims {
            b: q[0],
            s: q[1],
            sk: k[1],
            hq: q[2] / self.d,
            hk: k[2] / self.d,
        }
    }

    /// `attention causal` / `attention full`: the problem without types or shape.
    pub fn problem_name(&self) -> String {
        format!("attention {}", if self.causal { "causal" } else { "full" })
    }
}

/// Whether `a` and `b` are one tile in other element types or masks: the same kernel (the
/// catalogue's, by address: [`crate::catalogue::kernel_of`]), the same config entries but `T`
/// (the element type) and `CAUSAL`.
pub fn same_tile(a: &KernelArtifact, b: &KernelArtifact) -> bool {
    let tile = |x: &KernelArtifact| {
        x.consts
            .iter()
            .filter(|(k, _)| !matches!(*k, "T" | "CAUSAL"))
            .collect::<Vec<_>>()
    };
    let same_kernel = match (
        crate::catalogue::kernel_of(a),
        crate::catalogue::kernel_of(b),
    ) {
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        _ => false,
    };
    same_kernel && a.target == b.target && tile(a) == tile(b)
}

impl ProblemDef for AttentionRequest {
    fn describe(&self) -> String {
        let Dims { b, s, sk, hq, hk } = self.dims();
        let hd = if self.dv == self.d {
            self.d.to_string()
        } else {
            format!("{}/{}", self.d, self.dv)
        };
        format!(
            "{} hd {hd}, {}, b {b} s {s} sk {sk} heads {hq}/{hk}",
            self.problem_name(),
            self.elem.name()
        )
    }

    fn solves(&self, artifact: &KernelArtifact) -> Result<(), Reject> {
        if artifact.problem != Some(Problem::Attention) {
            return Err(Reject::problem(artifact));
        }
        if let Some(t) = self.tile.filter(|t| !same_tile(t, artifact)) {
            return Err(Reject::NotForced {
                forced: format!("{}/{}", t.kernel, t.config),
            });
        }
        let causal = artifact.int("CAUSAL");
        let split = artifact.int("D_QK").is_some() || artifact.int("D_V").is_some();
        if self.d != self.dv && !split {
            return Err(Reject::OneHeadDim {
                qk: self.d,
                v: self.dv,
            });
        }
        let dims = super::family::head_dims(artifact);
        let (d, dv) = (dims.map(|d| d.0 as i64), dims.map(|d| d.1 as i64));
        if dims != Some((self.d, self.dv)) || causal != Some(i64::from(self.causal)) {
            return Err(Reject::Tile {
                head_dim: d,
                head_dim_v: dv,
                causal,
            });
        }
        match artifact.elem_of("q") {
            Some(e) if e == self.elem => Ok(()),
            e => Err(Reject::Types { found: vec![e] }),
        }
    }

    fn arguments(&self, artifact: &KernelArtifact) -> (Vec<TensorMeta>, Vec<f32>) {
        let [q, k, v, o, lse] = self.tensors.clone();
        let roles = [("q", q), ("k", k), ("v", v), ("o", o), ("lse", lse)];
        crate::family::by_role(artifact, &roles, &[("scale_log2", self.scale_log2)])
            .unwrap_or_default()
    }

    fn cost(&self, artifact: &KernelArtifact, device: &Device) -> Result<f64, Reject> {
        // Query rows per CTA: BM, or 64 per consumer warpgroup (NWG) on Hopper.
        let nwg = artifact.int("NWG").unwrap_or(1);
        let (Some(rows), Some(bn)) = (
            artifact.int("BM").or(artifact.int("NWG").map(|n| 64 * n)),
            artifact.int("BN"),
        ) else {
            return Err(Reject::Unranked(
                "the cost model needs the config constants BN and BM (or NWG)".into(),
            ));
        };
        let Dims { b, s, sk, hq, .. } = self.dims();
        let rows = rows.max(1) as usize;
        let bn = bn.max(1) as usize;
        let tiles = b * hq * s.div_ceil(rows);
        let blocks = sk.div_ceil(bn).max(1) as f64;
        let sms = device.limits.sm_count.max(1) as usize;
        let waves = tiles.div_ceil(sms) as f64;
        let persistent = artifact.sig().grid.iter().any(mentions_sms);
        let exposed = if persistent { 0.0 } else { EXPOSED_BLOCKS };
        // Key blocks' worth of time the busiest SM spends: every tile alike without the mask,
        // else the tiles' own counts scheduled as the grid runs them.
        let span = if self.causal {
            let per_tile = causal_blocks(self.dims(), rows, bn);
            if persistent {
                paired_walk(&per_tile, b * hq, sms)
            } else {
                greedy(&per_tile, b * hq, sms, exposed)
            }
        } else {
            waves * (blocks + exposed)
        };
        let mut efficiency = if nwg >= 3 { 1.13 } else { 1.0 };
        if artifact.int("PING") == Some(1) {
            efficiency *= 0.99;
        }
        // Q·Kᵀ contracts over d, P·V produces dv columns: a block costs their mean.
        let block = (rows * bn * (self.d + self.dv)) as f64 / 2.0 / efficiency;
        Ok(span * block / 1e6)
    }

    fn cache_key(&self, device: &Device) -> Key {
        let Dims { s, sk, .. } = self.dims();
        Key {
            device: device.name.clone(),
            sms: device.limits.sm_count,
            problem: if self.dv == self.d {
                self.problem_name()
            } else {
                format!("{} dv {}", self.problem_name(), self.dv)
            },
            types: self.elem.name().to_string(),
            bucket: [tune::bucket(s), tune::bucket(sk), tune::bucket(self.d)],
            align: [
                tune::alignment(s),
                tune::alignment(sk),
                tune::alignment(self.d),
            ],
        }
    }
}

/// The key blocks each query tile of `rows` rows reads under the causal mask (bottom-right
/// aligned, as the kernels' `key_blocks`): tile `mb`'s last row `(mb + 1)·rows − 1` sees keys up
/// to `SK − S` past it; at least one block each (a tile whose rows see no key still pays its
/// loads and store).
fn causal_blocks(dims: Dims, rows: usize, bn: usize) -> Vec<f64> {
    let Dims { s, sk, .. } = dims;
    (0..s.div_ceil(rows))
        .map(|mb| {
            let seen = ((mb + 1) * rows + sk).saturating_sub(s).min(sk);
            seen.div_ceil(bn).max(1) as f64
        })
        .collect()
}

/// The busiest SM of a one-CTA-per-tile grid of `heads` (head, batch) pairs of `per_tile`
/// query tiles each, the longest first as the grid launches them (`attention_sm90`'s
/// `mb = ncta.x − 1 − cta.x`), each tile paying `exposed` blocks beside its own: the hardware
/// hands the next tile to the first SM free.
fn greedy(per_tile: &[f64], heads: usize, sms: usize, exposed: f64) -> f64 {
    // The walk below costs heads·m heap steps (4096 at 16k tokens of hd 64 in 512-query
    // sequences), paid by every candidate at every launch: on an H100 (stop 49, call 4) the
    // host's choice at s512 causal ran 26 µs (hd 128) and 80 µs (hd 64) a launch slower than
    // the same tile forced, the GPU waiting on the host. A program launches the same shapes
    // again and again: each thread remembers its last answers, keyed by the exact inputs (so
    // the result is the walk's, bit for bit).
    type Key = (Vec<u64>, usize, usize, u64);
    thread_local! {
        static MEMO: std::cell::RefCell<std::collections::HashMap<Key, f64>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let key: Key = (
        per_tile.iter().map(|x| x.to_bits()).collect(),
        heads,
        sms,
        exposed.to_bits(),
    );
    if let Some(end) = MEMO.with(|m| m.borrow().get(&key).copied()) {
        return end;
    }
    let end = greedy_walk(per_tile, heads, sms, exposed);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 256 {
            m.clear();
        }
        m.insert(key, end);
    });
    end
}

/// [`greedy`]'s walk itself.
fn greedy_walk(per_tile: &[f64], heads: usize, sms: usize, exposed: f64) -> f64 {
    let mut free = std::collections::BinaryHeap::new();
    free.extend((0..sms).map(|_| std::cmp::Reverse(0u64)));
    // Times in thousandths of a block: integers order exactly in the heap.
    let milli = |x: f64| (x * 1000.0).round() as u64;
    let mut end = 0;
    for _ in 0..heads {
        for &n in per_tile.iter().rev() {
            let std::cmp::Reverse(t) = free.pop().expect("sms > 0");
            let done = t + milli(n + exposed);
            end = end.max(done);
            free.push(std::cmp::Reverse(done));
        }
    }
    end as f64 / 1000.0
}

/// The busiest CTA of the persistent kernel's causal walk (`walk_item` of
/// `attention_pieces`): per (head, batch), `heads` of them, the pairs of query tiles
/// `m − 1 − p` and `p`, then an odd count's middle tiles one item each, walked round-robin
/// over `sms` CTAs.
fn paired_walk(per_tile: &[f64], heads: usize, sms: usize) -> f64 {
    let m = per_tile.len();
    let pairs = (0..m / 2).map(|p| per_tile[m - 1 - p] + per_tile[p]);
    let mut items: Vec<f64> = Vec::with_capacity(m.div_ceil(2) * heads);
    for _ in 0..heads {
        items.extend(pairs.clone());
    }
    if m % 2 == 1 {
        items.extend(std::iter::repeat_n(per_tile[m / 2], heads));
    }
    let sms = sms.max(1);
    let mut load = vec![0.0; sms];
    for (t, w) in items.into_iter().enumerate() {
        load[t % sms] += w;
    }
    load.into_iter().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_greedy_walk_is_the_walk() {
        let tiles = causal_blocks(dims(512, 512), 128, 128);
        for (heads, sms) in [(1024, 132), (7, 132), (1024, 3)] {
            let t0 = std::time::Instant::now();
            let first = greedy(&tiles, heads, sms, EXPOSED_BLOCKS);
            let walk = t0.elapsed();
            let t1 = std::time::Instant::now();
            let again = greedy(&tiles, heads, sms, EXPOSED_BLOCKS);
            let memo = t1.elapsed();
            let direct = greedy_walk(&tiles, heads, sms, EXPOSED_BLOCKS);
            assert_eq!(first.to_bits(), direct.to_bits());
            assert_eq!(again.to_bits(), direct.to_bits());
            eprintln!("heads {heads} sms {sms}: walk {walk:?}, remembered {memo:?}");
        }
    }

    fn dims(s: usize, sk: usize) -> Dims {
        Dims {
            b: 1,
            s,
            sk,
            hq: 1,
            hk: 1,
        }
    }

    /// Tile `mb` reads `mb + 1` blocks on a square problem; with more keys than queries
    /// (bottom-right aligned) every tile sees the extra keys; a tile that sees none still
    /// counts one.
    #[test]
    fn causal_tiles_read_the_blocks_up_to_their_last_row() {
        assert_eq!(
            causal_blocks(dims(512, 512), 128, 128),
            [1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(causal_blocks(dims(300, 556), 128, 128), [3.0, 4.0, 5.0]);
        assert_eq!(
            causal_blocks(dims(512, 100), 128, 128),
            [1.0, 1.0, 1.0, 1.0]
        );
    }

    /// The pairs `(m − 1 − p, p)` cost the same, so every CTA of the walk carries the same load
    /// where the items divide evenly; the one-CTA-per-tile grid pays its exposed prologues and
    /// the uneven ends of the hardware's schedule. An odd count's middle tile is an item alone.
    #[test]
    fn the_paired_walk_balances_the_causal_tiles() {
        let tiles = causal_blocks(dims(512, 512), 128, 128);
        // 16k tokens, 16 heads: 512 (head, batch) pairs, two items of 5 blocks each.
        assert_eq!(paired_walk(&tiles, 512, 132), 8.0 * 5.0);
        // One CTA a tile: 2048 tiles of 1–4 blocks and 0.8 exposed each, 51.2 on every SM at
        // best, 54 as the hardware hands them out.
        let one_per_tile = greedy(&tiles, 512, 132, EXPOSED_BLOCKS);
        assert!((one_per_tile - 54.0).abs() < 1e-9, "{one_per_tile}");
        assert_eq!(paired_walk(&[1.0, 2.0, 3.0], 1, 2), 4.0);
        assert_eq!(paired_walk(&[1.0, 2.0, 3.0], 2, 2), 6.0);
    }

    /// Equal tiles scheduled greedily take whole waves, the unmasked model's cost.
    #[test]
    fn equal_tiles_take_whole_waves() {
        assert!((greedy(&[4.0; 3], 100, 132, 0.8) - 3.0 * 4.8).abs() < 1e-9);
        assert_eq!(greedy(&[4.0; 3], 45, 132, 0.0), 4.0 * 2.0);
    }
}
