//! Measure once, then remember: the tune cache the host-side choice reads first.
//!
//! `tirx tune gemm` measures every accepted candidate of a problem on the GPU and writes one
//! [`Entry`] per (device name, SM count, problem, element types, shape bucket), its artifacts
//! fastest first. [`super::choose`] takes the entry's fastest artifact that the dispatcher
//! accepts for the actual tensors (a bucket spans nearby shapes, whose alignment may refuse
//! some); without an entry, the cost model decides.
//!
//! Where caches live: [`Cache::host`] merges the user's cache (`$TIRX_TUNE_CACHE`, else
//! `$HOME/.cache/tirx/tune.json`; written by `tirx tune`) over the one shipped in the crate
//! (`kernels/tune/h200.json`, measured on the H200 and committed), the user's entry winning
//! for the same key. A missing or unreadable user cache is an empty one (the choice still
//! works); `tirx tune` reports a malformed one instead of overwriting it.
//!
//! Buckets: each of M, N, K rounds to the nearest quarter-octave (`round(4·log2 x)`), so 1000
//! and 1024 share a bucket, and 1536 and 2048 do not; the key also holds each dimension's
//! alignment class (trailing zero bits, at most 6), since alignment decides which kernels fit
//! and which is fastest (measured on the H200, 2026-12-01: 1000³ fastest `pair_n`, 1024³
//! `ws/n64`; 4095×4097×4096 `cluster/n128`, 4096³ `tma_epi`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// What a cache entry is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// The device's name.
    pub device: String,
    /// Its SM count.
    pub sms: u32,
    /// The problem (`gemm tn plain`).
    pub problem: String,
    /// Element types (`bf16 -> bf16`).
    pub types: String,
    /// The shape bucket ([`bucket`] of each dimension).
    pub bucket: [i32; 3],
    /// Each dimension's alignment class ([`alignment`]): shapes of one bucket but other
    /// alignments accept other kernels and rank them differently (1000 and 1024; 4095 and 4096).
    pub align: [u32; 3],
}

/// One artifact's measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Kernel name.
    pub kernel: String,
    /// Config name.
    pub config: String,
    /// Median time, microseconds.
    pub median_us: f64,
}

/// The measurements of one problem in one bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// What for.
    pub key: Key,
    /// The shape measured.
    pub shape: [usize; 3],
    /// When (UTC, ISO 8601).
    pub date: String,
    /// Every artifact that ran and was right, fastest first.
    pub measured: Vec<Measured>,
}

/// A tune cache.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    /// Its entries, one per key.
    pub entries: Vec<Entry>,
}

/// The shipped cache, measured on the H200.
const SHIPPED: &str = include_str!("../../tune/h200.json");

/// Errors reading or writing a cache file.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// The file could not be read or written.
    #[error("tune cache {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a cache.
    #[error("tune cache {path} is not a tirx tune cache: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
}

/// A dimension's bucket: the nearest quarter-octave.
pub fn bucket(x: usize) -> i32 {
    (4.0 * (x.max(1) as f64).log2()).round() as i32
}

/// A dimension's alignment class: its number of trailing zero bits, at most 6 (a multiple of
/// 64 elements, 128 bytes of a 16-bit type, is the finest alignment any choice depends on).
pub fn alignment(x: usize) -> u32 {
    x.trailing_zeros().min(6)
}

impl Cache {
    /// The entry for `key`.
    pub fn lookup(&self, key: &Key) -> Option<&Entry> {
        self.entries.iter().find(|e| &e.key == key)
    }

    /// Adds `entry`, replacing one with the same key; its measurements sorted fastest first.
    pub fn insert(&mut self, mut entry: Entry) {
        entry
            .measured
            .sort_by(|a, b| a.median_us.total_cmp(&b.median_us));
        match self.entries.iter_mut().find(|e| e.key == entry.key) {
            Some(old) => *old = entry,
            None => self.entries.push(entry),
        }
    }

    /// `other`'s entries over this one's (same key: `other` wins).
    pub fn merged_with(mut self, other: Cache) -> Cache {
        for e in other.entries {
            self.insert(e);
        }
        self
    }

    /// Parses a cache from its JSON text.
    pub fn parse(text: &str, path: &Path) -> Result<Cache, TuneError> {
        serde_json::from_str(text).map_err(|source| TuneError::Format {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads `path`; a file that does not exist is an empty cache.
    pub fn load(path: &Path) -> Result<Cache, TuneError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Cache::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Cache::default()),
            Err(source) => Err(TuneError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Writes the cache to `path` (creating its folder), as pretty JSON.
    pub fn save(&self, path: &Path) -> Result<(), TuneError> {
        let io = |source| TuneError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).expect("a cache serializes");
        std::fs::write(path, text + "\n").map_err(io)
    }

    /// The cache shipped in the crate.
    pub fn shipped() -> Cache {
        Cache::parse(SHIPPED, Path::new("kernels/tune/h200.json"))
            .expect("the shipped cache parses (a unit test checks it)")
    }

    /// The cache the host-side choice reads: the user's over the shipped one, read once per
    /// process.
    pub fn host() -> &'static Cache {
        static HOST: OnceLock<Cache> = OnceLock::new();
        HOST.get_or_init(|| {
            let user =
                user_path().map_or_else(Cache::default, |p| Cache::load(&p).unwrap_or_default());
            Cache::shipped().merged_with(user)
        })
    }
}

/// The user's cache file: `$TIRX_TUNE_CACHE`, else `$HOME/.cache/tirx/tune.json`.
pub fn user_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TIRX_TUNE_CACHE") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/tirx/tune.json"))
}
