//! Unit tests of the paged host side: the table's and lengths' checks, the shuffled tables,
//! the tile choice, and the reference against varlen's on the same keys packed.

use super::*;
use crate::attention::varlen::attention_varlen_f64;

#[test]
fn tables_that_do_not_describe_the_cache_are_typed_errors() {
    // Two sequences over pages of 128: 200 keys (2 pages: 5, 0) and 1 key (page 3).
    let table = [5, 0, -1, 3, -1, -1];
    let ok = Paging::new((&[0, 3, 4], &[200, 1]), (&table, 3), 128, 6, 4).unwrap();
    assert_eq!(ok.key_offsets(), [0, 200, 201]);
    assert_eq!(ok.key_row(0, 130), 2);
    assert_eq!(ok.key_row(0, 127), 5 * 128 + 127);
    assert_eq!(ok.key_row(1, 0), 3 * 128);
    let e = |cu: &[i32], seq: &[i32], t: &[i32], mp, pages| {
        Paging::new((cu, seq), (t, mp), 128, pages, 4).unwrap_err()
    };
    assert!(matches!(
        e(&[0, 3, 4], &[200], &table, 3, 6),
        PagedError::SequsedLength { have: 1, batch: 2 }
    ));
    assert!(matches!(
        e(&[0, 3, 4], &[200, 1], &table[..5], 3, 6),
        PagedError::TableShape { have: 5, .. }
    ));
    assert!(matches!(
        e(&[0, 3, 4], &[200, 1], &[], 0, 6),
        PagedError::TableShape { max_pages: 0, .. }
    ));
    assert!(matches!(
        e(&[0, 3, 4], &[385, 1], &table, 3, 6),
        PagedError::Keys {
            seq: 0,
            keys: 385,
            cap: 384,
            ..
        }
    ));
    assert!(matches!(
        e(&[0, 3, 4], &[200, -1], &table, 3, 6),
        PagedError::Keys {
            seq: 1,
            keys: -1,
            ..
        }
    ));
    // Page 5 of a cache of 5 pages; a −1 in a used slot.
    assert!(matches!(
        e(&[0, 3, 4], &[200, 1], &table, 3, 5),
        PagedError::PageOutOfRange {
            seq: 0,
            slot: 0,
            page: 5,
            pages: 5
        }
    ));
    assert!(matches!(
        e(&[0, 3, 4], &[200, 1], &[5, -1, -1, 3, -1, -1], 3, 6),
        PagedError::PageOutOfRange {
            seq: 0,
            slot: 1,
            page: -1,
            ..
        }
    ));
    // cu_seqlens_q: varlen's checks.
    assert!(matches!(
        e(&[0, 3, 2], &[200, 1], &table, 3, 6),
        PagedError::Offsets(VarlenError::NotMonotone { .. })
    ));
    assert!(matches!(
        e(&[], &[], &[], 1, 6),
        PagedError::Offsets(VarlenError::Empty { which: "q" })
    ));
    let text = e(&[0, 3, 4], &[200, 1], &table, 3, 5).to_string();
    assert!(
        text.contains("block_table[0][0] = 5, but the cache holds pages 0…5 − 1"),
        "{text}"
    );
}

/// A shuffled table passes the checks, gives every used slot a distinct page, pads with −1,
/// and is not the identity.
#[test]
fn shuffled_tables_are_valid_and_shuffled() {
    let p = sim::shuffled((&[0, 1, 1, 300, 301], &[1000, 0, 129, 256]), 128, 3, 7);
    let checked = Paging::new(
        (&p.cu_q, &p.seqused_k),
        (&p.block_table, p.max_pages),
        p.page,
        p.num_pages,
        301,
    )
    .unwrap();
    assert_eq!(checked, p);
    assert_eq!((p.num_pages, p.max_pages), (8 + 2 + 2 + 3, 9));
    let mut used: Vec<i32> = p.block_table.iter().copied().filter(|&i| i >= 0).collect();
    assert_eq!(used.len(), 12);
    assert_ne!(&used[..8], &[0, 1, 2, 3, 4, 5, 6, 7]);
    used.sort();
    used.dedup();
    assert_eq!(used.len(), 12);
    assert_eq!(p.block_table[9..18], [-1; 9]);
}

/// Every tile's page is a multiple of its key block or divides it (a TMA box never straddles
/// two pages: a block within one page, or whole pages), and `tile_for` finds each (head dim,
/// page) and names them all when it cannot.
#[test]
fn every_tile_reads_key_blocks_of_whole_pages_or_within_one() {
    for a in attention_sm90_paged::KERNEL.artifacts {
        let (page, bn) = (a.int("PAGE").unwrap(), a.int("BN").unwrap());
        assert!(page % bn == 0 || bn % page == 0, "{}", a.config);
        assert_eq!(page_of(a).unwrap(), page as usize);
    }
    for (d, page) in [
        (64, 16),
        (64, 64),
        (64, 128),
        (128, 32),
        (128, 256),
        (256, 16),
        (256, 64),
        (256, 128),
    ] {
        let a = tile_for(d, page, true, ElemType::Bf16).unwrap();
        assert_eq!(
            (a.int("D"), a.int("PAGE")),
            (Some(d as i64), Some(page as i64))
        );
    }
    // vLLM's page sizes 16 and 32 in every head dim, mask and type (`tirx bench attention
    // --paged 16` takes its tile so), with wide key blocks gathered from BN/PAGE pages:
    // varlen's 128, 64 for d256.
    for d in [64, 128, 256] {
        for page in [16, 32] {
            for (causal, elem) in [(false, ElemType::Bf16), (true, ElemType::F16)] {
                let a = tile_for(d, page, causal, elem).unwrap();
                let bn = if d == 256 { 64 } else { 128 };
                assert_eq!(a.int("BN"), Some(bn), "{}", a.config);
                assert!(
                    a.config.ends_with(&format!("d{d}_p{page}w")),
                    "{}",
                    a.config
                );
            }
        }
    }
    // vLLM's other small page, 8, has no tile (wgmma's N for S would be 8, its K for P·V 8).
    let e = tile_for(128, 8, false, ElemType::F16).unwrap_err();
    assert!(
        e.to_string()
            .contains("(128, 16), (128, 32), (128, 64), (128, 128), (128, 256)"),
        "{e}"
    );
    let varlen = &crate::attention::hopper_varlen::kernels::attention_sm90_varlen::KERNEL;
    assert!(matches!(
        page_of(&varlen.artifacts[0]),
        Err(PagedError::NotPaged { .. })
    ));
}

/// The reference through a shuffled table equals varlen's on the same keys packed in order.
#[test]
fn the_reference_reads_keys_through_the_table() {
    let p = sim::shuffled((&[0, 2, 5], &[3, 200]), 128, 1, 3);
    let (hk, d) = (1, 4);
    let rows = p.num_pages * p.page;
    let mut rng = crate::reference::Rng::new(5);
    let q: Vec<f32> = (0..5 * 2 * d).map(|_| rng.unit()).collect();
    let kc: Vec<f32> = (0..rows * hk * d).map(|_| rng.unit()).collect();
    let vc: Vec<f32> = (0..rows * hk * d).map(|_| rng.unit()).collect();
    let gather = |c: &[f32]| -> Vec<f32> {
        (0..2)
            .flat_map(|b| (0..p.seqused_k[b] as usize).map(move |j| (b, j)))
            .flat_map(|(b, j)| c[p.key_row(b, j) * d..][..d].to_vec())
            .collect()
    };
    let (k, v) = (gather(&kc), gather(&vc));
    let want = attention_varlen_f64(&q, &k, &v, &p.offsets(), (2, 1, d), true, 0.5);
    let got = attention_paged_f64(&q, (&kc, &vc), &p, (2, 1, d), true, 0.5);
    assert_eq!(got, want);
}

/// The wide tiles over pages of 16, 32 and 64 arm each K and V stage barrier with the bytes of
/// the whole key block (BN·D elements: BN/PAGE boxes of PAGE rows per 64-column chunk), the
/// sum the compiler derives over the producer's page loop, and Q's with its two 64-row tiles.
#[test]
fn wide_tiles_expect_the_bytes_of_all_their_page_boxes() {
    let wide = attention_sm90_paged::KERNEL
        .artifacts
        .iter()
        .filter(|a| a.int("BN") > a.int("PAGE"));
    let mut n = 0;
    for a in wide {
        let (d, bn) = (a.int("D").unwrap() as u64, a.int("BN").unwrap() as u64);
        let bytes: Vec<u64> = a
            .ptx
            .lines()
            .filter(|l| l.contains("mbarrier.arrive.expect_tx"))
            .map(|l| {
                l.trim_end_matches(';')
                    .rsplit(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert_eq!(
            bytes,
            [2 * 64 * d * 2, bn * d * 2, bn * d * 2],
            "{}",
            a.config
        );
        n += 1;
    }
    // Pages of 16 and 32 at every head dim, of 64 at 64 and 128; × 2 masks × 2 types.
    assert_eq!(n, 32);
}
