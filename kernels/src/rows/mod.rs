//! Row ops: softmax, RMSNorm and LayerNorm over the rows of a row-major `rows × cols` bf16
//! matrix, one output row per input row. This module names the problem ([`RowOp`],
//! [`RowProblem`]), counts its bytes the way the peers do, and holds the host entry [`run`];
//! [`mod@reference`] is the f64 CPU reference and the checker; [`quant`] the reference of the
//! FP8 quantisers (`row_kernels::quant`).
//!
//! What each op computes, per row `x` of `cols` elements (f32 accumulation on the GPU):
//! - softmax: `y = exp(x − max x) / Σ exp(x − max x)`;
//! - RMSNorm: `y = x · rsqrt(mean(x²) + eps) · w`;
//! - LayerNorm: `y = (x − mean x) · rsqrt(var x + eps) · w + b`, the variance biased (÷ cols).
//!
//! `w` and `b` are bf16 vectors of `cols` elements shared by every row; softmax takes neither.
//!
//! Invariants:
//! - x and y are contiguous row-major `[rows, cols]` bf16 tensors of the same shape.
//! - [`RowProblem::bytes`] counts only x read and y written, so GB/s compare with QuACK's and
//!   with `../shared/ANCHORS.md`.

pub mod quant;
pub mod reference;

use half::bf16;
use tirx::{Runtime, RuntimeError, Tensor};

/// The default ε of RMSNorm and LayerNorm: QuACK's default, and what the peers script passes
/// to torch and Liger as well, so every side computes the same thing.
pub const DEFAULT_EPS: f32 = 1e-6;

/// A row op: the IR's problem kind (`solves = softmax | rmsnorm | layernorm`), so the
/// kernels, the dispatch and the bench name the same thing.
pub use tirx::problem::RowOp;

/// One row op on one shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowProblem {
    /// What is computed.
    pub op: RowOp,
    /// Rows of x and y.
    pub rows: usize,
    /// Columns of x and y (the length each reduction runs over).
    pub cols: usize,
    /// ε of RMSNorm and LayerNorm (softmax ignores it).
    pub eps: f32,
}

impl RowProblem {
    /// `op` on `rows × cols` with [`DEFAULT_EPS`].
    pub fn new(op: RowOp, rows: usize, cols: usize) -> RowProblem {
        RowProblem {
            op,
            rows,
            cols,
            eps: DEFAULT_EPS,
        }
    }

    /// Bytes moved, counted as QuACK and `../shared/ANCHORS.md` count them: x read once and y
    /// written once, both bf16, `2 · rows · cols · 2`. The weight and bias vectors (`cols`
    /// elements each, read by every row but from L2) are negligible and not counted.
    pub fn bytes(&self) -> usize {
        2 * self.rows * self.cols * 2
    }

    /// GB/s (10⁹ bytes per second) of a run taking `ms` milliseconds.
    pub fn gbps(&self, ms: f64) -> f64 {
        self.bytes() as f64 / (ms * 1e-3) / 1e9
    }

    /// `rows×cols` as labels write it (`16384x4096`).
    pub fn shape_label(&self) -> String {
        format!("{}x{}", self.rows, self.cols)
    }
}

impl std::fmt::Display for RowProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}x{} bf16", self.op, self.rows, self.cols)?;
        if self.op.takes_weight() {
            write!(f, ", eps {:e}", self.eps)?;
        }
        Ok(())
    }
}

/// Computes `p` on the GPU: `y = op(x)` row by row, with the weight `w` (RMSNorm, LayerNorm)
/// and bias `b` (LayerNorm) of `p.cols` elements each; x and y `[p.rows, p.cols]`. The kernel
/// and config are the host-side choice of [`crate::row_kernels::host::choose`]; a row longer
/// than every shipped kernel holds, or a missing vector, is a typed error before any launch.
pub fn run(
    rt: &Runtime,
    p: &RowProblem,
    x: &Tensor<bf16>,
    w: Option<&Tensor<bf16>>,
    b: Option<&Tensor<bf16>>,
    y: &mut Tensor<bf16>,
) -> Result<(), RuntimeError> {
    let args = crate::row_kernels::host::RowArgs {
        x,
        w,
        b,
        eps: p.eps,
    };
    crate::row_kernels::host::run(rt, p.op, &args, y).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_nothing_else_parses() {
        for op in RowOp::ALL {
            assert_eq!(RowOp::parse(op.name()), Some(op));
            assert_eq!(op.to_string(), op.name());
        }
        assert_eq!(RowOp::parse("rmsnorm"), Some(RowOp::RmsNorm));
        for bad in ["", "Softmax", "rms_norm", "layer_norm", "copy"] {
            assert_eq!(RowOp::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn operands_follow_the_op() {
        assert!(!RowOp::Softmax.takes_weight() && !RowOp::Softmax.takes_bias());
        assert!(RowOp::RmsNorm.takes_weight() && !RowOp::RmsNorm.takes_bias());
        assert!(RowOp::LayerNorm.takes_weight() && RowOp::LayerNorm.takes_bias());
    }

    #[test]
    fn bytes_count_x_read_and_y_written_in_bf16() {
        let p = RowProblem::new(RowOp::Softmax, 16384, 4096);
        assert_eq!(p.bytes(), 268_435_456);
        // ANCHORS.md: QuACK's softmax at 16384x4096 moves 3224 GB/s, so about 83 us.
        assert!((p.gbps(p.bytes() as f64 / 3224e6) - 3224.0).abs() < 1e-9);
        assert_eq!(p.shape_label(), "16384x4096");
        let ln = RowProblem::new(RowOp::LayerNorm, 2, 3);
        assert_eq!(ln.bytes(), 24);
        assert_eq!(ln.to_string(), "layernorm 2x3 bf16, eps 1e-6");
        assert_eq!(p.to_string(), "softmax 16384x4096 bf16");
    }
}
