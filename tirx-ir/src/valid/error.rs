//! The verifier's errors: a structural invariant a kernel breaks. After the front end they
//! are the user's (a name declared twice); after a pass they are compiler bugs, wrapped in
//! `PassError::InvalidAfter` by the pipeline.

/// A structural invariant a kernel breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// Two buffers or barriers share a name.
    #[error("`{name}` is declared twice")]
    DeclaredTwice {
        /// The name.
        name: String,
    },
    /// A buffer's layout has a shape and a stride of different ranks.
    #[error("buffer `{buffer}`: shape and stride ranks differ")]
    StrideRank {
        /// The buffer.
        buffer: String,
    },
    /// A pipeline's full or empty barrier is not in the kernel.
    #[error("pipeline `{pipeline}` names a missing barrier")]
    PipelineBarrier {
        /// The pipeline.
        pipeline: String,
    },
    /// A variable handle past the kernel's variables.
    #[error("variable %{index} out of range")]
    Var {
        /// Its arena index.
        index: usize,
    },
    /// An instruction operand names a register past the kernel's variables.
    #[error("register %{index} out of range")]
    Register {
        /// Its arena index.
        index: usize,
    },
    /// A buffer handle past the kernel's buffers.
    #[error("buffer #{index} out of range")]
    Buffer {
        /// Its arena index.
        index: usize,
    },
    /// A barrier handle past the kernel's barriers.
    #[error("barrier #{index} out of range")]
    Barrier {
        /// Its arena index.
        index: usize,
    },
    /// A pipeline handle past the kernel's pipelines.
    #[error("pipeline #{index} out of range")]
    Pipeline {
        /// Its arena index.
        index: usize,
    },
    /// A global tile of a tensor the signature does not have.
    #[error("unknown tensor `{tensor}`")]
    UnknownTensor {
        /// The tensor's name.
        tensor: String,
    },
    /// A `Scope` statement in a `Ptx`-phase kernel.
    #[error("scope left in the ptx phase")]
    ScopeInPtx,
    /// An `Op` statement in a `Ptx`-phase kernel.
    #[error("op {op} left in the ptx phase")]
    OpInPtx {
        /// The op, as `Debug` prints it.
        op: String,
    },
    /// A tile op in a `Thread`-phase kernel.
    #[error("tile op left in the thread phase: {op}")]
    TileOpInThread {
        /// The op, as `Debug` prints it.
        op: String,
    },
    /// A compound expression in a `Ptx`-phase kernel.
    #[error("non-atomic expression in the ptx phase: {expr}")]
    NonAtomic {
        /// The expression, as `Debug` prints it.
        expr: String,
    },
}
