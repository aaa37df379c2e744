//! The plumbing the emulator tests of small test kernels share (integer tiles, 64-bit
//! integers, index reductions, gathers, atomics): a slice as the little-endian bytes of its
//! 32- or 64-bit words, a tensor's words read back, outputs poisoned before a launch, a launch
//! with tensor arguments only, and the IR text round trip of a test kernel.
//!
//! Invariant: nothing here decides what a test checks; each helper is the one line of
//! plumbing the tests wrote alike, so a failure points at the test, not at this file.

use tirx::KernelArtifact;
use tirx::runtime::{ElemType, TensorMeta};
use tirx_kernels::simulate::{self, put};
use tirx_sim::Device;

use super::sim_exec::EMULATED;

/// The little-endian bytes of `v`'s 32-bit words, `bits` giving an element's word.
pub(crate) fn words32<T: Copy>(v: &[T], bits: impl Fn(T) -> u32) -> Vec<u8> {
    v.iter().flat_map(|&x| bits(x).to_le_bytes()).collect()
}

/// The little-endian bytes of `v`'s 64-bit words, `bits` giving an element's word.
pub(crate) fn words64<T: Copy>(v: &[T], bits: impl Fn(T) -> u64) -> Vec<u8> {
    v.iter().flat_map(|&x| bits(x).to_le_bytes()).collect()
}

/// The first `n` 32-bit words of tensor `t`.
pub(crate) fn read32(dev: &Device, t: &TensorMeta, n: usize) -> Vec<u32> {
    dev.read(t.addr, n * 4)
        .expect("the tensor's allocation")
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

/// The first `n` 64-bit words of tensor `t`.
pub(crate) fn read64(dev: &Device, t: &TensorMeta, n: usize) -> Vec<u64> {
    dev.read(t.addr, n * 8)
        .expect("the tensor's allocation")
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// An output tensor of `elem` and `shape`, every byte 0xa5, so that an element the kernel
/// does not write shows.
pub(crate) fn poisoned(dev: &mut Device, elem: ElemType, shape: &[usize]) -> TensorMeta {
    let bytes = shape.iter().product::<usize>() * elem.bytes() as usize;
    put(dev, &vec![0xa5; bytes], elem, shape)
}

/// Launches `art` on `tensors` (no scalar arguments) in the emulator under schedule seed 3,
/// the tests' usual one; outputs are poisoned by the caller.
pub(crate) fn launch(art: &KernelArtifact, dev: &mut Device, tensors: &[TensorMeta]) {
    launch_seeded(art, dev, tensors, 3);
}

/// [`launch`] with the warps scheduled by `seed`.
pub(crate) fn launch_seeded(
    art: &KernelArtifact,
    dev: &mut Device,
    tensors: &[TensorMeta],
    seed: u64,
) {
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        dev,
        (tensors, &[]),
        seed,
        &EMULATED,
    )
    .expect("the kernel runs");
}

/// `art`'s IR text parses back to the same text and recompiles to the same PTX; with
/// `every_pass`, each pass's output does too.
pub(crate) fn assert_ir_round_trips(art: &KernelArtifact, every_pass: bool) {
    let m = tirx_ir::parse::parse_module(art.ir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.to_string(), art.ir);
    let kernel = m.kernels.into_iter().next().expect("one kernel");
    let (lowered, snaps) = tirx_ir::passes::run_pipeline(kernel, every_pass).expect("compiles");
    for s in &snaps {
        let again = tirx_ir::parse::parse_module(&s.text)
            .unwrap_or_else(|e| panic!("after {}: {e}", s.pass));
        assert_eq!(again.to_string(), s.text, "after {}", s.pass);
    }
    assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
}
