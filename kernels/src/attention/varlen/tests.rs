//! Unit tests of the variable-length host side: the offsets' checks, the tile list, the
//! shapes' checks, the tile choice and the f64 reference.

use super::*;

#[test]
fn offsets_that_do_not_describe_the_tensors_are_typed_errors() {
    let ok = Offsets::new(&[0, 3, 3, 10], &[0, 5, 6, 6], 10, 6).unwrap();
    assert_eq!(ok.batch(), 3);
    assert_eq!(ok.seq(1), (3..3, 5..6));
    let e = |q: &[i32], k: &[i32], tq, tk| Offsets::new(q, k, tq, tk).unwrap_err();
    assert!(matches!(
        e(&[0, 3], &[0, 1, 2], 3, 2),
        VarlenError::LengthsDiffer { q: 2, k: 3 }
    ));
    assert!(matches!(
        e(&[0, 5, 4], &[0, 1, 2], 4, 2),
        VarlenError::NotMonotone {
            which: "q",
            at: 2,
            before: 5,
            after: 4
        }
    ));
    assert!(matches!(
        e(&[0, 2, 4], &[0, 1, 3], 4, 2),
        VarlenError::LastNotTotal {
            which: "k",
            last: 3,
            total: 2,
            ..
        }
    ));
    assert!(matches!(
        e(&[-1, 4], &[0, 2], 4, 2),
        VarlenError::Negative {
            which: "q",
            first: -1
        }
    ));
    assert!(matches!(
        e(&[], &[], 0, 0),
        VarlenError::Empty { which: "q" }
    ));
    let text = e(&[0, 5, 4], &[0, 1, 2], 4, 2).to_string();
    assert!(
        text.contains("cu_seqlens_q decreases at 2: 5 then 4"),
        "{text}"
    );
}

fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

fn pairs(tiles: &[QueryTile]) -> Vec<(usize, usize, usize)> {
    tiles.iter().map(|t| (t.seq, t.tile, t.keys)).collect()
}

/// A long sequence beside short and empty ones: every query tile once, none of the empty
/// sequence, the tiles that see the most keys first; the causal mask reverses a
/// sequence's tiles (its last sees the most keys) and gives none to queries before every
/// key (SQ > SK).
#[test]
fn the_tile_list_covers_every_query_tile_longest_first() {
    let off = Offsets::new(
        &[0, 300, 300, 301, 501],
        &[0, 300, 310, 1000, 1100],
        501,
        1100,
    )
    .unwrap();
    // Sequence 0: 300 queries, 300 keys (3 tiles of 128); 1: no query, 10 keys;
    // 2: 1 query, 690 keys; 3: 200 queries, 100 keys (2 tiles).
    let full = off.tiles(nz(128), false);
    assert_eq!(
        pairs(&full),
        [
            (2, 0, 690),
            (0, 0, 300),
            (0, 1, 300),
            (0, 2, 300),
            (3, 0, 100),
            (3, 1, 100)
        ]
    );
    // Causal: sequence 0's tiles end at rows 127, 255, 383 → 128, 256, 300 keys;
    // sequence 3's first tile ends at row 127, which sees keys j ≤ 127 + 100 − 200 = 27
    // (28 keys), its second at row 255 → all 100.
    let causal = off.tiles(nz(128), true);
    assert_eq!(
        pairs(&causal),
        [
            (2, 0, 690),
            (0, 2, 300),
            (0, 1, 256),
            (0, 0, 128),
            (3, 1, 100),
            (3, 0, 28)
        ]
    );
    assert_eq!(tile_list(&causal), [2, 0, 0, 2, 0, 1, 0, 0, 3, 1, 3, 0]);
    // Causal tiles whose queries all come before every key still have a CTA (it writes
    // O = 0 and LSE = −∞), last, in tile order.
    let off = Offsets::new(&[0, 300], &[0, 10], 300, 10).unwrap();
    assert_eq!(
        pairs(&off.tiles(nz(128), true)),
        [(0, 2, 10), (0, 0, 0), (0, 1, 0)]
    );
}

/// No query token (every sequence empty, or no sequence): no tile, so nothing is
/// launched; one sequence (B = 1): its tiles only.
#[test]
fn batches_without_queries_have_no_tile_and_one_sequence_its_own() {
    for (cu_q, cu_k) in [
        (&[0, 0, 0][..], &[0, 5, 9][..]),
        (&[0][..], &[0][..]),
        (&[0, 0][..], &[0, 0][..]),
    ] {
        let off = Offsets::new(cu_q, cu_k, 0, *cu_k.last().unwrap() as usize).unwrap();
        for causal in [false, true] {
            assert!(off.tiles(nz(128), causal).is_empty(), "{cu_q:?}");
        }
    }
    let off = Offsets::new(&[0, 129], &[0, 1], 129, 1).unwrap();
    assert_eq!(pairs(&off.tiles(nz(128), false)), [(0, 0, 1), (0, 1, 1)]);
    assert_eq!(pairs(&off.tiles(nz(128), true)), [(0, 1, 1), (0, 0, 0)]);
    // Tiles that see as many keys keep their order.
    assert_eq!(
        pairs(&off.tiles(nz(64), true)),
        [(0, 2, 1), (0, 0, 0), (0, 1, 0)]
    );
}

/// Random batches (0…9 sequences of 0…1000 queries and keys, lengths far apart), tiles
/// of 64, 128 and 192 rows, both masks: every (sequence, tile) below cdiv(SQ, rows) exactly
/// once, nothing else; keys as counted key by key for the tile's last row; keys
/// non-increasing along the list.
#[test]
fn random_batches_list_each_tile_once_with_its_key_count() {
    let mut rng = crate::reference::Rng::new(0x7117_2026);
    for case in 0..300 {
        let b = rng.range(0, 9);
        let len = |rng: &mut crate::reference::Rng| match rng.range(0, 4) {
            0 => 0,
            1 => rng.range(1, 3),
            _ => rng.range(1, 1000),
        };
        let (mut cq, mut ck) = (vec![0i32], vec![0i32]);
        for _ in 0..b {
            cq.push(cq.last().unwrap() + len(&mut rng) as i32);
            ck.push(ck.last().unwrap() + len(&mut rng) as i32);
        }
        let (tq, tk) = (*cq.last().unwrap() as usize, *ck.last().unwrap() as usize);
        let off = Offsets::new(&cq, &ck, tq, tk).unwrap();
        let rows = [64, 128, 192][case % 3];
        let causal = case % 2 == 1;
        let tiles = off.tiles(nz(rows), causal);
        let mut want = Vec::new();
        for seq in 0..b {
            let (rq, rk) = off.seq(seq);
            let (sq, sk) = (rq.len(), rk.len());
            for tile in 0..sq.div_ceil(rows) {
                let last = (tile + 1) * rows - 1;
                let keys = (0..sk).filter(|&j| !causal || j + sq <= last + sk).count();
                want.push((seq, tile, keys));
            }
        }
        let mut got = pairs(&tiles);
        assert!(
            got.windows(2).all(|w| w[0].2 >= w[1].2),
            "{cq:?} {ck:?}: not longest first: {got:?}"
        );
        assert_eq!(tile_list(&tiles).len(), 2 * want.len());
        got.sort();
        assert_eq!(got, want, "{cq:?} {ck:?} rows {rows} causal {causal}");
    }
}

/// What a launch refuses before anything reaches the device: tensors of other token counts
/// than the batch's offsets, K/V of no token when there are queries, a layout that does not
/// fit; a batch of no query token passes and launches nothing, even with no key.
#[test]
fn launches_that_disagree_with_their_batch_are_refused() {
    let art = tile_for(64, true, ElemType::Bf16).unwrap();
    let (q, k, lse): (&[usize], &[usize], &[usize]) = (&[10, 128], &[6, 64], &[2, 10, 1]);
    assert!(check_launch(art, (10, 6), [q, k, k, q, lse]).unwrap());
    for (totals, shapes, why) in [
        (
            (11, 6),
            [q, k, k, q, lse],
            "q has 10 rows and k 6, but the batch's offsets end at 11 and 6",
        ),
        ((10, 5), [q, k, k, q, lse], "end at 10 and 5"),
        ((10, 0), [q, &[0, 64], &[0, 64], q, lse], "TK = 0"),
        ((10, 6), [q, k, k, q, &[2, 11, 1]], "lse [2, 11, 1]"),
        ((10, 6), [q, k, &[6, 128], q, lse], "k and v one"),
    ] {
        let e = check_launch(art, totals, shapes).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
    }
    let none: &[usize] = &[0, 128];
    assert!(!check_launch(art, (0, 0), [none, &[0, 64], &[0, 64], none, &[2, 0, 1]]).unwrap());
}

/// Every tile of the kernel is cut at 128 rows (two consumer warpgroups); an artifact of
/// another kernel is refused by what it is, not by its config's name.
#[test]
fn tiles_are_cut_at_the_artifacts_rows_and_other_kernels_are_refused() {
    for a in attention_sm90_varlen::KERNEL.artifacts {
        assert_eq!(rows_of(a).unwrap().get(), 128, "{}", a.config);
    }
    let other = crate::catalogue::find("attention_sm90").expect("the dense kernel");
    let e = rows_of(&other.artifacts[0]).unwrap_err();
    assert!(matches!(e, VarlenError::NotVarlen { .. }), "{e}");
}

#[test]
fn shapes_that_do_not_fit_the_layout_are_refused() {
    let q: &[usize] = &[10, 256];
    let k: &[usize] = &[6, 128];
    assert_eq!(heads([q, k, k, q, &[4, 10, 1]], 64).unwrap(), (4, 2));
    for (shapes, why) in [
        ([q, k, k, q, &[4usize, 9, 1][..]], "lse [4, 9, 1]"),
        ([q, k, &[6, 64][..], q, &[4, 10, 1][..]], "k and v one"),
        (
            [q, &[6, 192][..], &[6, 192][..], q, &[4, 10, 1][..]],
            "head dim 64",
        ),
    ] {
        let e = heads(shapes, 64).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
    }
}

#[test]
fn every_head_dim_mask_and_type_has_a_tile_and_others_are_refused() {
    for d in [64, 128, 256] {
        for causal in [false, true] {
            for elem in [ElemType::Bf16, ElemType::F16] {
                let a = tile_for(d, causal, elem).unwrap();
                assert_eq!(a.int("D"), Some(d as i64));
            }
        }
    }
    let e = tile_for(96, false, ElemType::Bf16).unwrap_err().to_string();
    assert!(e.contains("head dims [64, 128, 256]"), "{e}");
}

/// The reference is the dense one per sequence: two sequences of one token each against
/// keys of their own; an empty sequence contributes nothing; a causal query before every
/// key (SQ > SK) gives O = 0 and LSE = −∞.
#[test]
fn the_reference_treats_each_sequence_on_its_own() {
    let off = Offsets::new(&[0, 1, 1, 3], &[0, 1, 2, 3], 3, 3).unwrap();
    // d = 1, one head: q = 1, keys 0, values 2, 4, 8.
    let (o, lse) = attention_varlen_f64(
        &[1.0f32, 1.0, 1.0],
        &[0.0f32, 0.0, 0.0],
        &[2.0f32, 4.0, 8.0],
        &off,
        (1, 1, 1),
        true,
        1.0,
    );
    // Sequence 0: query 0 sees key 0 (value 2). Sequence 1: no queries. Sequence 2:
    // queries 1, 2 against one key (value 8): query 1 sees none, query 2 sees it.
    assert_eq!(o, vec![2.0, 0.0, 8.0]);
    assert_eq!(lse, vec![0.0, f64::NEG_INFINITY, 0.0]);
}
