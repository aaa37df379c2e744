//! Paged K/V attention on the host: the block table's and lengths' checks, the tile for a head
//! dim, page size, mask and element type, and the launch of `attention_sm90_paged`
//! (`hopper_paged.rs`); its f64 reference and its run in the emulator are in `paged/sim.rs`.
//!
//! The layout is vLLM's / FlashInfer's (NHD) and FA3's `page_table`: queries packed as in
//! [`super::varlen`] (Q and O `[TQ, HQ·D]`, `cu_seqlens_q` `[B + 1]`, the LSE `[HQ, TQ, 1]`),
//! K and V each a cache of pages, `[num_pages, PAGE, HK·D]` (vLLM's `[num_blocks, block_size,
//! num_kv_heads, head_dim]`, heads merged); sequence `b` has `seqused_k[b]` keys, key `j` at
//! row `j % PAGE` of page `block_table[b·max_pages + j / PAGE]` (`block_table` `[B, max_pages]`
//! i32, row-major). Why this layout suits the kernel's TMA boxes: `hopper_paged.rs`'s docs.
//!
//! Checked before any launch ([`Paging::new`], typed [`PagedError`]s): `cu_seqlens_q` as in
//! varlen, `seqused_k` of B entries in `0..=max_pages·PAGE`, the table of `B·max_pages`
//! entries, and the id of every page a sequence uses (its first `cdiv(seqused_k[b], PAGE)`
//! entries) in `0..num_pages`. Entries past a sequence's pages are not read and may hold
//! anything (−1, as vLLM pads). The page size is the caches' middle extent and must be one of
//! the kernel's (`PAGE` of a config: 128 or 256, multiples of the key block, or 16, 32 and 64
//! (64 is a multiple at d256), divisors of it, each key block gathered from BN/PAGE pages; anything else is
//! [`PagedError::NoTile`], which lists the pairs there are). A page's rows past its
//! sequence's keys are read and masked: they must hold finite values (a NaN there would reach
//! O through 0·NaN in P·V), as a zero-initialized cache does.
//!
//! Empty sequences, sequences of one token, and query lengths that differ from the key lengths
//! (a prefill after a cached prefix, decode with a few queries) are allowed; causal is
//! bottom-right aligned per sequence, as in varlen.

use tirx::abi::ElemType;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor};

use super::hopper_paged::kernels::attention_sm90_paged;
use super::varlen::{Offsets, Outputs, VarlenError, rows_in, tile_list};

mod sim;
pub use sim::{attention_paged_f64, shuffled, simulate};

/// Why a paged attention call is refused before its launch.
#[derive(Debug, thiserror::Error)]
pub enum PagedError {
    /// `cu_seqlens_q` does not describe Q (varlen's checks).
    #[error(transparent)]
    Offsets(#[from] VarlenError),
    /// `seqused_k` does not have one entry per sequence.
    #[error("seqused_k has {have} entries, but cu_seqlens_q describes {batch} sequences")]
    SequsedLength {
        /// Entries of `seqused_k`.
        have: usize,
        /// B, from `cu_seqlens_q`.
        batch: usize,
    },
    /// A sequence of more keys than its table row can hold, or of fewer than none.
    #[error(
        "seqused_k[{seq}] = {keys}: a sequence holds 0…{cap} keys (max_pages {max_pages} × page {page})"
    )]
    Keys {
        /// The sequence.
        seq: usize,
        /// Its `seqused_k`.
        keys: i32,
        /// `max_pages · PAGE`.
        cap: usize,
        /// The table's columns.
        max_pages: usize,
        /// The page size.
        page: usize,
    },
    /// A block table that is not `[B, max_pages]`.
    #[error(
        "block_table has {have} entries for B = {batch} sequences × max_pages {max_pages} (max_pages ≥ 1)"
    )]
    TableShape {
        /// Entries given.
        have: usize,
        /// B.
        batch: usize,
        /// Columns.
        max_pages: usize,
    },
    /// A page a sequence uses whose id is not a page of the cache.
    #[error("block_table[{seq}][{slot}] = {page}, but the cache holds pages 0…{pages} − 1")]
    PageOutOfRange {
        /// The sequence.
        seq: usize,
        /// The column (the sequence's page index).
        slot: usize,
        /// The id found.
        page: i32,
        /// Pages in the cache.
        pages: usize,
    },
    /// Tensors whose shapes do not fit the layout.
    #[error("{0}")]
    Shape(String),
    /// No tile of `attention_sm90_paged` for this head dim, page size, mask and type.
    #[error(
        "no attention_sm90_paged tile for head dim {d}, page {page}, {}, {}: (head dim, page) {have:?}",
        if *.causal { "causal" } else { "full" },
        .elem.name()
    )]
    NoTile {
        /// The head dim asked.
        d: usize,
        /// The page size asked.
        page: usize,
        /// Causal.
        causal: bool,
        /// The element type.
        elem: ElemType,
        /// The (head dim, page size) pairs the kernel has.
        have: Vec<(usize, usize)>,
    },
    /// An artifact that is not a tile of `attention_sm90_paged`.
    #[error("artifact `{config}` is not a tile of attention_sm90_paged")]
    NotPaged {
        /// The artifact's config.
        config: &'static str,
    },
    /// The runtime refused or failed (upload, launch).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// The host's description of a paged batch (module docs). [`Paging::new`] checks it; the
/// fields are public so that a test can hand the emulator a table the host would refuse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paging {
    /// `cu_seqlens_q`, B + 1 entries.
    pub cu_q: Vec<i32>,
    /// Keys per sequence, B entries.
    pub seqused_k: Vec<i32>,
    /// `[B, max_pages]` row-major page ids.
    pub block_table: Vec<i32>,
    /// The table's columns.
    pub max_pages: usize,
    /// Tokens per page.
    pub page: usize,
    /// Pages in the K and V caches.
    pub num_pages: usize,
}

impl Paging {
    /// Checks a batch of `total_q` queries over a cache of `num_pages` pages of `page`
    /// tokens (module docs), in the order: `cu_seqlens_q` present, `seqused_k`'s length,
    /// the table's shape, each sequence's key count, the ids of the pages it uses, then
    /// `cu_seqlens_q` against Q (varlen's [`Offsets::new`]).
    pub fn new(
        (cu_q, seqused_k): (&[i32], &[i32]),
        (block_table, max_pages): (&[i32], usize),
        page: usize,
        num_pages: usize,
        total_q: usize,
    ) -> Result<Paging, PagedError> {
        let batch = cu_q
            .len()
            .checked_sub(1)
            .ok_or(VarlenError::Empty { which: "q" })?;
        if seqused_k.len() != batch {
            return Err(PagedError::SequsedLength {
                have: seqused_k.len(),
                batch,
            });
        }
        if max_pages == 0 || block_table.len() != batch.saturating_mul(max_pages) {
            return Err(PagedError::TableShape {
                have: block_table.len(),
                batch,
                max_pages,
            });
        }
        let cap = max_pages.saturating_mul(page);
        for (seq, &keys) in seqused_k.iter().enumerate() {
            let Some(used) = usize::try_from(keys).ok().filter(|&k| k <= cap) else {
                return Err(PagedError::Keys {
                    seq,
                    keys,
                    cap,
                    max_pages,
                    page,
                });
            };
            let row = &block_table[seq * max_pages..][..used.div_ceil(page.max(1))];
            if let Some((slot, &id)) = row
                .iter()
                .enumerate()
                .find(|(_, id)| usize::try_from(**id).map_or(true, |id| id >= num_pages))
            {
                return Err(PagedError::PageOutOfRange {
                    seq,
                    slot,
                    page: id,
                    pages: num_pages,
                });
            }
        }
        let paging = Paging {
            cu_q: cu_q.to_vec(),
            seqused_k: seqused_k.to_vec(),
            block_table: block_table.to_vec(),
            max_pages,
            page,
            num_pages,
        };
        let total_k = *paging.key_offsets().last().unwrap_or(&0) as usize;
        Offsets::new(cu_q, &paging.key_offsets(), total_q, total_k)?;
        Ok(paging)
    }

    /// Sequences in the batch.
    pub fn batch(&self) -> usize {
        self.seqused_k.len()
    }

    /// The cumulative key counts (`cu_seqlens_k` of the same keys packed): what the tile
    /// list and the reference see of the keys (saturating at `i32::MAX`, far past any cache a
    /// checked table addresses).
    pub fn key_offsets(&self) -> Vec<i32> {
        std::iter::once(0)
            .chain(self.seqused_k.iter().scan(0i32, |acc, &k| {
                *acc = acc.saturating_add(k.max(0));
                Some(*acc)
            }))
            .collect()
    }

    /// The batch as varlen offsets (queries as given, keys packed): the tile list and the
    /// reference are varlen's.
    pub fn offsets(&self) -> Offsets {
        Offsets {
            q: self.cu_q.clone(),
            k: self.key_offsets(),
        }
    }

    /// The cache row (of `[num_pages·PAGE, HK·D]`) holding key `j` of sequence `seq`.
    pub fn key_row(&self, seq: usize, j: usize) -> usize {
        let id = self.block_table[seq * self.max_pages + j / self.page];
        id as usize * self.page + j % self.page
    }
}

/// The `attention_sm90_paged` artifact for head dim `d`, page size `page`, the mask and the
/// element type (pages of 16, 32 and 64: the `…_p16w` / `…_p32w` / `…_p64w` tiles, key blocks of
/// BN/PAGE pages).
pub fn tile_for(
    d: usize,
    page: usize,
    causal: bool,
    elem: ElemType,
) -> Result<&'static KernelArtifact, PagedError> {
    let arts = attention_sm90_paged::KERNEL.artifacts;
    let dp = |a: &KernelArtifact| (a.int("D").unwrap_or(0) as usize, page_of(a).unwrap_or(0));
    arts.iter()
        .find(|a| {
            dp(a) == (d, page)
                && a.int("CAUSAL") == Some(i64::from(causal))
                && a.elem_of("q") == Some(elem)
        })
        .ok_or_else(|| {
            let mut have: Vec<(usize, usize)> = arts.iter().map(dp).collect();
            have.sort();
            have.dedup();
            PagedError::NoTile {
                d,
                page,
                causal,
                elem,
                have,
            }
        })
}

/// The page size of an `attention_sm90_paged` artifact (its `PAGE`), known by address.
pub fn page_of(art: &KernelArtifact) -> Result<usize, PagedError> {
    let ours = attention_sm90_paged::KERNEL
        .artifacts
        .as_ptr_range()
        .contains(&std::ptr::from_ref(art));
    art.int("PAGE")
        .filter(|&p| ours && p > 0)
        .map(|p| p as usize)
        .ok_or(PagedError::NotPaged { config: art.config })
}

/// The caches and their block table, as [`run`] takes them.
pub struct Cache<'a, T: tirx::Element> {
    /// K, `[num_pages, PAGE, HK·D]`.
    pub k: &'a Tensor<T>,
    /// V, as K.
    pub v: &'a Tensor<T>,
    /// `[B, max_pages]` row-major page ids.
    pub block_table: &'a [i32],
    /// The table's columns.
    pub max_pages: usize,
}

/// O = softmax(scale·Q·Kᵀ [+ causal mask])·V per sequence and head, and the LSE, over the
/// packed queries `cu_q` and the paged keys `seqused_k` of `cache` (module docs). Checks the
/// shapes, the offsets and the table, then launches `attention_sm90_paged` on the runtime's
/// stream and waits; returns the artifact. A batch with no query token launches nothing.
#[allow(clippy::too_many_arguments)]
pub fn run<T: tirx::Element>(
    rt: &Runtime,
    q: &Tensor<T>,
    cache: Cache<'_, T>,
    out: Outputs<'_, T>,
    (cu_q, seqused_k): (&[i32], &[i32]),
    d: usize,
    causal: bool,
    scale: f32,
) -> Result<&'static KernelArtifact, PagedError> {
    let (kshape, qshape) = (cache.k.shape(), q.shape());
    if kshape.len() != 3 || qshape.len() != 2 {
        return Err(PagedError::Shape(format!(
            "paged attention: q {qshape:?}, k {kshape:?}: q is [TQ, HQ·D] and the cache [num_pages, PAGE, HK·D]"
        )));
    }
    let (num_pages, page) = (kshape[0], kshape[1]);
    let table = (cache.block_table, cache.max_pages);
    let paging = Paging::new((cu_q, seqused_k), table, page, num_pages, q.shape()[0])?;
    let art = tile_for(d, page, causal, T::ELEM)?;
    let batch = PagedBatch::new(rt, &paging, art)?;
    let args = [
        q.view(),
        cache.k.view(),
        cache.v.view(),
        out.o.view(),
        out.lse.view(),
    ];
    launch(rt, &batch, args, scale)?;
    // The batch's buffers are freed when it goes out of scope: wait for the kernel first.
    rt.synchronize()?;
    Ok(art)
}

/// A checked paged batch on the device for one `attention_sm90_paged` artifact: the query
/// offsets, the key counts, the block table and the list of query tiles (varlen's, cut at
/// the artifact's rows), uploaded once and launched any number of times ([`launch`]).
pub struct PagedBatch {
    art: &'static KernelArtifact,
    cu_q: Tensor<i32>,
    seqused_k: Tensor<i32>,
    block_table: Tensor<i32>,
    /// `[NT, 2]`; `None` when no sequence has a query (nothing to launch).
    tiles: Option<Tensor<i32>>,
    /// (TQ, num_pages, PAGE): what the batch's Q and caches must hold.
    totals: (usize, usize, usize),
}

impl PagedBatch {
    /// Cuts `paging`'s queries into `art`'s tiles and uploads everything; refuses an
    /// artifact whose page size is not the batch's.
    pub fn new(
        rt: &Runtime,
        paging: &Paging,
        art: &'static KernelArtifact,
    ) -> Result<PagedBatch, PagedError> {
        let page = page_of(art)?;
        if page != paging.page {
            return Err(PagedError::Shape(format!(
                "paged attention: the batch's pages hold {} tokens, the tile `{}` reads pages of {page}",
                paging.page, art.config
            )));
        }
        let causal = art.int("CAUSAL") == Some(1);
        let rows = rows_in(art).ok_or(PagedError::NotPaged { config: art.config })?;
        let map = tile_list(&paging.offsets().tiles(rows, causal));
        let tiles = if map.is_empty() {
            None
        } else {
            Some(rt.upload(&map, &[map.len() / 2, 2])?)
        };
        // A batch of no sequence still uploads a one-entry key count and table (a tensor has
        // no empty extent); with no tile nothing reads them.
        let b = paging.batch();
        let seq = if b == 0 {
            vec![0]
        } else {
            paging.seqused_k.clone()
        };
        let table = if b == 0 {
            vec![0; paging.max_pages]
        } else {
            paging.block_table.clone()
        };
        Ok(PagedBatch {
            art,
            cu_q: rt.upload(&paging.cu_q, &[paging.cu_q.len()])?,
            seqused_k: rt.upload(&seq, &[seq.len()])?,
            block_table: rt.upload(&table, &[b.max(1), paging.max_pages])?,
            tiles,
            totals: (
                *paging.cu_q.last().unwrap_or(&0) as usize,
                paging.num_pages,
                page,
            ),
        })
    }

    /// The artifact the batch is cut for.
    pub fn artifact(&self) -> &'static KernelArtifact {
        self.art
    }
}

/// Launches the batch's artifact on `[q, k_cache, v_cache, o, lse]` (caches
/// `[num_pages, PAGE, HK·D]`) over its query tiles without waiting. Checks on the host first:
/// the shapes against the layout and the batch (Q of TQ rows, caches of its pages and page
/// size), caches whose pages merge into one matrix (row-major). A batch with no query token
/// launches nothing.
pub fn launch(
    rt: &Runtime,
    batch: &PagedBatch,
    [q, k, v, o, lse]: [tirx::TensorArg<'_>; 5],
    scale: f32,
) -> Result<(), PagedError> {
    let art = batch.art;
    let (tq, pages, page) = batch.totals;
    let (ks, vs) = (k.meta().shape.as_slice(), v.meta().shape.as_slice());
    if ks.len() != 3 || ks != vs || (ks[0], ks[1]) != (pages, page) {
        return Err(PagedError::Shape(format!(
            "paged attention: k {ks:?} and v {vs:?} must be one cache [num_pages, PAGE, HK·D] = [{pages}, {page}, _]"
        )));
    }
    let (Some(k2), Some(v2)) = (k.merge_outer(), v.merge_outer()) else {
        return Err(PagedError::Shape(
            "paged attention: the caches' pages must lie one after another (row-major [num_pages, PAGE, HK·D])".into(),
        ));
    };
    let d = art
        .int("D")
        .ok_or(PagedError::NotPaged { config: art.config })?;
    let shapes = [&q, &k2, &v2, &o, &lse].map(|t| t.meta().shape.as_slice());
    super::varlen::heads(shapes, d as usize).map_err(|e| {
        PagedError::Shape(format!(
            "paged attention, its caches read as [num_pages·PAGE, HK·D]: {e}"
        ))
    })?;
    if q.meta().shape[0] != tq {
        return Err(PagedError::Shape(format!(
            "paged attention: q has {} rows, but cu_seqlens_q ends at {tq}",
            q.meta().shape[0]
        )));
    }
    let Some(tiles) = batch.tiles.as_ref() else {
        return Ok(()); // no query token: no tile, no CTA
    };
    let roles = [
        ("q", q),
        ("k", k2),
        ("v", v2),
        ("o", o),
        ("lse", lse),
        ("cu_q", batch.cu_q.view()),
        ("seqused_k", batch.seqused_k.view()),
        ("block_table", batch.block_table.view()),
        ("tiles", tiles.view()),
    ];
    let scale_log2 = scale * std::f32::consts::LOG2_E;
    crate::family::launch_roles(rt, art, &roles, &[("scale_log2", scale_log2)])?;
    Ok(())
}

#[cfg(test)]
mod tests;
