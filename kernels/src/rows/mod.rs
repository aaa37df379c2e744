//! Row ops: softmax, RMSNorm and LayerNorm over the rows of a row-major `rows × cols` bf16
//! matrix, one output row per input row. This module names the problem ([`RowOp`],
//! [`RowProblem`]), counts its bytes the way the peers do, and holds the host entry [`run`];
//! [`mod@reference`] is the f64 CPU reference and the checker.
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

pub mod reference;

use half::bf16;
use tirx::{Runtime, RuntimeError, Tensor};

/// The default ε of RMSNorm and LayerNorm: QuACK's default, and what the peers script passes
/// to torch and Liger as well, so every side computes the same thing.
pub const DEFAULT_EPS: f32 = 1e-6;

/// A row op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowOp {
    /// Softmax along each row, max-subtracted.
    Softmax,
    /// Root-mean-square normalization, scaled by `w`.
    RmsNorm,
    /// Layer normalization (biased variance), scaled by `w` and shifted by `b`.
    LayerNorm,
}

impl RowOp {
    /// Every op, in the order the bench measures them.
    pub const ALL: [RowOp; 3] = [RowOp::Softmax, RowOp::RmsNorm, RowOp::LayerNorm];

    /// The op's name on the command line and in JSON files: `softmax`, `rmsnorm`, `layernorm`.
    pub fn name(self) -> &'static str {
        match self {
            RowOp::Softmax => "softmax",
            RowOp::RmsNorm => "rmsnorm",
            RowOp::LayerNorm => "layernorm",
        }
    }

    /// The op named `s` ([`RowOp::name`]), if any.
    pub fn parse(s: &str) -> Option<RowOp> {
        RowOp::ALL.into_iter().find(|op| op.name() == s)
    }

    /// Whether the op takes the weight vector `w`.
    pub fn takes_weight(self) -> bool {
        !matches!(self, RowOp::Softmax)
    }

    /// Whether the op takes the bias vector `b`.
    pub fn takes_bias(self) -> bool {
        matches!(self, RowOp::LayerNorm)
    }
}

impl std::fmt::Display for RowOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
/// and bias `b` (LayerNorm) of `p.cols` elements each; x and y `[p.rows, p.cols]`.
///
/// Today no row kernel is shipped, and this returns [`RuntimeError::NoKernelFits`] for every
/// problem, without touching `y`; the bench reports the op as refused and still measures the
/// copy roof and reads the peers.
// replaced by the row-kernel dispatch
pub fn run(
    _rt: &Runtime,
    p: &RowProblem,
    _x: &Tensor<bf16>,
    _w: Option<&Tensor<bf16>>,
    _b: Option<&Tensor<bf16>>,
    _y: &mut Tensor<bf16>,
) -> Result<(), RuntimeError> {
    Err(no_row_kernel(p))
}

/// The error of the stand-in [`run`].
fn no_row_kernel(p: &RowProblem) -> RuntimeError {
    RuntimeError::NoKernelFits {
        problem: p.to_string(),
        table: "  (none: no row kernel is shipped yet)\n".into(),
    }
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

    #[test]
    fn the_stand_in_refuses_with_a_typed_error() {
        let e = no_row_kernel(&RowProblem::new(RowOp::RmsNorm, 8, 16));
        assert!(matches!(e, RuntimeError::NoKernelFits { .. }));
        let text = e.to_string();
        assert!(text.contains("no kernel fits rmsnorm 8x16 bf16"), "{text}");
    }
}
