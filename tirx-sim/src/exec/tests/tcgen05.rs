//! tcgen05: the instruction and shared-memory descriptors against the ISA's field tables
//! (PTX ISA §9.7.16), and tensor-memory allocation errors.

use super::*;

#[test]
fn instruction_descriptor_fields() {
    // tirx's descriptor of the Blackwell GEMM: f32 D, bf16 A and B, K-major, N 256, M 128.
    let d = decode_idesc(0x0840_0490).unwrap();
    assert_eq!(
        d,
        InstrDesc {
            m: 128,
            n: 256,
            f16: false,
            neg_a: false,
            neg_b: false,
            mn_a: false,
            mn_b: false
        }
    );
    // f16 inputs, negated B, MN-major B, N 64, M 64.
    let d = decode_idesc((1 << 4) | (1 << 14) | (1 << 16) | (8 << 17) | (4 << 24)).unwrap();
    assert_eq!(
        (d.m, d.n, d.f16, d.neg_b, d.mn_b),
        (64, 64, true, true, true)
    );
    assert!(
        decode_idesc(0x0840_0490 | 1 << 2)
            .unwrap_err()
            .contains("sparsity")
    );
    assert!(
        decode_idesc(0x0840_0480)
            .unwrap_err()
            .contains("f32 accumulator")
    );
}

#[test]
fn shared_memory_descriptor_fields() {
    let d = decode_smem_desc(0x4000_4040_0001_0000 | (0x2400 >> 4)).unwrap();
    assert_eq!(
        (d.start, d.lbo, d.sbo, d.base_offset, d.swizzle),
        (0x2400, 16, 1024, 0, TmaSwizzle::B128)
    );
    assert_eq!(
        decode_smem_desc((4 << 61) | (1 << 46)).unwrap().swizzle,
        TmaSwizzle::B64
    );
    assert_eq!(
        decode_smem_desc((6 << 61) | (1 << 46)).unwrap().swizzle,
        TmaSwizzle::B32
    );
    assert!(
        decode_smem_desc((1 << 61) | (1 << 46)).is_err(),
        "128B with 32-byte atoms"
    );
    assert!(
        decode_smem_desc(2 << 61).is_err(),
        "bits 46-48 must be 0b001"
    );
}

fn tmem_kernel(body: &str) -> Result<Vec<u8>, SimError> {
    let body = format!(
        "{PROLOGUE}\tmov.u32 %r1, smem;\n\tsetp.lt.u32 %p0, %r0, 32;\n\t@!%p0 bra $L_end;\n\
         {body}$L_end:\n\tret;\n"
    );
    run_out(&module(OUT, &body), &one_cta(64, 64), 256, 0)
}

#[test]
fn tensor_memory_allocation_is_checked() {
    let alloc =
        |n: u32| format!("\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {n};\n");
    let dealloc = "\tld.shared.u32 %r2, [%r1];\n\
                   \ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 256;\n";
    tmem_kernel(&format!("{}{dealloc}", alloc(256))).expect("balanced");
    let e = tmem_kernel(&format!("{}{}", alloc(512), alloc(32))).unwrap_err();
    assert!(e.to_string().contains("over-allocation"), "{e}");
    let e = tmem_kernel(&alloc(256)).unwrap_err();
    assert!(
        e.to_string().contains("tensor memory still allocated"),
        "{e}"
    );
    let e = tmem_kernel(&format!("{}{dealloc}{dealloc}", alloc(256))).unwrap_err();
    assert!(e.to_string().contains("matches no allocation"), "{e}");
    let e = tmem_kernel(&alloc(48)).unwrap_err();
    assert!(e.to_string().contains("power of two"), "{e}");
}
