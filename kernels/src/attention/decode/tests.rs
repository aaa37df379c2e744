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
    // One sequence, 32 heads, 132 SMs, 8k keys in blocks of 128: 4 chunks (128 CTAs, 97% of
    // one wave), not 5 (160: a wave and a fifth).
    let one = dims(1, 1, 8192, 32, 8, 128);
    let s = Split::plan(&one, 128, 132, 32);
    assert_eq!((s.splits, s.chunk_blocks), (4, 16));
    // 100 CTAs fill 76% of the SMs; in 5 chunks, 500 CTAs fill 3.79 of 4 waves (95%, within
    // 85% of the best, 99%); 2…4 leave the last wave 76% full.
    let s = Split::plan(&one, 128, 132, 100);
    assert_eq!((s.splits, s.chunk_blocks), (5, 13));
    // 106 CTAs (80% of the SMs) are not split.
    assert_eq!(Split::plan(&one, 128, 132, 106).splits, 1);
    // 64 sequences of 32 heads fill the GPU alone: no split, no workspace.
    let full = dims(64, 1, 8192, 32, 8, 128);
    assert_eq!(Split::plan(&full, 128, 132, 64 * 32).splits, 1);
    // Packed, the same sequence is 8 CTAs a chunk: 16 chunks of 4 blocks (14 or 15 would give
    // chunks of 5 blocks, as 13 does).
    let s = Split::plan(&one, 128, 132, 8);
    assert_eq!((s.splits, s.chunk_blocks), (16, 4));
    // Never more chunks than key blocks; 77 keys are one block.
    let short = dims(1, 3, 77, 1, 1, 64);
    assert_eq!(Split::plan(&short, 128, 132, 1).splits, 1);
    // 1000 keys in 8 blocks asked for 5 chunks: 4 of 2 (5 of 2 would leave one empty).
    let mid = dims(1, 16, 1000, 4, 1, 64);
    let s = Split::with(&mid, 128, 5);
    assert_eq!((s.splits, s.chunk_blocks), (4, 2));
}

#[test]
fn the_plan_packs_where_the_gqa_kernel_has_the_group_and_sizes_the_workspace() {
    let bf = (false, ElemType::Bf16);
    let plan = |d: Dims, ask: Ask| Plan::new(refs(&shapes(&d)), d.d, bf, 132, ask).unwrap();
    let host = Ask::default();
    let unpacked = Ask {
        pack: false,
        ..host
    };
    // 32/8 heads, one position: packed (G = 4), 8 CTAs a chunk, always combined.
    let g4 = dims(1, 1, 8192, 32, 8, 128);
    let p = plan(g4, host);
    assert_eq!(p.tiles.pack, Some(Pack { group: 4, rows: 16 }));
    assert_eq!(p.split.splits, 16);
    assert!(p.combines());
    assert_eq!(p.workspace_len(), 16 * 8 * 64 * 129);
    // Unpacked: 32 CTAs a chunk, 4 chunks; its partials a [1, 128] block per head.
    let p = plan(g4, unpacked);
    assert_eq!((p.tiles.pack, p.split.splits), (None, 4));
    assert_eq!(p.workspace_len(), 4 * 32 * 129);
    // G = 2 takes 16 positions (in 32 rows); G = 3 has no packed kernel.
    let g2 = plan(dims(1, 16, 1000, 4, 2, 64), host).tiles.pack;
    assert_eq!(g2, Some(Pack { group: 2, rows: 32 }));
    assert_eq!(plan(dims(1, 1, 1000, 6, 2, 64), host).tiles.pack, None);
    // Unpacked, one split: no combine, no workspace.
    let full = dims(64, 1, 8192, 32, 32, 128);
    let p = plan(full, host);
    assert!(!p.combines() && p.workspace_len() == 0);
    let packs: Vec<(usize, usize)> = pack_groups().iter().map(|p| (p.group, p.rows)).collect();
    assert_eq!(packs, [(2, 32), (4, 16), (8, 8), (8, 16), (16, 8)]);
}

#[test]
fn the_plan_takes_the_128_row_tile_where_a_64_row_one_cannot_hold_the_positions() {
    let bf = (true, ElemType::Bf16);
    let plan = |d: Dims| Plan::new(refs(&shapes(&d)), d.d, bf, 132, Ask::default()).unwrap();
    let pack = |d: Dims| plan(d).tiles.pack.map(|p| (p.group, p.rows, p.tile_rows()));
    let rows = |p: &Plan| p.tiles.decode.int("NWG").map(|w| 64 * w);
    // G = 8 (Llama-3-70B's 64/8 heads): 8 positions a head in 64 rows; 9…16 in 128.
    for (s, want) in [
        (1, (8, 8, 64)),
        (8, (8, 8, 64)),
        (9, (8, 16, 128)),
        (16, (8, 16, 128)),
    ] {
        let d = dims(8, s, 16384, 64, 8, 128);
        assert_eq!(pack(d), Some(want), "G = 8, SQ = {s}");
        assert_eq!(rows(&plan(d)), Some(want.2 as i64));
    }
    // G = 16: 8 positions a head in 128 rows; 9 and more unpacked.
    for s in [1, 8] {
        assert_eq!(
            pack(dims(2, s, 4096, 32, 2, 64)),
            Some((16, 8, 128)),
            "SQ = {s}"
        );
    }
    assert_eq!(pack(dims(2, 9, 4096, 32, 2, 64)), None);
    // G = 2 and 4 keep their 64-row tiles whatever SQ (≤ 16).
    assert_eq!(pack(dims(1, 16, 4096, 16, 4, 256)), Some((4, 16, 64)));
    assert_eq!(pack(dims(1, 16, 4096, 16, 8, 256)), Some((2, 32, 64)));
    // The 128-row tile's workspace: blocks of 128 rows, one per (split, batch, K/V head).
    let p = plan(dims(8, 16, 16384, 64, 8, 128));
    let ns = p.split.splits;
    assert_eq!(p.workspace_len(), ns * 8 * 8 * 128 * 129);
    // A head dim with no tile is the typed refusal, packed as unpacked.
    assert!(matches!(
        tiles_for(96, bf, true, Some(Pack { group: 16, rows: 8 })).unwrap_err(),
        DecodeError::NoTile { d: 96, .. }
    ));
}

#[test]
fn a_small_workspace_or_an_impossible_split_is_refused() {
    let d = dims(1, 2, 1000, 4, 4, 64);
    let s = shapes(&d);
    let ask = |n| Ask {
        splits: Some(n),
        pack: true,
    };
    let plan = Plan::new(refs(&s), 64, (false, ElemType::Bf16), 132, ask(3)).unwrap();
    assert_eq!(plan.split.splits, 3);
    assert!(plan.tiles.decode.elem_of("o") == Some(ElemType::F32));
    let need = plan.workspace_len();
    assert_eq!(need, 3 * 4 * 2 * 65);
    assert!(matches!(
        plan.check_workspace(need - 1).unwrap_err(),
        DecodeError::Workspace { have, splits: 3, .. } if have == need - 1
    ));
    assert!(plan.check_workspace(need).is_ok());
    assert!(matches!(
        Plan::new(refs(&s), 64, (false, ElemType::Bf16), 132, ask(9)).unwrap_err(),
        DecodeError::Splits {
            splits: 9,
            blocks: 8
        }
    ));
    let one = Plan::new(refs(&s), 64, (true, ElemType::F16), 132, ask(1)).unwrap();
    assert_eq!(one.tiles.decode.elem_of("o"), Some(ElemType::F16));
    assert_eq!(one.tiles.decode.int("CAUSAL"), Some(1));
    assert!(matches!(
        tiles_for(96, (false, ElemType::Bf16), false, None).unwrap_err(),
        DecodeError::NoTile { d: 96, .. }
    ));
}
