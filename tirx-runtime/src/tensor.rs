//! Device tensors: a typed buffer with a shape and strides, the host transfers that make them,
//! and the type-erased [`TensorArg`] a launch takes.
//!
//! Invariants:
//! - Shapes and strides are outermost first; strides count elements and have one entry per
//!   dimension. Every element the shape and strides reach lies inside the buffer (checked when
//!   a tensor or a sub-view is made).
//! - A [`TensorArg`] borrows its tensor, so the buffer outlives the launch call; the buffer's
//!   drop frees it on the runtime's stream, after any kernel already issued there.
//! - Host transfers go through the runtime's stream and wait for it, so a download sees every
//!   kernel launched before it.

use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, ValidAsZeroBits};
use tirx_ir::abi::ElemType;

use crate::device::Runtime;
use crate::error::RuntimeError;
use crate::plan::{TensorMeta, row_major_strides};

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::bf16 {}
    impl Sealed for half::f16 {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
    impl Sealed for i8 {}
    impl Sealed for u8 {}
    impl Sealed for crate::fp8::e4m3 {}
    impl Sealed for crate::fp8::e5m2 {}
    impl Sealed for crate::scale::ue8m0 {}
    impl Sealed for crate::fp4::e2m1x2 {}
    impl Sealed for crate::fp4::ue4m3 {}
    impl Sealed for crate::f6f4::e3m2 {}
    impl Sealed for crate::f6f4::e2m3 {}
    impl Sealed for crate::f6f4::e2m1 {}
}

/// A tensor element type tirx kernels take.
///
/// Device buffers hold the elements' bits ([`Element::Bits`]): cudarc implements its
/// `DeviceRepr` for `half`'s types only behind a feature that pulls in `num-traits` and
/// `rand`, and the bits are all a copy needs.
pub trait Element: Copy + Default + Send + Sync + 'static + sealed::Sealed {
    /// The ABI's name for it.
    const ELEM: ElemType;
    /// A quiet NaN with a recognisable payload, to fill outputs a kernel should overwrite.
    const POISON_BITS: u32;
    /// The plain integer of the same size that device buffers hold.
    type Bits: Copy + Default + DeviceRepr + ValidAsZeroBits + Send + Sync + 'static;
    /// The element's bits.
    fn to_bits(self) -> Self::Bits;
    /// The element with these bits.
    fn from_bits(bits: Self::Bits) -> Self;
    /// The value with these bits (the low 16 for 16-bit types).
    fn from_raw_bits(bits: u32) -> Self;
    /// The value's bits, widened.
    fn to_raw_bits(self) -> u32;
}

macro_rules! half_element {
    ($t:ty, $elem:expr, $poison:expr) => {
        impl Element for $t {
            const ELEM: ElemType = $elem;
            const POISON_BITS: u32 = $poison;
            type Bits = u16;
            fn to_bits(self) -> u16 {
                <$t>::to_bits(self)
            }
            fn from_bits(bits: u16) -> Self {
                <$t>::from_bits(bits)
            }
            fn from_raw_bits(bits: u32) -> Self {
                <$t>::from_bits(bits as u16)
            }
            fn to_raw_bits(self) -> u32 {
                u32::from(<$t>::to_bits(self))
            }
        }
    };
}

half_element!(half::bf16, ElemType::Bf16, 0x7fde);
half_element!(half::f16, ElemType::F16, 0x7ede);

impl Element for f32 {
    const ELEM: ElemType = ElemType::F32;
    const POISON_BITS: u32 = 0x7fde_adde;
    type Bits = u32;
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
    fn from_raw_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
    fn to_raw_bits(self) -> u32 {
        f32::to_bits(self)
    }
}

macro_rules! int_element {
    ($t:ty, $elem:expr) => {
        impl Element for $t {
            const ELEM: ElemType = $elem;
            // No NaN: poison with a value far from any index a kernel writes (-559038737 as
            // i32).
            const POISON_BITS: u32 = 0xdead_beef;
            type Bits = u32;
            fn to_bits(self) -> u32 {
                self as u32
            }
            fn from_bits(bits: u32) -> Self {
                bits as $t
            }
            fn from_raw_bits(bits: u32) -> Self {
                bits as $t
            }
            fn to_raw_bits(self) -> u32 {
                self as u32
            }
        }
    };
}

int_element!(i32, ElemType::I32);
int_element!(u32, ElemType::U32);

macro_rules! int64_element {
    ($t:ty, $elem:expr) => {
        impl Element for $t {
            const ELEM: ElemType = $elem;
            // Poisoned like the 32-bit integers: `fill_bits` takes 32 bits, here zero-extended.
            const POISON_BITS: u32 = 0xdead_beef;
            type Bits = u64;
            fn to_bits(self) -> u64 {
                self as u64
            }
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
            fn from_raw_bits(bits: u32) -> Self {
                bits as $t
            }
            /// The low 32 bits (`fill_bits` and the raw-bit helpers speak 32-bit words).
            fn to_raw_bits(self) -> u32 {
                self as u32
            }
        }
    };
}

int64_element!(i64, ElemType::I64);
int64_element!(u64, ElemType::U64);

macro_rules! int8_element {
    ($t:ty, $elem:expr) => {
        impl Element for $t {
            const ELEM: ElemType = $elem;
            // No NaN: poison with 0x5a (90), a value no test's products sum to by chance.
            const POISON_BITS: u32 = 0x5a;
            type Bits = u8;
            fn to_bits(self) -> u8 {
                self as u8
            }
            fn from_bits(bits: u8) -> Self {
                bits as $t
            }
            fn from_raw_bits(bits: u32) -> Self {
                bits as u8 as $t
            }
            fn to_raw_bits(self) -> u32 {
                u32::from(self as u8)
            }
        }
    };
}

// kind::i8's operands (shared-memory MMA operands only).
int8_element!(i8, ElemType::I8);
int8_element!(u8, ElemType::U8);

macro_rules! byte_element {
    ($t:ty, $elem:expr, $poison:expr) => {
        impl Element for $t {
            const ELEM: ElemType = $elem;
            const POISON_BITS: u32 = $poison;
            type Bits = u8;
            fn to_bits(self) -> u8 {
                self.0
            }
            fn from_bits(bits: u8) -> Self {
                Self(bits)
            }
            fn from_raw_bits(bits: u32) -> Self {
                Self(bits as u8)
            }
            fn to_raw_bits(self) -> u32 {
                u32::from(self.0)
            }
        }
    };
}

// Poison: a NaN of each format (E4M3's only NaN; an E5M2 NaN with a fraction of 3).
byte_element!(crate::fp8::e4m3, ElemType::E4m3, 0x7f);
byte_element!(crate::fp8::e5m2, ElemType::E5m2, 0x7f);
// UE8M0's only NaN.
byte_element!(crate::scale::ue8m0, ElemType::Ue8m0, 0xff);
// E2M1 has no NaN: poison with ±6 in both nibbles (the largest magnitudes, far from any
// product a test expects).
byte_element!(crate::fp4::e2m1x2, ElemType::E2m1x2, 0xff);
// UE4M3's NaN.
byte_element!(crate::fp4::ue4m3, ElemType::Ue4m3, 0x7f);
// The padded sub-byte images (no NaN): every value at its largest magnitude, padding included.
byte_element!(crate::f6f4::e3m2, ElemType::E3m2, 0xff);
byte_element!(crate::f6f4::e2m3, ElemType::E2m3, 0xff);
byte_element!(crate::f6f4::e2m1, ElemType::E2m1, 0xff);

/// A tensor in device memory.
pub struct Tensor<T: Element> {
    buf: CudaSlice<T::Bits>,
    shape: Vec<usize>,
    strides: Vec<usize>,
}

impl<T: Element> std::fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("elem", &T::ELEM)
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("buffer_len", &self.buf.len())
            .finish()
    }
}

/// A tensor argument of a launch: address, element type, shape and strides, borrowed from a
/// [`Tensor`] for `'a`.
#[derive(Clone, Debug)]
pub struct TensorArg<'a> {
    meta: TensorMeta,
    /// The owning context (`CUcontext` as an address), to catch tensors of another runtime.
    ctx: usize,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> TensorArg<'a> {
    /// Wraps a raw device tensor.
    ///
    /// # Safety
    /// `meta.addr` must be device memory of `rt`'s context holding every element `meta.shape`
    /// and `meta.strides` reach, and it must stay allocated until the work using it is done.
    pub unsafe fn from_raw(rt: &Runtime, meta: TensorMeta) -> TensorArg<'a> {
        TensorArg {
            meta,
            ctx: rt.context().cu_ctx() as usize,
            _borrow: PhantomData,
        }
    }

    /// A launch argument that no runtime made, for the host-path tests and benchmarks (no
    /// GPU): `ctx` stands in for the owning context's address.
    #[cfg(test)]
    pub(crate) fn detached(meta: TensorMeta, ctx: usize) -> TensorArg<'a> {
        TensorArg {
            meta,
            ctx,
            _borrow: PhantomData,
        }
    }

    /// The plain description planning takes.
    pub fn meta(&self) -> &TensorMeta {
        &self.meta
    }

    /// The same elements with a trailing extent of 1 (stride 1): `[M, N]` as `[M, N, 1]`, so
    /// that a kernel can store a column statistic `[R, 1]` as `R` consecutive elements of a
    /// row (the transposed split-K reduce, `splitk_reduce_t`). It reaches exactly the
    /// elements this argument does.
    pub fn with_unit_dim(&self) -> TensorArg<'a> {
        let mut meta = self.meta.clone();
        meta.shape.push(1);
        meta.strides.push(1);
        TensorArg {
            meta,
            ctx: self.ctx,
            _borrow: PhantomData,
        }
    }

    /// The same elements with the two outermost dimensions merged
    /// ([`TensorMeta::merge_outer`]). A paged K/V cache `[pages, PAGE, width]` is read as one
    /// matrix of `pages·PAGE` rows so (`attention::paged`). It reaches exactly the elements
    /// this argument does.
    pub fn merge_outer(&self) -> Option<TensorArg<'a>> {
        Some(TensorArg {
            meta: self.meta.merge_outer()?,
            ctx: self.ctx,
            _borrow: PhantomData,
        })
    }

    /// Whether the tensor belongs to `rt`'s context.
    pub(crate) fn belongs_to(&self, rt: &Runtime) -> bool {
        self.ctx == rt.context().cu_ctx() as usize
    }

    /// The owning context's address (part of a launch's cache key).
    pub(crate) fn context_key(&self) -> usize {
        self.ctx
    }
}

/// Elements a tensor of `shape` and `strides` reaches (0 when a dimension is empty), or `None`
/// on overflow.
fn extent(shape: &[usize], strides: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().zip(strides).try_fold(1usize, |acc, (&n, &s)| {
        acc.checked_add((n - 1).checked_mul(s)?)
    })
}

fn check_layout(
    what: &str,
    shape: &[usize],
    strides: &[usize],
    have: usize,
) -> Result<(), RuntimeError> {
    if shape.len() != strides.len() {
        return Err(RuntimeError::LayoutMismatch {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
        });
    }
    let need = extent(shape, strides).unwrap_or(usize::MAX);
    if need > have {
        return Err(RuntimeError::BufferTooSmall {
            what: what.to_string(),
            need,
            have,
        });
    }
    Ok(())
}

impl<T: Element> Tensor<T> {
    /// Extents, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements, outermost first.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Number of logical elements (the product of the shape).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The underlying buffer (the elements' bits).
    pub fn buffer(&self) -> &CudaSlice<T::Bits> {
        &self.buf
    }

    /// The underlying buffer, mutably (for copies and fills outside tirx kernels).
    pub fn buffer_mut(&mut self) -> &mut CudaSlice<T::Bits> {
        &mut self.buf
    }

    fn addr(&self) -> u64 {
        let (ptr, _sync) = self.buf.device_ptr(self.buf.stream());
        ptr
    }

    /// The tensor as a launch argument.
    pub fn view(&self) -> TensorArg<'_> {
        let meta = TensorMeta {
            elem: T::ELEM,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            addr: self.addr(),
        };
        TensorArg {
            meta,
            ctx: self.buf.context().cu_ctx() as usize,
            _borrow: PhantomData,
        }
    }

    /// A launch argument for part of the buffer: `shape` and `strides` starting `offset`
    /// elements in (used for sub-tensors, and to test misaligned bases).
    pub fn subview(
        &self,
        offset: usize,
        shape: &[usize],
        strides: &[usize],
    ) -> Result<TensorArg<'_>, RuntimeError> {
        let have = self.buf.len().saturating_sub(offset);
        check_layout("subview", shape, strides, have)?;
        let meta = TensorMeta {
            elem: T::ELEM,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            addr: self.addr() + (offset * std::mem::size_of::<T>()) as u64,
        };
        Ok(TensorArg {
            meta,
            ctx: self.buf.context().cu_ctx() as usize,
            _borrow: PhantomData,
        })
    }
}

impl Runtime {
    /// A contiguous row-major tensor of zeros.
    pub fn zeros<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>, RuntimeError> {
        let len = shape.iter().product::<usize>();
        let buf = self.stream().alloc_zeros::<T::Bits>(len.max(1))?;
        Ok(Tensor {
            buf,
            shape: shape.to_vec(),
            strides: row_major_strides(shape),
        })
    }

    /// A contiguous row-major tensor holding `host` (`host.len()` must be the shape's product).
    pub fn upload<T: Element>(
        &self,
        host: &[T],
        shape: &[usize],
    ) -> Result<Tensor<T>, RuntimeError> {
        let numel = shape.iter().product::<usize>();
        if host.len() != numel {
            return Err(RuntimeError::BufferTooSmall {
                what: format!("upload of shape {shape:?} (needs exactly the shape's elements)"),
                need: numel,
                have: host.len(),
            });
        }
        self.from_slice_with_strides(host, shape, &row_major_strides(shape))
    }

    /// A tensor whose buffer is `host` verbatim, read with `shape` and `strides` (elements):
    /// e.g. rows padded past the shape's last extent.
    pub fn from_slice_with_strides<T: Element>(
        &self,
        host: &[T],
        shape: &[usize],
        strides: &[usize],
    ) -> Result<Tensor<T>, RuntimeError> {
        check_layout("from_slice_with_strides", shape, strides, host.len())?;
        let bits: Vec<T::Bits> = host.iter().map(|&x| x.to_bits()).collect();
        let buf = if bits.is_empty() {
            self.stream().alloc_zeros::<T::Bits>(1)?
        } else {
            self.stream().clone_htod(&bits)?
        };
        Ok(Tensor {
            buf,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
        })
    }

    /// The tensor's logical elements, row-major (padding left out). Waits for the stream.
    pub fn download<T: Element>(&self, t: &Tensor<T>) -> Result<Vec<T>, RuntimeError> {
        let raw: Vec<T> = self
            .stream()
            .clone_dtoh(&t.buf)?
            .into_iter()
            .map(T::from_bits)
            .collect();
        if t.strides == row_major_strides(&t.shape) {
            let mut raw = raw;
            raw.truncate(t.numel());
            return Ok(raw);
        }
        Ok(gather(&raw, &t.shape, &t.strides))
    }

    /// Sets every element of the buffer (padding included) to `value`.
    pub fn fill<T: Element>(&self, t: &mut Tensor<T>, value: T) -> Result<(), RuntimeError> {
        let host = vec![value.to_bits(); t.buf.len()];
        self.stream().memcpy_htod(&host, &mut t.buf)?;
        Ok(())
    }

    /// Sets every element of the buffer to the bit pattern `bits` (the low 16 bits for 16-bit
    /// types).
    pub fn fill_bits<T: Element>(&self, t: &mut Tensor<T>, bits: u32) -> Result<(), RuntimeError> {
        self.fill(t, T::from_raw_bits(bits))
    }

    /// Fills the tensor with `T::POISON_BITS`, so elements a kernel fails to write stand out.
    pub fn poison<T: Element>(&self, t: &mut Tensor<T>) -> Result<(), RuntimeError> {
        self.fill_bits(t, T::POISON_BITS)
    }
}

/// The elements of a strided tensor in row-major order.
fn gather<T: Copy>(raw: &[T], shape: &[usize], strides: &[usize]) -> Vec<T> {
    let numel = shape.iter().product::<usize>();
    let mut out = Vec::with_capacity(numel);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..numel {
        let offset: usize = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        out.push(raw[offset]);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extent_counts_reachable_elements() {
        assert_eq!(extent(&[4, 6], &[8, 1]), Some(3 * 8 + 5 + 1));
        assert_eq!(extent(&[4, 0], &[8, 1]), Some(0));
        assert_eq!(extent(&[], &[]), Some(1));
        assert_eq!(extent(&[usize::MAX, 3], &[4, 1]), None);
    }

    #[test]
    fn layout_checks() {
        check_layout("t", &[4, 6], &[8, 1], 30).unwrap();
        let err = check_layout("t", &[4, 6], &[8, 1], 29).unwrap_err();
        assert!(matches!(
            err,
            RuntimeError::BufferTooSmall {
                need: 30,
                have: 29,
                ..
            }
        ));
        let err = check_layout("t", &[4, 6], &[1], 100).unwrap_err();
        assert!(matches!(err, RuntimeError::LayoutMismatch { .. }));
    }

    #[test]
    fn gather_drops_padding() {
        // 2 x 3 with rows padded to 4.
        let raw = [0, 1, 2, 99, 10, 11, 12, 99];
        assert_eq!(gather(&raw, &[2, 3], &[4, 1]), vec![0, 1, 2, 10, 11, 12]);
        // A transposed view.
        assert_eq!(
            gather(&[0, 1, 2, 3, 4, 5], &[3, 2], &[1, 3]),
            vec![0, 3, 1, 4, 2, 5]
        );
    }

    #[test]
    fn element_bits_round_trip() {
        let b = half::bf16::from_raw_bits(half::bf16::POISON_BITS);
        assert!(b.is_nan());
        assert_eq!(b.to_raw_bits(), 0x7fde);
        assert!(half::f16::from_raw_bits(half::f16::POISON_BITS).is_nan());
        assert!(f32::from_raw_bits(f32::POISON_BITS).is_nan());
        assert_eq!(<f32 as Element>::ELEM, ElemType::F32);
        let x = half::bf16::from_f32(1.5);
        assert_eq!(<half::bf16 as Element>::from_bits(Element::to_bits(x)), x);
    }
}
