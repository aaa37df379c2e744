//! The launches a runtime keeps prepared ([`LaunchCache`]), looked up by what a launch depends
//! on ([`LaunchKey`]) without allocating: a launch of the same artifact on the same tensors and
//! scalars again finds its kept preparation by a hash of the arguments and one comparison of
//! them against the kept key's words.
//!
//! Invariants:
//! - A key is one sequence of words ([`LaunchKey::each_word`]); its hash, its comparison with a
//!   kept key and the kept key itself all come from that one sequence, so they cannot disagree
//!   about which arguments make a launch.
//! - A hit is decided by comparing every word, never by the hash alone: two keys whose hashes
//!   collide share a bucket and are told apart there.
//! - The cache holds at most [`LAUNCH_CACHE_ENTRIES`] launches; past that it starts over (a loop
//!   over fewer distinct launches than that never prepares twice).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

use super::KernelArtifact;
use crate::hash::WordHasher;
use crate::plan::ScalarArg;
use crate::tensor::TensorArg;

/// Launches a runtime keeps prepared; past this many, the cache starts over.
pub(crate) const LAUNCH_CACHE_ENTRIES: usize = 1024;

/// What a prepared launch of an artifact depends on, so equal keys prepare equal launches: the
/// artifact (the addresses of its `'static` PTX text and of its signature function) and, for
/// each tensor, its context, element type, extents, strides and address, and each scalar's
/// type and bits. A tensor freed and another allocated at the same address with the same
/// layout gives the same parameters, so a hit is right whatever the tensors' history.
///
/// Borrowed: it names the call's arguments (tensor arguments or references to them, [`AsArg`])
/// and carries their hash, computed once per launch.
pub(crate) struct LaunchKey<'k, A> {
    artifact: &'k KernelArtifact,
    args: &'k [A],
    scalars: &'k [ScalarArg],
    hash: u64,
}

/// A launch's tensor argument as the launch reads it: the argument itself, or a reference to
/// one (a launch by role orders references to the caller's arguments instead of cloning them).
pub(crate) trait AsArg {
    /// The argument.
    fn as_arg(&self) -> &TensorArg<'_>;
}

impl AsArg for TensorArg<'_> {
    fn as_arg(&self) -> &TensorArg<'_> {
        self
    }
}

impl AsArg for &TensorArg<'_> {
    fn as_arg(&self) -> &TensorArg<'_> {
        self
    }
}

impl<'k, A: AsArg> LaunchKey<'k, A> {
    /// The key of launching `artifact` on `args` and `scalars`.
    pub(crate) fn of(
        artifact: &'k KernelArtifact,
        args: &'k [A],
        scalars: &'k [ScalarArg],
    ) -> LaunchKey<'k, A> {
        let mut key = LaunchKey {
            artifact,
            args,
            scalars,
            hash: 0,
        };
        let mut h = WordHasher::default();
        key.each_word(|w| h.write_u64(w));
        key.hash = h.finish();
        key
    }

    /// Calls `f` on every word of the key, in order. Shapes and strides are preceded by the
    /// rank, so tensors of different ranks never run into each other's words.
    fn each_word(&self, mut f: impl FnMut(u64)) {
        let a = self.artifact;
        f(a.ptx.as_ptr() as u64);
        f(a.ptx.len() as u64);
        f(a.signature as usize as u64);
        for arg in self.args {
            let arg = arg.as_arg();
            let m = arg.meta();
            f(arg.context_key() as u64);
            f(m.elem as u64);
            f(m.addr);
            f(m.shape.len() as u64);
            m.shape.iter().for_each(|&x| f(x as u64));
            f(m.strides.len() as u64);
            m.strides.iter().for_each(|&x| f(x as u64));
        }
        for v in self.scalars {
            let tag = match *v {
                ScalarArg::F32(_) => 0,
                ScalarArg::I32(_) => 1,
                ScalarArg::U32(_) => 2,
                ScalarArg::I64(_) => 3,
                ScalarArg::U64(_) => 4,
            };
            f(tag);
            f(v.bits64());
        }
    }

    /// Whether `words` (a kept key) are exactly this key's words.
    fn matches(&self, words: &[u64]) -> bool {
        let (mut at, mut same) = (0, true);
        self.each_word(|w| {
            same &= words.get(at) == Some(&w);
            at += 1;
        });
        same && at == words.len()
    }

    /// The key's words, to keep.
    fn words(&self) -> Box<[u64]> {
        let mut out = Vec::with_capacity(4 + self.args.len() * 12 + self.scalars.len() * 2);
        self.each_word(|w| out.push(w));
        out.into_boxed_slice()
    }
}

/// The prepared launches of one context (the runtimes that
/// [`Runtime::on_borrowed_stream`](crate::Runtime::on_borrowed_stream) makes share them), by
/// key hash; each bucket holds the kept keys' words beside their launches (more than one only
/// when hashes collide).
pub(crate) struct LaunchCache<V> {
    kept: Mutex<Kept<V>>,
}

struct Kept<V> {
    buckets: HashMap<u64, Bucket<V>, BuildHasherDefault<Prehashed>>,
    len: usize,
}

/// The kept keys (their words) of one hash, beside their launches.
type Bucket<V> = Vec<(Box<[u64]>, Arc<V>)>;

impl<V> Default for LaunchCache<V> {
    fn default() -> Self {
        LaunchCache {
            kept: Mutex::new(Kept {
                buckets: HashMap::default(),
                len: 0,
            }),
        }
    }
}

impl<V> LaunchCache<V> {
    /// The launch kept under `key`, if any.
    pub(crate) fn get<A: AsArg>(&self, key: &LaunchKey<'_, A>) -> Option<Arc<V>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.buckets
            .get(&key.hash)?
            .iter()
            .find(|(words, _)| key.matches(words))
            .map(|(_, v)| v.clone())
    }

    /// Keeps `launch` under `key` (replacing what another thread kept under it meanwhile);
    /// starts over first when the cache is full.
    pub(crate) fn insert<A: AsArg>(&self, key: &LaunchKey<'_, A>, launch: Arc<V>) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len >= LAUNCH_CACHE_ENTRIES {
            kept.buckets.clear();
            kept.len = 0;
        }
        let bucket = kept.buckets.entry(key.hash).or_default();
        if let Some(slot) = bucket.iter_mut().find(|(words, _)| key.matches(words)) {
            slot.1 = launch;
            return;
        }
        bucket.push((key.words(), launch));
        kept.len += 1;
    }

    /// How many launches are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).len
    }
}

/// The hasher of a map whose keys are hashes already ([`LaunchKey`]'s): passes the one `u64`
/// through.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys reach this map; fold anything else in rather than panic.
        bytes
            .iter()
            .for_each(|&b| self.0 = self.0.rotate_left(8) ^ u64::from(b));
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = w;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use tirx_ir::abi::{ElemType, Signature, Target};

    use super::*;
    use crate::plan::TensorMeta;

    fn no_sig() -> Signature {
        unreachable!("never built")
    }

    // SAFETY: never launched.
    static ART: KernelArtifact =
        unsafe { KernelArtifact::new("k", "default", Target::Sm90a, "ptx", "", no_sig) };

    fn args(addrs: &[u64]) -> Vec<TensorArg<'static>> {
        addrs
            .iter()
            .map(|&a| TensorArg::detached(TensorMeta::row_major(ElemType::F32, &[4, 8], a), 1))
            .collect()
    }

    /// Keys whose hashes collide share a bucket and are still told apart by their words.
    #[test]
    fn colliding_hashes_are_told_apart() {
        let (x, y) = (args(&[0x1000]), args(&[0x2000]));
        let kx = LaunchKey::of(&ART, &x, &[]);
        let mut ky = LaunchKey::of(&ART, &y, &[]);
        assert_ne!(kx.hash, ky.hash);
        ky.hash = kx.hash;
        let cache = LaunchCache::default();
        cache.insert(&kx, Arc::new('x'));
        assert!(cache.get(&ky).is_none(), "same hash, other words: a miss");
        cache.insert(&ky, Arc::new('y'));
        assert_eq!(
            (*cache.get(&kx).unwrap(), *cache.get(&ky).unwrap()),
            ('x', 'y')
        );
        assert_eq!(cache.len(), 2);
        cache.insert(&kx, Arc::new('z'));
        assert_eq!(*cache.get(&kx).unwrap(), 'z', "an equal key replaces");
        assert_eq!(cache.len(), 2);
    }

    /// Past `LAUNCH_CACHE_ENTRIES` launches the cache starts over.
    #[test]
    fn a_full_cache_starts_over() {
        let cache = LaunchCache::default();
        for i in 0..=LAUNCH_CACHE_ENTRIES as u64 {
            let a = args(&[0x1000 * (i + 1)]);
            cache.insert(&LaunchKey::of(&ART, &a, &[]), Arc::new(i));
        }
        assert_eq!(cache.len(), 1);
        let last = args(&[0x1000 * (LAUNCH_CACHE_ENTRIES as u64 + 1)]);
        assert!(cache.get(&LaunchKey::of(&ART, &last, &[])).is_some());
        let first = args(&[0x1000]);
        assert!(cache.get(&LaunchKey::of(&ART, &first, &[])).is_none());
    }

    /// A scalar's type is part of the key, not only its bits (`0u32` and `0.0f32` share them).
    #[test]
    fn scalar_types_are_part_of_the_key() {
        let x = args(&[0x1000]);
        let cache = LaunchCache::default();
        cache.insert(&LaunchKey::of(&ART, &x, &[ScalarArg::U32(0)]), Arc::new(()));
        assert!(
            cache
                .get(&LaunchKey::of(&ART, &x, &[ScalarArg::F32(0.0)]))
                .is_none()
        );
        assert!(
            cache
                .get(&LaunchKey::of(&ART, &x, &[ScalarArg::U32(0)]))
                .is_some()
        );
    }
}
