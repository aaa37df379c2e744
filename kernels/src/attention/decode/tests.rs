//! Unit tests of the decode host side: the shapes' checks, the split of the keys, the
//! workspace's size and the tile choice.

use super::*;

fn dims(b: usize, s: usize, sk: usize, hq: usize, hk: usize, d: usize) -> Dims {
    Dims {
        b,
        s,
        sk,
        hq,
        hk,
        d,
        dv: d,
    }
}

fn shapes(d: &Dims) -> [Vec<usize>; 5] {
    [
        vec![d.b, d.s, d.hq * d.d],
        vec![d.b, d.sk, d.hk * d.d],
        vec![d.b, d.sk, d.hk * d.d],
        vec![d.b, d.s, d.hq * d.d],
        vec![d.b * d.hq, d.s, 1],
    ]
}

fn refs(s: &[Vec<usize>; 5]) -> [&[usize]; 5] {
    s.each_ref().map(Vec::as_slice)
}

#[test]
fn shapes_outside_the_decode_layout_are_typed_errors() {
    let ok = dims(2, 3, 77, 8, 2, 128);
    let s = shapes(&ok);
    assert_eq!(dims_of(refs(&s), 128).unwrap(), ok);
    let with = |i: usize, v: Vec<usize>| {
        let mut s = shapes(&ok);
        s[i] = v;
        dims_of(refs(&s), 128).unwrap_err()
    };
    assert!(matches!(with(0, vec![2, 17, 1024]), DecodeError::Shape(_)));
    assert!(matches!(with(4, vec![16, 4, 1]), DecodeError::Shape(_)));
    assert!(matches!(with(1, vec![2, 77, 384]), DecodeError::Shape(_)));
    let many = dims(1, 17, 5, 1, 1, 64);
    assert!(matches!(
        dims_of(refs(&shapes(&many)), 64).unwrap_err(),
        DecodeError::Queries { sq: 17 }
    ));
    let none = dims(1, 1, 0, 1, 1, 64);
    assert!(matches!(
        dims_of(refs(&shapes(&none)), 64).unwrap_err(),
        DecodeError::NoKeys
    ));
    let text = dims_of(refs(&shapes(&many)), 64).unwrap_err().to_string();
    assert!(text.contains("1…16 query positions"), "{text}");
}

#[test]
fn the_split_fills_the_sms_once_and_leaves_no_chunk_empty() {
    // One sequence, 32 heads, 132 SMs: 5 chunks (160 CTAs) of 8k keys in blocks of 128.
    let one = dims(1, 1, 8192, 32, 8, 128);
    let s = Split::plan(&one, 128, 132);
    assert_eq!((s.splits, s.chunk_blocks), (5, 13));
    assert!(s.splits * s.chunk_blocks >= 64 && (s.splits - 1) * s.chunk_blocks < 64);
    // 64 sequences of 32 heads fill the GPU alone: no split, no workspace.
    let full = dims(64, 1, 8192, 32, 8, 128);
    assert_eq!(Split::plan(&full, 128, 132).splits, 1);
    assert_eq!(Split::plan(&full, 128, 132).workspace_len(&full), 0);
    // Never more chunks than key blocks; 77 keys are one block.
    let short = dims(1, 3, 77, 1, 1, 64);
    assert_eq!(Split::plan(&short, 128, 132).splits, 1);
    // 1000 keys in 8 blocks asked for 5 chunks: 4 of 2 (5 of 2 would leave one empty).
    let mid = dims(1, 16, 1000, 4, 1, 64);
    let s = Split::with(&mid, 128, 5);
    assert_eq!((s.splits, s.chunk_blocks), (4, 2));
    assert_eq!(s.workspace_len(&mid), 4 * 16 * 4 * 65);
}

#[test]
fn a_small_workspace_or_an_impossible_split_is_refused() {
    let d = dims(1, 2, 1000, 4, 4, 64);
    let s = shapes(&d);
    let plan = Plan::new(refs(&s), 64, (false, ElemType::Bf16), 132, Some(3)).unwrap();
    assert_eq!(plan.split.splits, 3);
    assert!(plan.tiles.decode.elem_of("o") == Some(ElemType::F32));
    let need = plan.split.workspace_len(&d);
    assert!(matches!(
        plan.parts(need - 1).unwrap_err(),
        DecodeError::Workspace { have, splits: 3, .. } if have == need - 1
    ));
    assert!(plan.parts(need).is_ok());
    assert!(matches!(
        Plan::new(refs(&s), 64, (false, ElemType::Bf16), 132, Some(9)).unwrap_err(),
        DecodeError::Splits {
            splits: 9,
            blocks: 8
        }
    ));
    let one = Plan::new(refs(&s), 64, (true, ElemType::F16), 132, Some(1)).unwrap();
    assert_eq!(one.tiles.decode.elem_of("o"), Some(ElemType::F16));
    assert_eq!(one.tiles.decode.int("CAUSAL"), Some(1));
    assert!(matches!(
        tiles_for(96, false, ElemType::Bf16, false).unwrap_err(),
        DecodeError::NoTile { d: 96, .. }
    ));
}
