//! Descriptor encoders: pure functions from a layout or an MMA shape to the exact bits the
//! hardware reads. Nothing here does I/O or knows about the IR; the layout-application pass calls
//! these and emits the results as PTX immediates.
//!
//! - [`wgmma`]: the Hopper shared-memory matrix descriptor of `wgmma.mma_async` and the legal
//!   `wgmma` shapes.
//! - [`tcgen05`]: the Blackwell shared-memory descriptor and instruction descriptor of
//!   `tcgen05.mma`, and Tensor Memory addresses.
//! - [`tcgen05_scaled`]: the instruction descriptor of the block-scaled `kind::mxf8f6f4`.
//! - [`swizzle`]: the byte permutation that TMA applies when it writes a swizzled box to shared
//!   memory and that the MMA units undo when they read it.
//!
//! Invariants: every encoder validates its inputs and returns [`EncodeError`] instead of silently
//! truncating a field (the hardware would mask it and read a different matrix); every field table
//! cites the PTX ISA section it was taken from, and every test builds its expected value by hand
//! from that table rather than by calling the encoder's own helpers.

pub mod swizzle;
pub mod tcgen05;
pub mod tcgen05_scaled;
pub mod wgmma;

/// Why a descriptor could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A byte address or offset is not a multiple of the alignment its field requires.
    #[error("{field} = {value:#x} is not {align}-byte aligned")]
    Misaligned {
        /// The field (e.g. `"start address"`).
        field: &'static str,
        /// The value given, in bytes.
        value: u64,
        /// The alignment required, in bytes.
        align: u64,
    },
    /// A value does not fit in its bit field.
    #[error("{field} = {value:#x} does not fit its field (at most {max:#x})")]
    Overflow {
        /// The field (e.g. `"stride byte offset"`).
        field: &'static str,
        /// The value given.
        value: u64,
        /// The largest value the field can hold.
        max: u64,
    },
    /// An MMA shape (M, N, K) the instruction does not support.
    #[error("illegal MMA shape: {0}")]
    Shape(String),
    /// A combination of operand and accumulator types the instruction does not support.
    #[error("illegal MMA operand types: {0}")]
    Types(String),
    /// A legal request this encoder does not (yet) handle.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Which dimension of an MMA operand tile is contiguous in shared memory.
///
/// For A (M×K) and B (N×K, as the tensor cores see it) "K-major" means K is the contiguous
/// dimension (row-major A, column-major B in BLAS terms); "MN-major" means M (for A) or N (for B)
/// is contiguous — the "transposed" case of the `imm-trans-a/b` operands of `wgmma` and of the
/// transpose bits of the `tcgen05` instruction descriptor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Major {
    /// K is contiguous (not transposed; descriptor/immediate value 0); the default.
    #[default]
    K,
    /// M or N is contiguous (transposed; descriptor/immediate value 1).
    MN,
}

impl Major {
    /// Text spelling (`k`, `mn`), as in `smem::<T>(.., major = mn)` and the IR text form.
    pub fn name(self) -> &'static str {
        match self {
            Major::K => "k",
            Major::MN => "mn",
        }
    }
    /// Parses [`Major::name`].
    pub fn from_name(s: &str) -> Option<Major> {
        match s {
            "k" => Some(Major::K),
            "mn" => Some(Major::MN),
            _ => None,
        }
    }
    /// The transpose immediate / descriptor bit: 0 for K-major, 1 for MN-major.
    pub fn transpose_bit(self) -> u32 {
        match self {
            Major::K => 0,
            Major::MN => 1,
        }
    }
}

/// Accumulator (matrix D) element type of an MMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccType {
    /// IEEE half accumulator (only with f16 inputs).
    F16,
    /// IEEE single accumulator.
    F32,
    /// 32-bit signed integer accumulator (`tcgen05.mma.kind::i8` only).
    S32,
}

/// Checks that `value` is a multiple of `align` (a power of two).
pub(crate) fn check_aligned(
    field: &'static str,
    value: u64,
    align: u64,
) -> Result<(), EncodeError> {
    if value.is_multiple_of(align) {
        Ok(())
    } else {
        Err(EncodeError::Misaligned {
            field,
            value,
            align,
        })
    }
}

/// Checks that `value <= max`.
pub(crate) fn check_max(field: &'static str, value: u64, max: u64) -> Result<(), EncodeError> {
    if value <= max {
        Ok(())
    } else {
        Err(EncodeError::Overflow { field, value, max })
    }
}

/// `matrix-descriptor-encode(x)` of the PTX ISA (§9.7.15.5.1.2.2 for wgmma, §9.7.16.4.1 for
/// tcgen05): `(x & 0x3FFFF) >> 4`, a 14-bit field.
///
/// The hardware formula masks silently; this one refuses instead, so an address or offset that
/// is not 16-byte aligned or is 256 KiB or more is an error, not a different matrix.
pub(crate) fn matrix_descriptor_encode(
    field: &'static str,
    bytes: u32,
) -> Result<u64, EncodeError> {
    check_aligned(field, u64::from(bytes), 16)?;
    check_max(field, u64::from(bytes), 0x3FFF0)?;
    Ok(u64::from(bytes) >> 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_descriptor_encode_is_bytes_over_16() {
        assert_eq!(matrix_descriptor_encode("x", 0), Ok(0));
        assert_eq!(matrix_descriptor_encode("x", 0x400), Ok(0x40));
        // Largest encodable value: 0x3FFF0 >> 4 = 0x3FFF (all 14 bits set).
        assert_eq!(matrix_descriptor_encode("x", 0x3FFF0), Ok(0x3FFF));
    }

    #[test]
    fn matrix_descriptor_encode_refuses_what_the_hardware_would_mask() {
        assert!(matches!(
            matrix_descriptor_encode("x", 0x408),
            Err(EncodeError::Misaligned {
                value: 0x408,
                align: 16,
                ..
            })
        ));
        assert!(matches!(
            matrix_descriptor_encode("x", 0x40000),
            Err(EncodeError::Overflow {
                value: 0x40000,
                max: 0x3FFF0,
                ..
            })
        ));
    }

    #[test]
    fn errors_display_the_field() {
        let e = matrix_descriptor_encode("start address", 0x408).unwrap_err();
        assert_eq!(
            e.to_string(),
            "start address = 0x408 is not 16-byte aligned"
        );
    }
}
