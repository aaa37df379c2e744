//! check-protocol — asynchronous-protocol rules decided at build time (issue #11;
//! `docs/contracts.md` lists each rule with its source, cases and what is left undecided).
//!
//! Phase: Tile, after `derive-signals` (the expect-tx ops it derives stand in the body) and
//! after dispatch (the variants say which copies are generic-proxy writes, which are TMA
//! stores, which ops read through the async proxy). Reads the kernel; changes nothing.
//!
//! The rules, by file:
//! - [`order`]: phase parity in loops, proxy fences, reads before the wait of a TMA load;
//! - [`counters`]: a pipeline counter that does not advance by exactly one per use (a
//!   stride, a skipped increment, a restart in every iteration of an enclosing loop);
//! - [`phases`]: phase parity on every path — a constant parity against the phases signalled
//!   before the wait, a wait on a barrier nothing (or only what comes after it) signals;
//! - [`bulk`]: a TMA store's source overwritten, or its pipeline stage released, while the
//!   store may still read it (bulk async-groups, `tma::wait_group_read`);
//! - [`operands`]: a pipeline stage released while a wgmma or tcgen05 MMA may still read it;
//! - [`tmem`]: the TMEM lifecycle (alloc → use → dealloc) and a tcgen05 accumulator read
//!   before the barrier of its commit was waited on;
//! - [`counts`]: arrival counts (`arrive()` and `consumer_release` against the declared
//!   arrivals) and byte counts through control flow (an `expect_tx` outside the `if` of its
//!   loads, a multicast only some CTAs of its mask issue);
//! - [`multicast`]: a receiver-armed multicast (each receiver writes its `expect_tx`, any CTA
//!   issues): the bytes every rank expects against those its issuers' masks send it;
//! - [`refill`]: a pipeline stage refilled in a loop without `producer_acquire`;
//! - [`unwaited`]: a pipeline stage read in a loop that never waits for it (`consumer_wait`);
//! - [`scales`]: a block-scaled MMA's factors copied into tensor memory, and ordered before it;
//! - [`writers`]: a pipeline's `writers = w` against the `pipe.full(s).arrive()` that fill
//!   its stages (none where `w > 0`, any where `w = 0`, a counted site of other than `w`).
//!
//! Each rule reports only what it can prove from the body; a kernel it cannot judge (a
//! run-time index, a data-dependent branch) is accepted, and the emulator checks it at run
//! time. [`flow`] is the forward walk the state-following rules share; [`tiles`] decides which
//! part of a shared buffer a pending read covers.

mod bulk;
mod counters;
mod counts;
pub(crate) use counts::{eval_at, eval_rank};
pub(super) mod flow;
mod multicast;
mod operands;
mod order;
mod phases;
mod refill;
mod scales;
mod tiles;
mod tmem;
mod unwaited;
mod writers;

use super::Pass;
use crate::arena::Handle;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Block, Expr, Kernel, Op, StmtKind, Var};

/// The pass.
pub struct CheckProtocol;

/// A broken protocol rule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// A loop-invariant parity on a barrier the loop signals.
    #[error(
        "phase parity: `{bar}` completes a phase in every iteration of this loop (it is signalled inside it), so the parity to wait for alternates; this wait's parity does not change with the loop, so it returns at once on a stale phase or hangs. Wait on the iteration's parity (`{bar}.wait(i % 2)` with `i` counting the loop's phases), or give each iteration its own barrier (`{bar}[i % 2]`)"
    )]
    FixedParity {
        /// The barrier, as written.
        bar: String,
    },
    /// A constant parity that names the phase after the last one signalled before the wait.
    #[error(
        "phase parity: {phases} phase(s) of `{bar}` are signalled before this wait on every path (by {by}, in the threads that wait here), so the phase to wait for is the last of them, of parity {want} (phase n has parity n % 2); `{bar}.wait({got})` names the phase after it: it returns at once while that phase is still open, or hangs once it completed, waiting for a phase nothing signals first. Wait on `{bar}.wait({want})`"
    )]
    ParityMismatch {
        /// The barrier, as written.
        bar: String,
        /// Phases signalled before the wait (`2`, `1 or 3`).
        phases: String,
        /// The parity of the last of them.
        want: i64,
        /// The parity waited on.
        got: i64,
        /// The ops that signal it, in words.
        by: String,
    },
    /// A wait on phase 0 of a barrier nothing signals.
    #[error(
        "phase parity: nothing in this kernel signals `{bar}` (no `arrive()`, `expect_tx`, TMA load, `tcgen05::commit` or `clc::try_cancel` names it), so its phase 0 never completes and this `wait(0)` hangs. Signal it before the wait (a TMA load or `{bar}.arrive()`), or wait on the barrier that is signalled"
    )]
    WaitNeverSignalled {
        /// The barrier, as written.
        bar: String,
    },
    /// A wait on phase 0 of a barrier signalled only behind the wait.
    #[error(
        "phase parity: `{bar}` is signalled only after this wait ({what}, further down this block), by threads that reach this wait first, so its phase 0 never completes and this `wait(0)` hangs. Signal it before the wait; a barrier meant to start out free is waited on with parity 1 (`{bar}.wait(1)` returns at once on a fresh barrier)"
    )]
    WaitBeforeOwnSignal {
        /// The barrier, as written.
        bar: String,
        /// The first op that signals it.
        what: &'static str,
    },
    /// A pipeline stage taken with a counter the loop does not advance.
    #[error(
        "phase parity: this `{op}` on pipeline `{pipe}` uses an iteration counter that does not change in its loop, so every iteration takes the same stage and parity; pass the loop's counter (`{op}(k)` with `k` advancing once per use)"
    )]
    FixedIteration {
        /// `consumer_wait` or `producer_acquire`.
        op: &'static str,
        /// The pipeline.
        pipe: String,
    },
    /// A pipeline counter that does not advance by one per use.
    #[error(
        "pipeline counter: `{var}` makes the counter of this `{op}` on pipeline `{pipe}` advance by {advance} per iteration of its loop, which has {uses} such use(s) in each iteration, not one after another: each use must take the next counter (the stage is `k % stages` and the parity `(k / stages) % 2`), or it takes a stage out of turn or waits on a phase already passed. Advance the counter by one per use (`{var} += 1` after each, or `{op}(k)` with `k` counting uses)"
    )]
    CounterStride {
        /// `consumer_wait` or `producer_acquire`.
        op: &'static str,
        /// The pipeline.
        pipe: String,
        /// The counter's variable.
        var: String,
        /// How much it advances per iteration.
        advance: i64,
        /// Uses per iteration.
        uses: i64,
    },
    /// A pipeline counter whose increment some iterations skip.
    #[error(
        "pipeline counter: `{var}`, the counter of this `{op}` on pipeline `{pipe}`, is advanced under an `if` in its loop while this use runs in every iteration: the iterations that skip the increment take the same stage and parity again (a phase already passed). Advance `{var}` in every iteration that uses it"
    )]
    CounterSkipped {
        /// `consumer_wait` or `producer_acquire`.
        op: &'static str,
        /// The pipeline.
        pipe: String,
        /// The counter's variable.
        var: String,
    },
    /// A pipeline counter restarted in every iteration of an enclosing loop.
    #[error(
        "pipeline counter: `{var}`, the counter of this `{op}` on pipeline `{pipe}`, starts from the same value in every iteration of the enclosing loop, while the pipeline's barriers go on from where the last iteration left them: from the second iteration on it takes stages out of turn and waits on the wrong parity. Keep one counter across the enclosing loop (`let mut it = 0;` before it, `{op}(it)` and `it += 1` per use)"
    )]
    CounterReset {
        /// `consumer_wait` or `producer_acquire`.
        op: &'static str,
        /// The pipeline.
        pipe: String,
        /// The counter's variable.
        var: String,
    },
    /// A TMA load's destination read before a wait on the barrier it signals.
    #[error(
        "missing wait: `{buffer}` is filled by a TMA load that signals `{bar}`, and is read here before any wait on `{bar}`: the bytes may not have landed. Wait first (`{bar}.wait(parity)`, or `consumer_wait` for a pipeline stage)"
    )]
    ReadBeforeWait {
        /// The shared buffer.
        buffer: String,
        /// The barrier its load signals.
        bar: String,
    },
    /// A cluster-launch-control response decoded before a wait on the barrier it signals.
    #[error(
        "missing wait: `{buffer}` receives the response of a `clc::try_cancel` that signals `{bar}`, and is decoded here before any wait on `{bar}`: the response may not have landed (PTX ISA §9.7.13.17: only the mbarrier tells its completion). Wait first (`{bar}.wait(parity)`)"
    )]
    ResponseBeforeWait {
        /// The response buffer.
        buffer: String,
        /// The barrier its request signals.
        bar: String,
    },
    /// An async-proxy read of shared memory threads wrote without a proxy fence.
    #[error(
        "proxy fence: `{buffer}` was written by threads (generic-proxy stores, by `{writer}`) and is read here by {reader} through the async proxy, with no `fence::proxy_async()` between them: the async proxy may read stale data. Put `fence::proxy_async()` after the stores (and a barrier, if other threads issue the read)"
    )]
    MissingProxyFence {
        /// The shared buffer.
        buffer: String,
        /// The variant that wrote it.
        writer: String,
        /// What reads it.
        reader: &'static str,
    },
    /// A TMA store's source written while the store may still read it.
    #[error(
        "store source overwritten: `{buffer}` is the source of a TMA store that may still be reading it ({pending}), and {writer} writes it here: the store may send the new data, or a mix. Wait until the store has read it first (`tma::wait_group_read({n})` after its `tma::commit_group()`), or write another buffer"
    )]
    StoreSourceOverwritten {
        /// The shared buffer.
        buffer: String,
        /// What writes it (`a TMA load`, `the \`shared_store\` copy`).
        writer: String,
        /// Why the store may still be reading (its group state).
        pending: &'static str,
        /// The `n` of a `wait_group_read(n)` that retires the store.
        n: usize,
    },
    /// A pipeline stage released while a TMA store still reads it.
    #[error(
        "stage released too early: `{buffer}` (a stage of pipeline `{pipe}`) is the source of a TMA store that may still be reading it ({pending}), and this `consumer_release` lets the producer refill the stage: the store may send the next tile's data. Wait until the store has read it first (`tma::wait_group_read({n})` after its `tma::commit_group()`), then release"
    )]
    ReleasedWhileStored {
        /// The stage buffer.
        buffer: String,
        /// The pipeline.
        pipe: String,
        /// Why the store may still be reading.
        pending: &'static str,
        /// The `n` of a `wait_group_read(n)` that retires the store.
        n: usize,
    },
    /// A pipeline stage released while an MMA may still read it.
    #[error(
        "stage released under an MMA: `{buffer}` (a stage of pipeline `{pipe}`) is an operand of an MMA that may still be reading it, and this `consumer_release` lets the producer refill the stage under it — {fix}"
    )]
    ReleasedUnderMma {
        /// The stage buffer.
        buffer: String,
        /// The pipeline.
        pipe: String,
        /// Why the MMA may still read, and the wait that makes the release safe.
        fix: String,
    },
    /// A TMEM buffer used before its allocation.
    #[error(
        "TMEM lifecycle: `{buffer}` is used here ({what}) before `tcgen05::alloc({buffer})`: no columns are allocated to it, and its address is unset. Allocate it first, in one whole warp (`#[scope(warp = 0)] {{ tcgen05::alloc({buffer}); }}`), then `tcgen05::fence_before(); sync_threads(); tcgen05::fence_after();`"
    )]
    TmemBeforeAlloc {
        /// The TMEM buffer.
        buffer: String,
        /// The use.
        what: &'static str,
    },
    /// `tcgen05::alloc` / `dealloc` of a TMEM view: its columns are its base's.
    #[error(
        "TMEM lifecycle: `{buffer}` is a view of `{base}` (`alias = {base}`) and has no columns of its own: allocate and deallocate `{base}`"
    )]
    TmemViewAlloc {
        /// The view.
        buffer: String,
        /// Its base.
        base: String,
    },
    /// A TMEM buffer used after its deallocation.
    #[error(
        "TMEM lifecycle: `{buffer}` is used here ({what}) after `tcgen05::dealloc({buffer})`: its columns may already belong to another CTA. Deallocate after the last use (`tcgen05::fence_before(); sync_threads();` then the dealloc)"
    )]
    TmemAfterDealloc {
        /// The TMEM buffer.
        buffer: String,
        /// The use.
        what: &'static str,
    },
    /// A TMEM buffer allocated twice.
    #[error(
        "TMEM lifecycle: `{buffer}` is already allocated here, and this `tcgen05::alloc` allocates its columns again: the first allocation leaks (and with 512 columns taken, the second blocks). Allocate once, before the first use"
    )]
    TmemDoubleAlloc {
        /// The TMEM buffer.
        buffer: String,
    },
    /// A dealloc of a TMEM buffer that is not allocated.
    #[error(
        "TMEM lifecycle: this `tcgen05::dealloc({buffer})` frees columns that are not allocated here ({state}): deallocate once, after `tcgen05::alloc({buffer})` and the last use"
    )]
    TmemDeallocUnallocated {
        /// The TMEM buffer.
        buffer: String,
        /// `never allocated` or `already deallocated`.
        state: &'static str,
    },
    /// A TMEM allocation never released.
    #[error(
        "TMEM lifecycle: `{buffer}` is allocated here and not deallocated on the way to the kernel's end; every TMEM allocation must be released before the kernel exits. Add `tcgen05::fence_before(); sync_threads();` and `#[scope(warp = 0)] {{ tcgen05::dealloc({buffer}); }}` after the last use (the same warp that allocated it)"
    )]
    TmemLeak {
        /// The TMEM buffer.
        buffer: String,
    },
    /// A TMEM allocation released on some paths only.
    #[error(
        "TMEM lifecycle: `{buffer}` is allocated here and, on the path where the `if` in the note is {path}, not deallocated on the way to the kernel's end; every TMEM allocation must be released before the kernel exits, on every path. Deallocate it on that path too (`tcgen05::fence_before(); sync_threads();` then `tcgen05::dealloc({buffer})` in the warp that allocated it), or move the dealloc out of the `if`"
    )]
    TmemLeakOnPath {
        /// The TMEM buffer.
        buffer: String,
        /// `taken` or `not taken`.
        path: &'static str,
    },
    /// A `tcgen05::relinquish` some paths skip.
    #[error(
        "TMEM lifecycle: the CTA gives up its TMEM allocation permit here, but on the path where the `if` in the note is {path} it never does: there it keeps the permit to the end, and the other CTAs on the SM wait in their `tcgen05::alloc` until it exits. Relinquish on every path (after the last `tcgen05::alloc`, outside the `if`)"
    )]
    RelinquishOnPath {
        /// `taken` or `not taken`.
        path: &'static str,
    },
    /// A tcgen05 accumulator read while an MMA into it is not committed.
    #[error(
        "accumulator in flight: `{buffer}` is written by a `tcgen05::mma` (asynchronous), and read here with no `tcgen05::commit` after the MMA: nothing signals when it is done, so the read may see partial sums. Commit to a barrier (`tcgen05::commit(done)`) after the MMAs and wait on it (`done.wait(parity)`) before the read"
    )]
    TmemReadBeforeCommit {
        /// The TMEM accumulator.
        buffer: String,
    },
    /// A TMEM A operand written while an MMA reading it may be in flight.
    #[error(
        "A in flight: {buffer} is read as A by a `tcgen05::mma` (asynchronous), and written here while that MMA may still read it: {until}. Wait on the barrier its `tcgen05::commit` signals before writing"
    )]
    TmemAWriteInFlight {
        /// The TMEM buffer written, in backticks (with its base when it is a view).
        buffer: String,
        /// Why the MMA may still be reading.
        until: String,
    },
    /// A tcgen05 accumulator read before the wait on its commit's barrier.
    #[error(
        "accumulator in flight: `{buffer}` is written by a `tcgen05::mma` (asynchronous) whose completion `tcgen05::commit({bar})` signals, and is read here before any wait on `{bar}`: the read may see partial sums. Wait first (`{bar}.wait(parity)`)"
    )]
    TmemReadBeforeWait {
        /// The TMEM accumulator.
        buffer: String,
        /// The barrier the commit signals.
        bar: String,
    },
    /// A barrier whose one phase gets provably more or fewer arrivals than declared.
    #[error(
        "arrival count: `{bar}` expects {expected} arrival(s) per phase (`mbarrier(arrivals = {expected})`), but {got} thread(s) arrive on it before this wait ({sites}), so {consequence}. Declare `mbarrier(arrivals = {got})`, or arrive from {expected} thread(s)"
    )]
    ArrivalCount {
        /// The barrier.
        bar: String,
        /// The declared arrivals.
        expected: u32,
        /// Threads that arrive.
        got: u32,
        /// Where they arrive.
        sites: String,
        /// What happens.
        consequence: &'static str,
    },
    /// A `consumer_release` by more threads than the pipeline expects.
    #[error(
        "release count: this `consumer_release` runs on {threads} thread(s) ({scope}), each an arrival on the stage's empty barrier, which expects consumers × peers = {expected} per phase (`pipeline::<S>(consumers = {consumers}, peers = {peers})`: each of the {consumers} consumer(s) releases once); {consequence}. {fix}"
    )]
    ReleaseCount {
        /// Threads that release here (or in all sites).
        threads: u32,
        /// Which threads.
        scope: String,
        /// Arrivals the empty barrier expects.
        expected: u32,
        /// Consumers.
        consumers: u32,
        /// Peer CTAs.
        peers: u32,
        /// What happens.
        consequence: &'static str,
        /// The fix.
        fix: &'static str,
    },
    /// `pipe.full(s).arrive()` on a pipeline declared without writers.
    #[error(
        "undeclared writers: this `{pipe}.full(..).arrive()` is an arrival on the stage's full barrier{by}, but `{pipe}` is declared without writers (`writers = 0`), so that barrier expects one arrival a phase, the producer's `arrive.expect_tx`: this one completes the phase early, before the TMA bytes land, and a consumer's `consumer_wait` returns on a stage still being filled (the producer's own arrival then counts toward the next phase). Declare the threads that arrive here on one phase as the pipeline's writers: `pipeline::<S>(…, writers = {n})`"
    )]
    WritersUndeclared {
        /// The pipeline.
        pipe: String,
        /// ` from N thread(s)`, when counted.
        by: String,
        /// The count to declare (`N` when not counted).
        n: String,
    },
    /// A pipeline declared with writers that nothing arrives for.
    #[error(
        "missing writers: `{pipe}` is declared with `writers = {writers}`, so each phase of a stage's full barrier expects the producer's `arrive.expect_tx` and {writers} arrivals from `{pipe}.full(s).arrive()`, but nothing in the kernel arrives that way: no phase ever completes and the first `consumer_wait` hangs. Arrive with `{pipe}.full(s).arrive()` from the {writers} thread(s) that store part of the stage, after their stores, or declare the pipeline without `writers`"
    )]
    WritersMissing {
        /// The pipeline.
        pipe: String,
        /// Its declared writers.
        writers: u32,
    },
    /// Writer arrivals that provably do not make the declared `writers`.
    #[error(
        "writer count: `{pipe}` is declared with `writers = {writers}` (each phase of a stage's full barrier expects the producer's `arrive.expect_tx` and {writers} arrivals from `{pipe}.full(s).arrive()`), but {sites}; {consequence}. {fix}"
    )]
    WriterCount {
        /// The pipeline.
        pipe: String,
        /// Its declared writers.
        writers: u32,
        /// The arrive sites, in words.
        sites: String,
        /// What happens.
        consequence: &'static str,
        /// The fix.
        fix: String,
    },
    /// An explicit expect-tx outside the block that issues its loads.
    #[error(
        "byte count: `{bar}.expect_tx(..)` arms `{bar}` here, but the TMA loads that signal it are inside {place} below, and the compiler arms the barrier with their bytes there: when they run, `{bar}` expects the bytes twice; when they do not, it expects bytes that never arrive. Either way the wait hangs. Leave this expect_tx out (the bytes are derived), or write it inside {place}, next to the loads"
    )]
    ExpectTxOutsideLoads {
        /// The barrier.
        bar: String,
        /// `the \`if\`` or `the nested scope`.
        place: &'static str,
    },
    /// A multicast load some CTAs of its mask do not issue.
    #[error(
        "multicast: this load lands in CTAs {receivers} of the cluster (`multicast = {mask}`), and the compiler arms each of their barriers for one box from every CTA of the mask ({boxes} boxes per phase); but it is issued only in CTA(s) {issuers} (its `if` on `cta_rank`), so CTA(s) {missing} send no box and arm nothing, and the barriers never complete. Issue the multicast from every CTA of the mask (each its own slice, outside the `if`); or let each receiver arm its own barrier: write `{bar}.expect_tx(n)`, n the bytes a CTA receives, outside the `if`, where every CTA of the mask runs it; or load without `multicast`"
    )]
    MulticastNotSymmetric {
        /// The barrier.
        bar: String,
        /// Ranks in the mask.
        receivers: String,
        /// The mask.
        mask: i64,
        /// Boxes each barrier expects.
        boxes: u32,
        /// Ranks that issue.
        issuers: String,
        /// Ranks of the mask that do not.
        missing: String,
    },
    /// Receiver-armed multicast: bytes land in CTAs that never arm the barrier.
    #[error(
        "multicast: this load (issued by CTA(s) {issuers}) lands in CTA(s) {unarmed} (`multicast = {mask}`), but no `{bar}.expect_tx(..)` runs there: a receiver-armed barrier completes its phase only when its own CTA arms it, so `{bar}` in CTA(s) {unarmed} never completes and a wait there hangs. Write `{bar}.expect_tx({bytes})` where every receiving CTA runs it (outside the issuer's `if`)"
    )]
    MulticastUnarmed {
        /// The barrier.
        bar: String,
        /// The mask.
        mask: u64,
        /// Ranks that issue the load.
        issuers: String,
        /// Ranks of the mask that never arm.
        unarmed: String,
        /// Bytes the first of them receives.
        bytes: u64,
    },
    /// Receiver-armed multicast: a rank arms or waits but no mask covers it.
    #[error(
        "multicast: CTA(s) {uncovered} arm or wait on `{bar}`, but no multicast load of it lands there (masks {masks}, issued by CTA(s) {issuers}), so their phase never completes and the wait hangs. Add their bits to this load's `multicast` mask, or do not arm and wait on `{bar}` in them"
    )]
    MulticastUncovered {
        /// The barrier.
        bar: String,
        /// Ranks not covered.
        uncovered: String,
        /// The loads' masks.
        masks: String,
        /// Ranks that issue.
        issuers: String,
    },
    /// Receiver-armed multicast: an arm that is not the bytes its rank receives.
    #[error(
        "byte count: this `{bar}.expect_tx({expected})` runs in CTA {rank}, which receives {received} bytes per phase on `{bar}` (every multicast load whose mask includes rank {rank}, times the CTAs that issue it), so the phase completes early or never. Write `{bar}.expect_tx({received})` in that CTA"
    )]
    MulticastBytes {
        /// The barrier.
        bar: String,
        /// The rank.
        rank: u32,
        /// Its written count.
        expected: u32,
        /// The bytes it receives.
        received: u64,
    },
    /// Receiver-armed multicast whose per-rank bytes cannot be proven.
    #[error(
        "multicast: `{bar}` is armed by its receivers (a written `expect_tx`), so the compiler proves per CTA of the cluster that the bytes each expects are those sent to it; it cannot here: {why}. Put the arms and the loads of one phase in one loop, under `if`s on `cta_rank` only"
    )]
    MulticastUnproven {
        /// The barrier.
        bar: String,
        /// Why not.
        why: &'static str,
    },
    /// A block-scaled MMA reads factors no `tcgen05::cp` has filled.
    #[error(
        "block-scale factors not copied: this MMA reads its {which} from `{buffer}`, but some path reaches it with no `tcgen05::cp({buffer}, …)` into it — tensor memory holds whatever was there. Copy the factors from their shared tile first, from this MMA's thread: `tcgen05::cp({buffer}, sf_s)` (PTX ISA §9.7.16.10.7)"
    )]
    ScaleNotCopied {
        /// `scale_a` or `scale_b`.
        which: &'static str,
        /// The TMEM scale tile.
        buffer: String,
    },
    /// A block-scaled MMA reads factors a copy of other threads wrote, with nothing ordering it.
    #[error(
        "block-scale factors unordered: this MMA reads its {which} from `{buffer}`, which {by} filled by `tcgen05::cp`; the ISA orders a `tcgen05.cp` before a `tcgen05.mma` only when one thread issues both (PTX ISA §9.7.16.6.5), so the MMA may read the factors before the copy lands. Issue the copy from this MMA's thread, just before it, or `tcgen05::commit` it and wait on that barrier here first"
    )]
    ScaleCopyUnordered {
        /// `scale_a` or `scale_b`.
        which: &'static str,
        /// The TMEM scale tile.
        buffer: String,
        /// The copying threads, in words.
        by: String,
    },
    /// A pipeline stage refilled without acquiring it.
    #[error(
        "stage refilled without acquire: this TMA load fills a stage of pipeline `{pipe}` (it signals `{pipe}.full(..)`) in a loop that reaches it without `{pipe}.producer_acquire(k)`: from the second round on, the stage may still be read by its consumer, which has not released it. Take the stage first in each iteration (`let s = {pipe}.producer_acquire(k);`); only a prologue of at most {stages} loads, one per stage, may go without"
    )]
    RefillWithoutAcquire {
        /// The pipeline.
        pipe: String,
        /// Its stages.
        stages: u32,
    },
    /// A pipeline stage read in a loop that never waits for it.
    #[error(
        "stage read without wait: `{buffer}` is filled by the TMA loads of pipeline `{pipe}` ({stages} stages), and this loop, which may run more than {stages} iterations, reads a different stage of it in each, with no `{pipe}.consumer_wait(k)` in it: from the second round on, the stage read may still be loading (a wait before the loop covers only the first). Wait for each stage in the loop (`let s = {pipe}.consumer_wait(k);`) and read `{buffer}[s]`"
    )]
    StageReadWithoutWait {
        /// The pipeline.
        pipe: String,
        /// The buffer read.
        buffer: String,
        /// Its stages.
        stages: u32,
    },
    /// A straight-line prologue filling one stage twice.
    #[error(
        "prologue overfill: this TMA load fills stage {stage} of pipeline `{pipe}` ({stages} stages) a second time with no `{pipe}.producer_acquire(k)` since the first: the first fill may not be consumed yet, and stage {stage}'s full barrier would be sent two fills' bytes in one phase. A prologue fills each of the {stages} stages at most once; take every later stage with `let s = {pipe}.producer_acquire(k);`"
    )]
    PrologueOverfill {
        /// The pipeline.
        pipe: String,
        /// Its stages.
        stages: u32,
        /// The stage filled twice.
        stage: i64,
    },
}

/// Variables an expression reads.
fn vars_of(e: &Expr, out: &mut Vec<Handle<Var>>) {
    match e {
        Expr::Var(v) => out.push(*v),
        Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::AndP(a, b) => {
            vars_of(a, out);
            vars_of(b, out);
        }
        Expr::Not(a) => vars_of(a, out),
        _ => {}
    }
}

/// Variables defined or assigned anywhere in `b` (they may change from one iteration to the
/// next).
fn changed_in(b: &Block, out: &mut Vec<Handle<Var>>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { var, .. } | StmtKind::Assign { var, .. } => out.push(*var),
            StmtKind::For { var, body, .. } => {
                out.push(*var);
                changed_in(body, out);
            }
            StmtKind::Loop { body, .. } | StmtKind::Scope { body, .. } => changed_in(body, out),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                changed_in(then_body, out);
                changed_in(else_body, out);
            }
            StmtKind::Op(Op::ProducerAcquire { stage, .. } | Op::ConsumerWait { stage, .. }) => {
                out.push(*stage)
            }
            StmtKind::Op(
                Op::ClcIsCanceled { dst, .. }
                | Op::LoadScalar { dst, .. }
                | Op::WarpVote { dst, .. },
            ) => out.push(*dst),
            StmtKind::Op(Op::ClcFirstCta { dsts, .. }) => out.extend(dsts),
            _ => {}
        }
    }
}

/// Whether `e` reads nothing in `changed`.
fn invariant(e: &Expr, changed: &[Handle<Var>]) -> bool {
    let mut vs = Vec::new();
    vars_of(e, &mut vs);
    vs.iter().all(|v| !changed.contains(v))
}

impl Pass for CheckProtocol {
    fn name(&self) -> &'static str {
        "check-protocol"
    }

    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs: Diagnostics = Vec::new();
        let rules: [fn(&Kernel) -> Vec<Diagnostic>; 12] = [
            order::check,
            counters::check,
            bulk::check,
            operands::check,
            tmem::check,
            scales::check,
            counts::check,
            writers::check,
            multicast::check,
            refill::check,
            unwaited::check,
            // After `counts`: an over-count is its error, not a parity's.
            phases::check,
        ];
        for rule in rules {
            for d in rule(k) {
                // One error per token: the first rule that finds something there says it.
                if !errs.iter().any(|e| e.span == d.span) {
                    errs.push(d);
                }
            }
        }
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
