//! The paged kernel's f64 reference, a builder of shuffled page tables, and its run in the
//! emulator (`attention::paged`'s module docs give the layout).

use tirx::KernelArtifact;
use tirx::abi::ElemType;

use super::{Paging, page_of};
use crate::attention::varlen::{attention_varlen_f64, launch_and_check, rows_in, tile_list};
use crate::reference::HostElem;

/// The f64 reference: O `[TQ, HQ·D]` and the LSE `[HQ, TQ]`, each sequence's keys gathered
/// from the caches (`[num_pages·PAGE, HK·D]` row-major) through the table into varlen's
/// packed form, then [`attention_varlen_f64`].
pub fn attention_paged_f64<T: HostElem>(
    q: &[T],
    (k_cache, v_cache): (&[T], &[T]),
    paging: &Paging,
    (hq, hk, d): (usize, usize, usize),
    causal: bool,
    scale: f64,
) -> (Vec<f64>, Vec<f64>) {
    let w = hk * d;
    let (mut k, mut v) = (Vec::new(), Vec::new());
    for (b, &keys) in paging.seqused_k.iter().enumerate() {
        for j in 0..keys as usize {
            let r = paging.key_row(b, j) * w;
            k.extend_from_slice(&k_cache[r..r + w]);
            v.extend_from_slice(&v_cache[r..r + w]);
        }
    }
    let off = paging.offsets();
    attention_varlen_f64(q, &k, &v, &off, (hq, hk, d), causal, scale)
}

/// A paged batch of the sequences `cu_q` / `seqused_k` over pages of `page` tokens, laid out
/// as a serving cache would after many allocations: each sequence's pages drawn from a
/// shuffled pool (from `seed`) holding `spare` unused pages besides, the table one column
/// wider than the longest sequence needs, and every entry past a sequence's pages −1 (vLLM's
/// padding; never read). Unchecked: pass it through [`Paging::new`] to use it.
pub fn shuffled(
    (cu_q, seqused_k): (&[i32], &[i32]),
    page: usize,
    spare: usize,
    seed: u64,
) -> Paging {
    let need: Vec<usize> = seqused_k
        .iter()
        .map(|&k| (k.max(0) as usize).div_ceil(page.max(1)))
        .collect();
    let num_pages = need.iter().sum::<usize>() + spare;
    let max_pages = need.iter().max().map_or(0, |m| m + 1).max(1);
    // Fisher–Yates over the pool.
    let mut rng = crate::reference::Rng::new(seed);
    let mut pool: Vec<i32> = (0..num_pages as i32).collect();
    for i in (1..pool.len()).rev() {
        pool.swap(i, rng.range(0, i));
    }
    let mut block_table = vec![-1; seqused_k.len() * max_pages];
    let mut next = pool.into_iter();
    for (b, &n) in need.iter().enumerate() {
        for slot in &mut block_table[b * max_pages..][..n] {
            *slot = next.next().unwrap_or(-1);
        }
    }
    Paging {
        cu_q: cu_q.to_vec(),
        seqused_k: seqused_k.to_vec(),
        block_table,
        max_pages,
        page,
        num_pages: num_pages.max(1),
    }
}

/// `art` (an `attention_sm90_paged` artifact) in the emulator on `paging` with `hq` query
/// heads over `hk` K/V heads, inputs from `seed` (every cache row random, unused pages and the
/// rows past a sequence's keys included), outputs poisoned: O within 2e-2 and the LSE within
/// 2e-3 of [`attention_paged_f64`] (−∞ exactly where no key is seen), or the first element
/// that is not, or the emulator's report. Returns max |o − ref|. `paging` is not checked
/// here, so a test can show the emulator's report of a page id out of range (`tirx.check tma`);
/// a batch with no query token launches nothing (0.0).
pub fn simulate(
    art: &KernelArtifact,
    paging: &Paging,
    (hq, hk): (usize, usize),
    sms: u32,
    seed: u64,
    policy: &tirx_sim::Policy,
) -> Result<f64, String> {
    use crate::simulate::{encode, put, random_values};
    let d = art.int("D").ok_or("no head dim `D`")? as usize;
    let page = page_of(art).map_err(|e| e.to_string())?;
    if page != paging.page {
        return Err(format!(
            "{}: pages of {page}, not {}",
            art.config, paging.page
        ));
    }
    let causal = art.int("CAUSAL") == Some(1);
    let elem = (art.signature)().tensors[0].elem;
    let tq = *paging.cu_q.last().unwrap_or(&0) as usize;
    let kr = paging.num_pages * page;
    let rows = rows_in(art).ok_or("no NWG")?;
    let map = tile_list(&paging.offsets().tiles(rows, causal));
    if map.is_empty() {
        return Ok(0.0);
    }
    let mut rng = crate::reference::Rng::new(seed);
    let (_, qv) = random_values(&mut rng, elem, tq * hq * d);
    let (_, kv) = random_values(&mut rng, elem, kr * hk * d);
    let (_, vv) = random_values(&mut rng, elem, kr * hk * d);
    let [(qb, qv), (kb, kv), (vb, vv)] = [&qv, &kv, &vv].map(|x| encode(x, elem));
    let mut dev = tirx_sim::Device::new();
    let ints = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let ob = tq * hq * d * elem.bytes() as usize;
    let b = paging.batch();
    let tensors = [
        put(&mut dev, &qb, elem, &[tq, hq * d]),
        put(&mut dev, &kb, elem, &[kr, hk * d]),
        put(&mut dev, &vb, elem, &[kr, hk * d]),
        put(&mut dev, &vec![0xff; ob], elem, &[tq, hq * d]),
        put(
            &mut dev,
            &vec![0xff; hq * tq * 4],
            ElemType::F32,
            &[hq, tq, 1],
        ),
        put(&mut dev, &ints(&paging.cu_q), ElemType::I32, &[b + 1]),
        put(&mut dev, &ints(&paging.seqused_k), ElemType::I32, &[b]),
        put(
            &mut dev,
            &ints(&paging.block_table),
            ElemType::I32,
            &[b, paging.max_pages],
        ),
        put(&mut dev, &ints(&map), ElemType::I32, &[map.len() / 2, 2]),
    ];
    launch_and_check(
        art,
        dev,
        &tensors,
        (tq, hq, d),
        (sms, seed, policy),
        (&qv, &kv, &vv),
        |(q, k, v), scale| attention_paged_f64(q, (k, v), paging, (hq, hk, d), causal, scale),
    )
}
