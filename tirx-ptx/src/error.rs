//! `PtxError`: why a kernel could not be printed as PTX.
//!
//! The writer never panics on its input: every shape of IR it cannot print (a node that should
//! have been lowered, a handle out of range, a variable of the wrong type where PTX fixes the
//! type) is one of these values. The messages name the offending node; the span, when the node
//! has one, is part of `what` (`at span N`) so the macro can still point at the user's line.

use tirx_ir::Phase;

/// An error from the PTX writer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PtxError {
    /// The kernel is not in `Phase::Ptx`.
    #[error("kernel `{kernel}` is in phase {phase:?}; the PTX writer accepts only phase Ptx")]
    WrongPhase {
        /// Kernel name.
        kernel: String,
        /// Its phase.
        phase: Phase,
    },
    /// A node that lowering should have removed: a `Scope`, an `Op`, or an expression that is
    /// not an atom (`Expr::Imm` / `Expr::Var`).
    #[error(
        "{what} reached the PTX writer unlowered; phase Ptx allows only instructions, \
         If/For/Loop and Let/Assign of atoms"
    )]
    NotLowered {
        /// The node, with its span when it has one.
        what: String,
    },
    /// An operand of a shape that cannot stand where it is (a guard that is not a predicate
    /// register).
    #[error("{what} is not a valid operand there")]
    BadOperand {
        /// The operand and where it stood.
        what: String,
    },
    /// A variable handle outside the kernel's variable arena.
    #[error("variable %{index} is not in the kernel's variable arena")]
    UnknownVar {
        /// The handle's raw index.
        index: usize,
    },
    /// A variable whose type does not fit the place it is used in (a non-predicate as a guard
    /// or branch condition, a float loop counter, a `mov` between registers of different
    /// widths).
    #[error("{what}: variable %{index} has type {found}, expected {expected}")]
    TypeMismatch {
        /// Where it is used.
        what: String,
        /// The variable's raw index.
        index: usize,
        /// Its type.
        found: &'static str,
        /// What the place needs.
        expected: &'static str,
    },
    /// Writing into the output string failed (cannot happen for `String`; kept so the writer
    /// can use `?` on `write!`).
    #[error("formatting the PTX text failed")]
    Fmt(#[from] std::fmt::Error),
}
