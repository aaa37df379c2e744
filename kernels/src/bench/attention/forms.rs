//! The batched forms of `tirx bench attention`: a shape measured as a packed variable-length
//! batch (`--varlen`, [`Packed`]), over a paged K/V cache (`--paged PAGE`, [`PagedCache`]) or
//! through the split-KV decode path (`--decode`, [`Decode`]), each viewing the bench's buffer
//! sets with its own layout.

use half::bf16;
use tirx::{Runtime, Tensor};

use super::{BenchError, Form, Shape};

/// A shape's batched form on the device, launched in place of the dense kernels.
// One value per shape, built once and borrowed by every launch: the variants' sizes (device
// tensors' handles) do not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum Batched {
    /// `--varlen`.
    Varlen(Packed),
    /// `--paged PAGE`.
    Paged(PagedCache),
    /// `--decode [SPLITS]`.
    Decode(Decode),
}

impl Batched {
    /// The form of `sh` for `form`; `None` for the dense form.
    pub(super) fn new(rt: &Runtime, sh: &Shape, form: Form) -> Result<Option<Batched>, BenchError> {
        Ok(match form {
            Form::Dense => None,
            Form::Varlen => Some(Batched::Varlen(Packed::new(rt, sh)?)),
            Form::Paged(page) => Some(Batched::Paged(PagedCache::new(rt, sh, page)?)),
            Form::Decode(ask) => Some(Batched::Decode(Decode::new(rt, sh, ask)?)),
        })
    }

    /// The splits of the keys and the packed group (`--decode`), `None` for the other forms.
    pub(super) fn splits(&self) -> Option<(usize, Option<usize>)> {
        match self {
            Batched::Decode(d) => Some((d.plan.split.splits, d.plan.tiles.pack.map(|p| p.group))),
            _ => None,
        }
    }

    /// One launch on buffer set `set` (q, k, v, o) and LSE buffer `lse`.
    pub(super) fn launch(
        &self,
        rt: &Runtime,
        set: &[Tensor<bf16>; 4],
        lse: &Tensor<f32>,
        scale: f32,
    ) -> Result<(), BenchError> {
        match self {
            Batched::Varlen(p) => p.launch(rt, set, lse, scale),
            Batched::Paged(p) => p.launch(rt, set, lse, scale),
            Batched::Decode(p) => p.launch(rt, set, lse, scale),
        }
    }

    /// Batch 0's keys and values in order (`[SK, HK·D]` each) for the reference, read from
    /// set 0's host copies `k` and `v` through the form's layout; `None` when batch 0's are
    /// the buffers' first rows (dense, varlen).
    pub(super) fn batch0_kv(&self, k: &[bf16], v: &[bf16]) -> Option<(Vec<bf16>, Vec<bf16>)> {
        match self {
            Batched::Varlen(_) | Batched::Decode(_) => None,
            Batched::Paged(p) => Some(p.batch0_kv(k, v)),
        }
    }
}

/// A shape measured as a variable-length batch (`--varlen`): its B sequences of SQ queries and
/// SK keys packed (`[B·SQ, HQ·D]`, `[B·SK, HK·D]`, the LSE `[HQ, B·SQ, 1]`; the same bytes as
/// the dense views, batch 0 first) with uniform offsets `cu_q = SQ·i`, `cu_k = SK·i` — FA3's
/// benchmark's varlen form (`hopper/benchmark_attn.py`) — through `attention_sm90_varlen`.
pub(super) struct Packed {
    shape: Shape,
    /// The offsets and the query tiles on the device, for the tile of the shape's head dim.
    batch: crate::attention::varlen::Batch,
}

impl Packed {
    fn new(rt: &Runtime, sh: &Shape) -> Result<Packed, BenchError> {
        use crate::attention::varlen;
        let wrong = |e: varlen::VarlenError| BenchError::Wrong(format!("{}: {e}", sh.label()));
        let art = varlen::tile_for(sh.hd, sh.causal, tirx::abi::ElemType::Bf16).map_err(wrong)?;
        let cu = |len: usize| -> Vec<i32> { (0..=sh.batch).map(|i| (i * len) as i32).collect() };
        let (cq, ck) = (cu(sh.seq), cu(sh.sk()));
        let off =
            varlen::Offsets::new(&cq, &ck, sh.batch * sh.seq, sh.batch * sh.sk()).map_err(wrong)?;
        Ok(Packed {
            shape: *sh,
            batch: varlen::Batch::new(rt, &off, art).map_err(wrong)?,
        })
    }

    fn launch(
        &self,
        rt: &Runtime,
        set: &[Tensor<bf16>; 4],
        lse: &Tensor<f32>,
        scale: f32,
    ) -> Result<(), BenchError> {
        let sh = &self.shape;
        let (tq, tk) = (sh.batch * sh.seq, sh.batch * sh.sk());
        let (wq, wk) = (sh.heads * sh.hd, sh.kv_heads * sh.hd);
        let args = [
            set[0].subview(0, &[tq, wq], &[wq, 1])?,
            set[1].subview(0, &[tk, wk], &[wk, 1])?,
            set[2].subview(0, &[tk, wk], &[wk, 1])?,
            set[3].subview(0, &[tq, wq], &[wq, 1])?,
            lse.subview(0, &[sh.heads, tq, 1], &[tq, 1, 1])?,
        ];
        crate::attention::varlen::launch(rt, &self.batch, args, scale)
            .map_err(|e| BenchError::Wrong(format!("{}: {e}", sh.label())))
    }
}

/// A shape measured over a paged K/V cache (`--paged PAGE`): its B sequences of SQ queries
/// packed as in [`Packed`], K and V each viewed as a cache `[num_pages, PAGE, HK·D]` of
/// `B·cdiv(SK, PAGE)` pages, each sequence's pages drawn from a shuffled pool
/// (`attention::paged::shuffled`; the table one column wider than needed, padded with −1),
/// through `attention_sm90_paged`. The data is the buffers' (random), so the shuffle changes
/// which rows a sequence reads, not their distribution; the check reads batch 0's keys
/// through the same table.
pub(super) struct PagedCache {
    shape: Shape,
    paging: crate::attention::paged::Paging,
    batch: crate::attention::paged::PagedBatch,
}

impl PagedCache {
    fn new(rt: &Runtime, sh: &Shape, page: usize) -> Result<PagedCache, BenchError> {
        use crate::attention::paged;
        let wrong = |e: paged::PagedError| BenchError::Wrong(format!("{}: {e}", sh.label()));
        let art =
            paged::tile_for(sh.hd, page, sh.causal, tirx::abi::ElemType::Bf16).map_err(wrong)?;
        let cq: Vec<i32> = (0..=sh.batch).map(|i| (i * sh.seq) as i32).collect();
        let sk = vec![sh.sk() as i32; sh.batch];
        let p = paged::shuffled((&cq, &sk), page, 0, 0x9a6e);
        let table = (&p.block_table[..], p.max_pages);
        let paging = paged::Paging::new((&cq, &sk), table, page, p.num_pages, sh.batch * sh.seq)
            .map_err(wrong)?;
        Ok(PagedCache {
            shape: *sh,
            batch: paged::PagedBatch::new(rt, &paging, art).map_err(wrong)?,
            paging,
        })
    }

    /// Elements of one K (or V) buffer the cache views.
    pub(super) fn cache_numel(sh: &Shape, page: usize) -> usize {
        sh.batch * sh.sk().div_ceil(page) * page * sh.kv_heads * sh.hd
    }

    fn launch(
        &self,
        rt: &Runtime,
        set: &[Tensor<bf16>; 4],
        lse: &Tensor<f32>,
        scale: f32,
    ) -> Result<(), BenchError> {
        let sh = &self.shape;
        let tq = sh.batch * sh.seq;
        let (wq, wk) = (sh.heads * sh.hd, sh.kv_heads * sh.hd);
        let (np, page) = (self.paging.num_pages, self.paging.page);
        let cache = [np, page, wk];
        let cs = [page * wk, wk, 1];
        let args = [
            set[0].subview(0, &[tq, wq], &[wq, 1])?,
            set[1].subview(0, &cache, &cs)?,
            set[2].subview(0, &cache, &cs)?,
            set[3].subview(0, &[tq, wq], &[wq, 1])?,
            lse.subview(0, &[sh.heads, tq, 1], &[tq, 1, 1])?,
        ];
        crate::attention::paged::launch(rt, &self.batch, args, scale)
            .map_err(|e| BenchError::Wrong(format!("{}: {e}", sh.label())))
    }

    fn batch0_kv(&self, k: &[bf16], v: &[bf16]) -> (Vec<bf16>, Vec<bf16>) {
        let w = self.shape.kv_heads * self.shape.hd;
        let rows = |c: &[bf16]| -> Vec<bf16> {
            (0..self.shape.sk())
                .flat_map(|j| c[self.paging.key_row(0, j) * w..][..w].to_vec())
                .collect()
        };
        (rows(k), rows(v))
    }
}

/// A shape measured through the split-KV decode path (`--decode [SPLITS]`): the dense views
/// (`[B, SQ, HQ·D]`, `[B, SK, HK·D]`, the LSE `[B·HQ, SQ, 1]`) through
/// `attention::decode::Plan`, the keys cut for the GPU's SMs or into SPLITS chunks, the query
/// heads of a K/V head packed where the GQA kernel can (not with `--unpacked`), the workspace
/// allocated once for the plan. Each launch is the decode kernel and, when the plan combines,
/// the combine.
pub(super) struct Decode {
    shape: Shape,
    plan: crate::attention::decode::Plan,
    workspace: Option<Tensor<f32>>,
}

impl Decode {
    fn new(
        rt: &Runtime,
        sh: &Shape,
        ask: crate::attention::decode::Ask,
    ) -> Result<Decode, BenchError> {
        use crate::attention::decode;
        let wrong = |e: decode::DecodeError| BenchError::Wrong(format!("{}: {e}", sh.label()));
        let shapes = Decode::shapes(sh);
        let plan = decode::Plan::new(
            shapes.each_ref().map(|s| &s[..]),
            sh.hd,
            (sh.causal, tirx::abi::ElemType::Bf16),
            rt.sm_count() as usize,
            ask,
        )
        .map_err(wrong)?;
        let len = plan.workspace_len();
        let workspace = (len > 0).then(|| rt.zeros::<f32>(&[len])).transpose()?;
        Ok(Decode {
            shape: *sh,
            plan,
            workspace,
        })
    }

    /// `[q, k, v, o, lse]`'s shapes.
    fn shapes(sh: &Shape) -> [[usize; 3]; 5] {
        let (b, s, sk) = (sh.batch, sh.seq, sh.sk());
        let (wq, wk) = (sh.heads * sh.hd, sh.kv_heads * sh.hd);
        [
            [b, s, wq],
            [b, sk, wk],
            [b, sk, wk],
            [b, s, wq],
            [b * sh.heads, s, 1],
        ]
    }

    fn launch(
        &self,
        rt: &Runtime,
        set: &[Tensor<bf16>; 4],
        lse: &Tensor<f32>,
        scale: f32,
    ) -> Result<(), BenchError> {
        let [qs, ks, vs, os, ls] = Decode::shapes(&self.shape);
        let strides = |s: &[usize; 3]| [s[1] * s[2], s[2], 1];
        let args = [
            set[0].subview(0, &qs, &strides(&qs))?,
            set[1].subview(0, &ks, &strides(&ks))?,
            set[2].subview(0, &vs, &strides(&vs))?,
            set[3].subview(0, &os, &strides(&os))?,
            lse.subview(0, &ls, &strides(&ls))?,
        ];
        self.plan
            .launch(rt, args, self.workspace.as_ref(), scale)
            .map_err(|e| BenchError::Wrong(format!("{}: {e}", self.shape.label())))
    }
}
