//! wgmma: the matrix-descriptor fields and the K-major canonical layouts (PTX ISA
//! §9.7.15), checked against the field table and the layout formulas written out here.

use super::super::wgmma::MatrixDesc;
use super::*;

#[test]
fn descriptor_fields_decode_from_the_isa_table() {
    // tirx's constant for a 128B-swizzled K-major tile: SBO 1024 bytes, LBO 0, no base offset.
    let d = MatrixDesc::decode(0x4000_0040_0000_0000 | (0x1400 >> 4));
    assert_eq!(
        d,
        MatrixDesc {
            start: 0x1400,
            lbo: 0,
            sbo: 1024,
            base_offset: 0,
            swizzle: TmaSwizzle::B128
        }
    );
    let d = MatrixDesc::decode((3u64 << 62) | (5 << 49) | (0x20 << 32) | (0x8 << 16) | 0x3fff);
    assert_eq!(
        (d.start, d.lbo, d.sbo, d.base_offset, d.swizzle),
        (0x3fff << 4, 128, 512, 5, TmaSwizzle::B32)
    );
    assert_eq!(MatrixDesc::decode(2 << 62).swizzle, TmaSwizzle::B64);
    assert_eq!(MatrixDesc::decode(0).swizzle, TmaSwizzle::None);
}

#[test]
fn k_major_layouts_place_core_matrices_and_swizzled_rows() {
    // No swizzle: 8×16-byte core matrices, LBO apart along K, SBO apart along M/N.
    let d = MatrixDesc {
        start: 0x1000,
        lbo: 128,
        sbo: 256,
        base_offset: 0,
        swizzle: TmaSwizzle::None,
    };
    assert_eq!(d.k_major(0, 0), 0x1000);
    assert_eq!(d.k_major(1, 0), 0x1000 + 16);
    assert_eq!(d.k_major(0, 7), 0x1000 + 14);
    assert_eq!(d.k_major(0, 8), 0x1000 + 128);
    assert_eq!(d.k_major(9, 9), 0x1000 + 256 + 128 + 16 + 2);
    // 128B swizzle: 128-byte rows, 8-row atoms SBO apart, chunks XOR the row in the atom.
    let s = MatrixDesc {
        start: 0x2000,
        lbo: 0,
        sbo: 1024,
        base_offset: 0,
        swizzle: TmaSwizzle::B128,
    };
    assert_eq!(s.k_major(0, 0), 0x2000);
    assert_eq!(s.k_major(1, 0), 0x2000 + 128 + 16);
    assert_eq!(s.k_major(3, 9), 0x2000 + 3 * 128 + ((1 ^ 3) * 16) + 2);
    assert_eq!(s.k_major(8, 0), 0x2000 + 1024);
}

#[test]
fn mn_major_swizzled_rows_hold_consecutive_mn_elements_of_one_k() {
    // tirx's MN-major B descriptor: 128B swizzle, LBO 8192 (64-element MN atoms), SBO 1024.
    let d = MatrixDesc {
        start: 0x4000,
        lbo: 8192,
        sbo: 1024,
        base_offset: 0,
        swizzle: TmaSwizzle::B128,
    };
    assert_eq!(d.mn_major(0, 0), Some(0x4000));
    assert_eq!(d.mn_major(1, 0), Some(0x4000 + 2));
    // k = 1 is the next 128-byte row, its chunks XOR 1.
    assert_eq!(d.mn_major(0, 1), Some(0x4000 + 128 + 16));
    assert_eq!(d.mn_major(64, 0), Some(0x4000 + 8192));
    assert_eq!(d.mn_major(0, 8), Some(0x4000 + 1024));
    let plain = MatrixDesc {
        swizzle: TmaSwizzle::None,
        ..d
    };
    assert_eq!(
        plain.mn_major(0, 0),
        None,
        "not supported without a swizzle"
    );
}
