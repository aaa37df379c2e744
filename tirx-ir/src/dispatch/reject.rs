//! Why a dispatch variant refuses an op: one value per reason, holding the names and numbers
//! of the problem; its `Display` is the line the rejection table prints.
//!
//! Shared checks (`copy::tma_box`, `mma::smem_operand`, `mma::accumulator`) return these
//! too, and a variant's `lower` reports them as `LowerError::Rejected` when it finds the op
//! it was forced onto unfit.

use crate::abi::{ElemType, Swizzle, Target};
use crate::encode::EncodeError;
use crate::encode::wgmma::WgmmaShapeError;
use crate::ir::Space;
use crate::valid::scope::Threads;

/// Why a variant refuses an op.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reject {
    /// The op is not the kind the variant lowers (`expected`: "a copy", "an mma", …).
    #[error("not {expected}")]
    WrongOp {
        /// What the variant lowers, with its article.
        expected: &'static str,
    },
    /// A scaled copy on a path that does not scale.
    #[error(
        "it does not scale (`alpha`/`beta` apply to an accumulator staged in shared memory: `reg_stage`)"
    )]
    Scaled,
    /// An atomic copy the variant cannot issue: the operation, type, semantics or old-value
    /// tile (`why` says which, and what would work).
    #[error("{why}")]
    Atomic {
        /// The reason.
        why: String,
    },
    /// The variant's threads are not the op's.
    #[error("it runs on {}; {need}", .threads.describe())]
    Threads {
        /// The threads the op's scopes select.
        threads: Threads,
        /// What the variant needs, and how to write it.
        need: &'static str,
    },
    /// A side of the copy that should be a global tile is not.
    #[error("the {side} is not a global tile")]
    NotGlobal {
        /// "source", "destination", "other side".
        side: &'static str,
    },
    /// A tile at element offsets (`x.at(…)`), or clipped by bounds (`.within(…)`), on a path
    /// that takes only tile coordinates or the tensor's own extents.
    #[error("{why}")]
    ElementOrigin {
        /// What the path takes, and which paths take the form.
        why: &'static str,
    },
    /// An operand that should be a buffer is not (`what`: "the destination", "A", …).
    #[error("{what} is not a buffer")]
    NotBuffer {
        /// The operand.
        what: &'static str,
    },
    /// A global tile of a tensor the signature does not have.
    #[error("unknown tensor `{tensor}`")]
    UnknownTensor {
        /// The tensor.
        tensor: String,
    },
    /// The target has no tensor memory.
    #[error("{} has no tensor memory", .target.name())]
    NoTmem {
        /// The target.
        target: Target,
    },
    /// A register-fragment path on a target without wgmma.
    #[error("the register fragment layout is wgmma's, and {} has no wgmma", .target.name())]
    NoWgmmaFragments {
        /// The target.
        target: Target,
    },
    /// wgmma on a target without it.
    #[error("{} has no wgmma (sm_90a only)", .target.name())]
    NoWgmma {
        /// The target.
        target: Target,
    },
    /// tcgen05 on a target without it.
    #[error("{} has no tcgen05 (sm_100a only)", .target.name())]
    NoTcgen05 {
        /// The target.
        target: Target,
    },
    /// A multicast mask that is not a constant subset of the cluster.
    #[error(
        "the multicast mask must be a constant naming CTAs of the {cluster}-CTA cluster (1..{})",
        (1u64 << .cluster) - 1
    )]
    MulticastMask {
        /// CTAs in the cluster.
        cluster: u32,
    },
    /// A TMA load without a barrier.
    #[error("a TMA load signals an mbarrier: pass one as the third argument")]
    LoadWithoutBarrier,
    /// The pair's TMA load (`cta_group = 2`) where it cannot be.
    #[error("the pair's TMA load (`cta_group = 2`) {why}")]
    PairLoad {
        /// What is wrong.
        why: &'static str,
    },
    /// A TMA store with a barrier.
    #[error("a TMA store completes through a bulk group, not an mbarrier")]
    StoreWithBarrier,
    /// A thread-copied load with a barrier or a multicast mask.
    #[error(
        "the threads' own stores complete this copy; it signals no mbarrier and multicasts nowhere (drop the barrier, or use `tma::load`)"
    )]
    ThreadCopySignals,
    /// A TMA copy of a buffer outside shared memory.
    #[error("`{buffer}` is in {}, TMA moves between global and shared memory", .space.name())]
    TmaSpace {
        /// The buffer.
        buffer: String,
        /// Its space.
        space: Space,
    },
    /// A TMA box and its tensor of different element types.
    #[error("`{buffer}` holds {} but `{tensor}` holds {}", .elem.name(), .tensor_elem.name())]
    TmaElem {
        /// The buffer.
        buffer: String,
        /// Its element type.
        elem: ElemType,
        /// The tensor.
        tensor: String,
        /// Its element type.
        tensor_elem: ElemType,
    },
    /// A TMA box whose rank or coordinates are not the tensor's rank.
    #[error(
        "the box has rank {rank} and {coords} coordinates, but `{tensor}` has rank {tensor_rank}"
    )]
    TmaRank {
        /// The box's rank.
        rank: usize,
        /// The tile's coordinates.
        coords: usize,
        /// The tensor.
        tensor: String,
        /// Its rank.
        tensor_rank: usize,
    },
    /// A TMA box of rank outside 1..=5.
    #[error("TMA boxes have rank 1 to 5, this one {rank}")]
    BoxRank {
        /// The rank.
        rank: usize,
    },
    /// A shared tile of higher rank than its tensor whose leading dimensions, merged into the
    /// box's outermost one, exceed TMA's 256 elements (a `[64, 64]` tile and a vector).
    #[error(
        "`{buffer}` is {tile:?} after its indices and `{tensor}` has rank {tensor_rank}: the tile's leading dimensions merge into a box dimension of {extent} elements, over TMA's 256; copy a tile of rank {tensor_rank} to or from `{tensor}` (one row: `{buffer}[i]`), or give `{tensor}` the tile's rank"
    )]
    MergedBox {
        /// The shared buffer.
        buffer: String,
        /// Its extents after its indices.
        tile: Vec<u32>,
        /// The tensor.
        tensor: String,
        /// Its rank.
        tensor_rank: usize,
        /// The merged outermost extent.
        extent: u32,
    },
    /// A TMA box extent outside 1..=256.
    #[error("TMA box extents are 1..=256 elements, this box has {extent}")]
    BoxExtent {
        /// The extent.
        extent: u32,
    },
    /// A TMA box whose inner extent is not a multiple of 16 bytes.
    #[error("the box's inner extent is {bytes} bytes; TMA needs a multiple of 16")]
    BoxInnerBytes {
        /// The inner extent in bytes.
        bytes: u32,
    },
    /// A TMA box whose inner extent is over its swizzle's span.
    #[error(
        "the box's inner extent is {bytes} bytes, over the {span}-byte span of swizzle {}",
        .swizzle.name()
    )]
    BoxOverSwizzle {
        /// The inner extent in bytes.
        bytes: u32,
        /// The swizzle's span in bytes.
        span: u32,
        /// The swizzle.
        swizzle: Swizzle,
    },
    /// A swizzled TMA box whose rows are narrower than its swizzle's span: the TMA unit lays
    /// each row of such a box one span apart in shared memory, not at the tile's row pitch.
    #[error(
        "the box's rows are {bytes} bytes but swizzle {} lays shared-memory rows {span} bytes apart: \
         TMA would read or write past each row of `{buffer}` (and past its end); declare the \
         buffer with the swizzle whose span is its row ({bytes} bytes: {}), or widen its rows to {span} bytes",
        .swizzle.name(),
        .fit
    )]
    BoxUnderSwizzle {
        /// The buffer.
        buffer: String,
        /// The inner extent in bytes.
        bytes: u32,
        /// The swizzle's span in bytes.
        span: u32,
        /// The swizzle.
        swizzle: Swizzle,
        /// The swizzle that fits the row (`B32`, `B64`, or `none`).
        fit: &'static str,
    },
    /// A TMA box into a buffer that is not dense row-major.
    #[error("`{buffer}` is not dense row-major, which is the layout a TMA box has")]
    TmaRowMajor {
        /// The buffer.
        buffer: String,
    },
    /// An MMA operand outside shared memory.
    #[error("{which} `{buffer}` is in {}; MMA operands come from shared memory here", .space.name())]
    OperandSpace {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its space.
        space: Space,
    },
    /// An A operand in tensor memory of a shape `tcgen05.mma` cannot read.
    #[error(
        "A `{buffer}` is in tmem as {dims:?}; an A operand in tensor memory is one [128, K] tile (row = TMEM lane, M = 128) with K a multiple of 16"
    )]
    TmemAShape {
        /// The buffer.
        buffer: String,
        /// Its shape as indexed.
        dims: Vec<u32>,
    },
    /// `saturate = true` on an MMA that is not `tcgen05.mma.kind::i8`.
    #[error(
        "`saturate = true` clamps an integer accumulator (tcgen05.mma kind::i8, the instruction descriptor's bit 3, PTX ISA §9.7.16.4.2); this MMA is {kind}"
    )]
    Saturate {
        /// What the MMA is.
        kind: String,
    },
    /// An unpacked 16-bit TMEM tile given as A, which `tcgen05.mma` reads packed.
    #[error(
        "A `{buffer}` is an unpacked 16-bit TMEM tile (one element to a cell, a 16-bit accumulator's image); tcgen05.mma reads an A from tensor memory packed, two 16-bit elements to a cell"
    )]
    UnpackedA {
        /// The buffer.
        buffer: String,
    },
    /// A copy `tcgen05.cp` cannot make.
    #[error("{why}")]
    Tcgen05Cp {
        /// What does not fit.
        why: String,
    },
    /// An MMA operand of an unsupported element type.
    #[error("{which} `{buffer}` holds {}; {supported} are supported", .elem.name())]
    OperandElem {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its element type.
        elem: ElemType,
        /// The types the path takes, in words.
        supported: &'static str,
    },
    /// An MN-major 8-bit operand of wgmma: the FP8 forms have no transpose operands.
    #[error(
        "{which} `{buffer}` is MN-major; wgmma reads {} operands K-major only (PTX ISA §9.7.15.5.2: `imm-trans-a`/`imm-trans-b` exist for .f16/.bf16 only): declare it `[rows, 128]` (K contiguous) and give the tensor K-major",
        .elem.name()
    )]
    WgmmaFp8Major {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its element type.
        elem: ElemType,
    },
    /// A K-major operand that is not 2-D as indexed.
    #[error("{which} `{buffer}` indexed this way is rank {rank}, not a 2-D tile")]
    OperandRank {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its rank as indexed.
        rank: usize,
    },
    /// A K-major operand without the 128B-swizzled layout of one span per row.
    #[error(
        "{which} `{buffer}` must be K-major with swizzle B128 and 128-byte rows ({} elements of K); it has swizzle {} and {row_bytes}-byte rows",
        128 / .elem.bytes(),
        .swizzle.name()
    )]
    KMajorLayout {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its element type.
        elem: ElemType,
        /// Its swizzle.
        swizzle: Swizzle,
        /// Its row length in bytes.
        row_bytes: u32,
    },
    /// A K-major operand whose rows are not whole swizzle atoms.
    #[error("{which} `{buffer}` has {rows} rows; a multiple of 8 (one swizzle atom) is needed")]
    OperandRows {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its rows.
        rows: u32,
    },
    /// An MN-major operand of the wrong rank as indexed.
    #[error(
        "{which} `{buffer}` is MN-major and indexed this way is rank {rank}; expected `[chunks, K, {}]` or `[K, {}]`",
        128 / .elem.bytes(),
        128 / .elem.bytes()
    )]
    MnRank {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its rank as indexed.
        rank: usize,
        /// Its element type.
        elem: ElemType,
    },
    /// An MN-major operand without 128B-swizzled chunks of one span.
    #[error(
        "{which} `{buffer}` is MN-major: it needs swizzle B128 and chunks of {} M/N elements (128 bytes, one swizzle span) as its innermost dimension; it has swizzle {} and {chunk_bytes}-byte chunks",
        128 / .elem.bytes(),
        .swizzle.name()
    )]
    MnLayout {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// Its element type.
        elem: ElemType,
        /// Its swizzle.
        swizzle: Swizzle,
        /// Its chunk length in bytes.
        chunk_bytes: u32,
    },
    /// An MN-major operand whose chunks are not whole swizzle atoms deep.
    #[error(
        "{which} `{buffer}` has {k_rows} K-rows per chunk; a multiple of 8 (one swizzle atom) is needed"
    )]
    MnKRows {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
        /// K-rows per chunk.
        k_rows: u32,
    },
    /// An MN-major operand on a path that reads K-major ones only.
    #[error("{which} `{buffer}` is MN-major; this path reads K-major operands only")]
    MnMajor {
        /// "A" or "B".
        which: &'static str,
        /// The buffer.
        buffer: String,
    },
    /// An MN-major shared tile as the source of a TMA store: its bytes are 64-element chunks
    /// laid out for an MMA to read transposed, not the box a store writes.
    #[error(
        "`{buffer}` is an MN-major tile (stored as 64-element chunks an MMA reads transposed); a TMA store would write those bytes untransposed to the tensor's coordinates. Stage the output in a K-major tile (no `major = mn`)"
    )]
    MnMajorStore {
        /// The buffer.
        buffer: String,
    },
    /// An MN-major A on a path that takes B MN-major but A K-major only (tcgen05; wgmma
    /// reads a 16-bit A MN-major with `imm-trans-a`).
    #[error("A `{buffer}` is MN-major; {path} reads A K-major here (only B may be `major = mn`)")]
    MnMajorA {
        /// The path (`tcgen05`).
        path: &'static str,
        /// The buffer.
        buffer: String,
    },
    /// An accumulator in another space than the path accumulates in.
    #[error("accumulator `{buffer}` is in {}; this path accumulates in {}", .space.name(), accumulates_in(*.want))]
    AccumulatorSpace {
        /// The buffer.
        buffer: String,
        /// Its space.
        space: Space,
        /// The path's space.
        want: Space,
    },
    /// An accumulator that is not one 2-D f32 tile: a register fragment unindexed, a TMEM
    /// buffer indexed down to its last two dimensions.
    #[error(
        "accumulator `{buffer}` must be one 2-D f32 tile: `{buffer}` has {rank} dimension(s) and {index} index(es); a register accumulator is [M, N] and unindexed, a TMEM one [M, N] or [stages.., M, N] indexed by its stages (`acc[s]`)"
    )]
    AccumulatorShape {
        /// The buffer.
        buffer: String,
        /// Its rank.
        rank: usize,
        /// Indices given.
        index: usize,
    },
    /// A 16-bit accumulator declared packed: the MMA writes one f16 element per 32-bit cell.
    #[error(
        "accumulator `{buffer}` is an f16 tile packed two to a TMEM cell, but tcgen05.mma writes a 16-bit D one element to a cell, in its low half (PTX ISA §9.7.16.10.4.1): declare it `tmem::<f16>([128, N], unpacked = true)`"
    )]
    PackedAccumulator {
        /// The buffer.
        buffer: String,
    },
    /// A and B of different element types.
    #[error("A and B have different element types")]
    ElemsDiffer,
    /// Accumulator and operand shapes that do not multiply.
    #[error("shapes disagree: acc {m}×{n}, A {}×{}, B {}×{}", .a.0, .a.1, .b.0, .b.1)]
    ShapesDisagree {
        /// Accumulator rows.
        m: u32,
        /// Accumulator columns.
        n: u32,
        /// A's (rows, K).
        a: (u32, u32),
        /// B's (rows, K).
        b: (u32, u32),
    },
    /// wgmma with M not a multiple of its 64-row slices.
    #[error("M = {m}; wgmma issues 64-row slices, so M must be a multiple of 64")]
    WgmmaM {
        /// M.
        m: u32,
    },
    /// An instruction shape wgmma lacks.
    #[error(transparent)]
    WgmmaShape(#[from] WgmmaShapeError),
    /// `cta_group = 2` on a path without the CTA pair.
    #[error("cta_group = 2 is the tcgen05 CTA pair (PTX ISA §9.7.16.5); wgmma has no pair form")]
    PairNotWgmma,
    /// The CTA pair's operands disagree with its accumulator half.
    #[error(
        "cta_group = 2: this CTA's accumulator is {m}×{n}, so its A half must be {m} rows and its B half {} rows with the same K; found A {}×{} and B {}×{}",
        .n / 2, .a.0, .a.1, .b.0, .b.1
    )]
    PairShapes {
        /// The accumulator's rows per CTA.
        m: u32,
        /// The accumulator's columns (the pair's N).
        n: u32,
        /// A's (rows, K).
        a: (u32, u32),
        /// B's (rows, K).
        b: (u32, u32),
    },
    /// The pair's MMA with a per-CTA accumulator other than 128 rows.
    #[error(
        "cta_group = 2: this CTA's accumulator has {m} rows; the pair's M = 256 takes 128 per CTA and M = 128 takes 64 (`tmem::<f32>([64, N])`)"
    )]
    PairM {
        /// The accumulator's rows per CTA.
        m: u32,
    },
    /// A register tile moved to or from the pair's M = 128 half of D.
    #[error(
        "`{buffer}` is the CTA pair's M = 128 half of D (64 rows in the 2x2 data path, PTX ISA §9.7.16.10.5.2: columns {half}.. of row m in lane 64 + m); move registers through its cells, a view `tmem::<f32>([128, {half}], alias = {buffer})`, or copy it to a global tile",
        half = .n / 2
    )]
    PairHalfRegs {
        /// The buffer.
        buffer: String,
        /// Its columns (the pair's N).
        n: u32,
    },
    /// The pair's block-scaled MMA with a per-CTA accumulator other than 128 rows.
    #[error(
        "cta_group = 2 with block scaling: this CTA's accumulator has {m} rows; the pair's block-scaled MMA is M = 256 here, 128 rows per CTA (the scale factors' layout for M = 128's 2x2 data path is not lowered)"
    )]
    PairScaledM {
        /// The accumulator's rows per CTA.
        m: u32,
    },
    /// The pair's M = 128 MMA with A in tensor memory.
    #[error(
        "cta_group = 2: this CTA's accumulator has 64 rows (M = 128 across the pair), so A `{buffer}` in tmem must be its 64 rows, `tmem::<bf16>([64, K])` with K a multiple of 16, which the 2x2 data path reads from lanes 0-63 and again from 64-127 (`tcgen05::cp(a_t, a_s, cta_group = 2)` from a [64, K] shared tile writes both)"
    )]
    PairTmemA {
        /// The buffer.
        buffer: String,
    },
    /// tcgen05 with M other than 128.
    #[error("M = {m}; this path issues cta_group::1 MMAs with M = 128 (TMEM lane = row)")]
    Tcgen05M {
        /// M.
        m: u32,
    },
    /// A block-scaled MMA (`scale_a`, `scale_b`) this path cannot make.
    #[error("{why}")]
    BlockScale {
        /// What does not fit.
        why: String,
    },
    /// The instruction descriptor cannot encode the op.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// A TMEM accumulator the epilogue cannot read.
    #[error(
        "the accumulator is {m}×{n}; this epilogue reads 128 lanes and columns in chunks of {chunk}"
    )]
    TmemEpilogueShape {
        /// Rows.
        m: u32,
        /// Columns.
        n: u32,
        /// Columns per load.
        chunk: u32,
    },
    /// An s32 accumulator stored to a tensor of another type, or an f32 one to an integer
    /// tensor: the epilogue converts f32 to floats and moves s32 words unconverted.
    #[error(
        "the accumulator `{buffer}` holds {acc} but `{tensor}` is {elem}; an i32 accumulator \
         (kind::i8) is stored to an i32 tensor, an f32 one to bf16, f16 or f32"
    )]
    EpilogueTypes {
        /// The accumulator.
        buffer: String,
        /// Its element type's name.
        acc: &'static str,
        /// The tensor.
        tensor: String,
        /// Its element type's name.
        elem: &'static str,
    },
    /// A register tile declared with another layout than the wgmma accumulator fragment.
    #[error("`{buffer}` does not have the wgmma accumulator layout (`layout = wgmma`)")]
    NotFragment {
        /// The tile.
        buffer: String,
    },
    /// A register-tile copy the register load/store path cannot do.
    #[error("{why}")]
    RegTile {
        /// What does not fit.
        why: String,
    },
    /// A register accumulator that is not whole wgmma fragments.
    #[error("the accumulator is {m}×{n}; wgmma fragments are 64 rows × a multiple of 8")]
    FragmentShape {
        /// Rows.
        m: u32,
        /// Columns.
        n: u32,
    },
    /// A staging buffer outside shared memory.
    #[error("`{buffer}` must be a shared tile")]
    StagingSpace {
        /// The buffer.
        buffer: String,
    },
    /// An accumulator that does not stage in whole blocks.
    #[error(
        "the accumulator is {m}×{n}; staging {} needs rows a multiple of 64 and columns of {block}",
        .elem.name()
    )]
    StagingShape {
        /// Rows.
        m: u32,
        /// Columns.
        n: u32,
        /// The staged element type.
        elem: ElemType,
        /// Columns per block.
        block: u32,
    },
    /// A staging buffer whose layout is not the blocks TMA stores.
    #[error(
        "`{buffer}` must be [{}, {}, {}] with swizzle B128 ({}-column {} blocks of 128-byte rows, one TMA box each); it is {dims:?} with swizzle {}",
        .want[0], .want[1], .want[2], .want[2], .elem.name(), .swizzle.name()
    )]
    StagingLayout {
        /// The buffer.
        buffer: String,
        /// The shape it must have.
        want: [u32; 3],
        /// Its element type.
        elem: ElemType,
        /// Its shape as indexed.
        dims: Vec<u32>,
        /// Its swizzle.
        swizzle: Swizzle,
    },
    /// A thread-copied buffer outside shared memory.
    #[error("`{buffer}` is in {}; this path stores into shared memory", .space.name())]
    StoreSpace {
        /// The buffer.
        buffer: String,
        /// Its space.
        space: Space,
    },
    /// A thread copy of other element types than one 16-bit type.
    #[error(
        "`{buffer}` holds {} and `{tensor}` holds {}; this path copies bf16 or f16 of one type",
        .elem.name(),
        .tensor_elem.name()
    )]
    ThreadElem {
        /// The buffer.
        buffer: String,
        /// Its element type.
        elem: ElemType,
        /// The tensor.
        tensor: String,
        /// Its element type.
        tensor_elem: ElemType,
    },
    /// A thread copy that is not of 2-D tiles.
    #[error(
        "`{tensor}` has rank {rank} and the tile {coords} coordinates; this path copies 2-D tiles"
    )]
    ThreadRank {
        /// The tensor.
        tensor: String,
        /// Its rank.
        rank: usize,
        /// The tile's coordinates.
        coords: usize,
    },
    /// A buffer that is not dense row-major.
    #[error("`{buffer}` is not dense row-major")]
    NotRowMajor {
        /// The buffer.
        buffer: String,
    },
    /// A buffer that is not 2-D as indexed.
    #[error("`{buffer}` indexed this way is rank {rank}, not a 2-D tile")]
    TileRank {
        /// The buffer.
        buffer: String,
        /// Its rank as indexed.
        rank: usize,
    },
    /// 128B swizzle on rows other than 128 bytes.
    #[error(
        "`{buffer}` has swizzle B128 and {row_bytes}-byte rows; the 128B swizzle needs rows of exactly 128 bytes"
    )]
    SwizzleRows {
        /// The buffer.
        buffer: String,
        /// Its row length in bytes.
        row_bytes: u32,
    },
    /// Indexed tiles that may start off a swizzle repeat.
    #[error(
        "the tiles of `{buffer}` are {tile_bytes} bytes, so an indexed one may start off the 1024-byte swizzle repeat"
    )]
    SwizzleRepeat {
        /// The buffer.
        buffer: String,
        /// Bytes per tile.
        tile_bytes: u32,
    },
    /// A swizzle the path does not write.
    #[error("`{buffer}` has swizzle {}; this path writes swizzle none or B128", .swizzle.name())]
    SwizzleKind {
        /// The buffer.
        buffer: String,
        /// Its swizzle.
        swizzle: Swizzle,
    },
    /// A tile the CTA's threads cannot share evenly.
    #[error(
        "the {rows}×{cols} tile has {} elements, not a multiple of the CTA's {threads} threads",
        *.rows as u64 * *.cols as u64
    )]
    ThreadShare {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
        /// The CTA's threads.
        threads: u32,
    },
}

/// Words for the space an accumulator path accumulates in.
fn accumulates_in(space: Space) -> &'static str {
    match space {
        Space::Tmem => "tensor memory (`tmem::<f32>`)",
        Space::Reg => "registers (`regs::<f32>`)",
        Space::Shared => "shared memory",
    }
}

impl Reject {
    /// The buffer whose declared layout the refusal is about (its element type, shape, swizzle
    /// or majorness; not its space, which says only that the path was the wrong one), if any: a
    /// dispatch error notes that declaration beside the op, so a layout contract that disagrees
    /// is seen at both ends.
    pub fn buffer(&self) -> Option<&str> {
        match self {
            Reject::TmaElem { buffer, .. }
            | Reject::MergedBox { buffer, .. }
            | Reject::TmaRowMajor { buffer, .. }
            | Reject::BoxUnderSwizzle { buffer, .. }
            | Reject::TmemAShape { buffer, .. }
            | Reject::UnpackedA { buffer, .. }
            | Reject::OperandElem { buffer, .. }
            | Reject::WgmmaFp8Major { buffer, .. }
            | Reject::OperandRank { buffer, .. }
            | Reject::KMajorLayout { buffer, .. }
            | Reject::OperandRows { buffer, .. }
            | Reject::MnRank { buffer, .. }
            | Reject::MnLayout { buffer, .. }
            | Reject::MnKRows { buffer, .. }
            | Reject::MnMajor { buffer, .. }
            | Reject::MnMajorA { buffer, .. }
            | Reject::MnMajorStore { buffer, .. }
            | Reject::AccumulatorShape { buffer, .. }
            | Reject::PairHalfRegs { buffer, .. }
            | Reject::PackedAccumulator { buffer, .. }
            | Reject::StagingLayout { buffer, .. }
            | Reject::ThreadElem { buffer, .. }
            | Reject::NotRowMajor { buffer, .. }
            | Reject::TileRank { buffer, .. }
            | Reject::SwizzleRows { buffer, .. }
            | Reject::SwizzleRepeat { buffer, .. }
            | Reject::SwizzleKind { buffer, .. } => Some(buffer),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FP8 wgmma's refusal of an MN-major 8-bit operand is about that buffer's declared
    /// layout, so a dispatch error notes its declaration beside the op.
    #[test]
    fn the_fp8_majorness_refusal_names_its_buffer() {
        let why = Reject::WgmmaFp8Major {
            which: "B",
            buffer: "b_s".into(),
            elem: ElemType::E4m3,
        };
        assert_eq!(why.buffer(), Some("b_s"));
    }
}
