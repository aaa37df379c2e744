//! `tirx sim-dump --out DIR [--emulator]`: run every case of [`super::sim_cases`] on the GPU
//! and write the outputs for `tirx sim-compare` (issue #10, validation step 1).
//!
//! What travels back from the device is two files: `DIR/outputs.bin`, every case's output
//! tensor as raw little-endian bytes one after another, and `DIR/manifest.json`, the index
//! ([`Manifest`]): the device, its SM count, and per case its label, seed, the offset and
//! length of its bytes, FNV-1a hashes of the artifact's PTX and of the inputs (so the compare
//! refuses a dump made from other PTX or other inputs instead of comparing them), or the
//! error that stopped it. Inputs are not written: the compare regenerates them from the seed.
//!
//! `--emulator` fills the dump from the emulator instead of a GPU, to exercise the harness on
//! a machine without one (a compare against it must find every case bit-exact).

use super::sim_cases::{CaseData, Fnv, TensorData, cases, inputs};
use half::{bf16, f16};
use serde::{Deserialize, Serialize};
use std::path::Path;
use tirx::runtime::{DeviceLimits, ElemType};
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor, TensorArg};

/// The manifest's file name in the dump folder.
pub const MANIFEST: &str = "manifest.json";
/// The outputs' file name in the dump folder.
pub const OUTPUTS: &str = "outputs.bin";

/// The index of a dump.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `tirx <version>` that wrote it.
    pub tool: String,
    /// UTC, ISO 8601.
    pub date: String,
    /// The device's name (`NVIDIA H200`, or `emulator`).
    pub device: String,
    /// Its compute capability.
    pub compute_capability: (i32, i32),
    /// Its SM count: the emulator plans persistent grids with it.
    pub sm_count: u32,
    /// Every case run, in [`cases`] order.
    pub cases: Vec<Entry>,
}

/// One case of a dump.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// `kernel-config-shape`.
    pub label: String,
    /// Kernel name.
    pub kernel: String,
    /// Config name.
    pub config: String,
    /// M, N, K (K = 0 outside GEMMs).
    pub shape: [usize; 3],
    /// Input seed.
    pub seed: u64,
    /// FNV-1a of the artifact's PTX text, hex.
    pub ptx_hash: String,
    /// FNV-1a of the inputs ([`CaseData::input_hash`]), hex.
    pub input_hash: String,
    /// The output tensor's name and element type.
    pub output: String,
    /// `bf16`, `f16` or `f32`.
    pub elem: String,
    /// Byte offset of the output in `outputs.bin`.
    pub offset: usize,
    /// Its length in bytes (0 on error).
    pub len: usize,
    /// Why the case produced no output, if it did not.
    pub error: Option<String>,
}

impl Manifest {
    /// Writes `manifest.json` and `outputs.bin` into `dir` (created if missing).
    pub fn write(&self, dir: &Path, outputs: &[u8]) -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let put = |name: &str, bytes: &[u8]| {
            let p = dir.join(name);
            std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))
        };
        put(MANIFEST, json.as_bytes())?;
        put(OUTPUTS, outputs)
    }

    /// Reads a dump folder: the manifest and the outputs, each entry's range checked.
    pub fn read(dir: &Path) -> Result<(Manifest, Vec<u8>), String> {
        let get = |name: &str| {
            let p = dir.join(name);
            std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))
        };
        let m: Manifest = serde_json::from_slice(&get(MANIFEST)?)
            .map_err(|e| format!("{}: {e}", dir.join(MANIFEST).display()))?;
        let bin = get(OUTPUTS)?;
        if let Some(e) = m.cases.iter().find(|e| e.offset + e.len > bin.len()) {
            return Err(format!(
                "{}: bytes {}..{} are past the end of {OUTPUTS} ({} bytes)",
                e.label,
                e.offset,
                e.offset + e.len,
                bin.len()
            ));
        }
        Ok((m, bin))
    }
}

/// `h` as the manifest writes hashes.
pub fn hex(h: u64) -> String {
    format!("{h:016x}")
}

/// Where a dump's outputs come from.
pub enum Backend<'a> {
    /// The GPU.
    Gpu(&'a Runtime),
    /// The emulator, planned for an H200.
    Emulator,
}

/// Runs every case on `backend` and writes the dump into `out`. `Ok(true)` when every case
/// produced its output.
pub fn dump(backend: &Backend<'_>, out: &Path) -> Result<bool, String> {
    let (device, cc, sm_count) = match backend {
        Backend::Gpu(rt) => (
            rt.name().to_string(),
            rt.compute_capability(),
            rt.sm_count(),
        ),
        Backend::Emulator => (
            "emulator".to_string(),
            (9, 0),
            DeviceLimits::HOPPER.sm_count,
        ),
    };
    let limits = DeviceLimits {
        sm_count,
        ..DeviceLimits::HOPPER
    };
    let mut bin = Vec::new();
    let mut entries = Vec::new();
    let mut ok = true;
    for case in cases() {
        let art = case.artifact()?;
        let data = inputs(art, &case)?;
        let label = case.label(art.config);
        let result = match backend {
            Backend::Gpu(rt) => run_gpu(rt, art, &data),
            Backend::Emulator => {
                super::sim_compare::emulate(art, &data, &limits, case.seed).map(|(b, _)| b)
            }
        };
        let offset = bin.len();
        let error = match result {
            Ok(bytes) if bytes.len() == data.out().bytes.len() => {
                bin.extend_from_slice(&bytes);
                None
            }
            Ok(bytes) => Some(format!(
                "{} output bytes, expected {}",
                bytes.len(),
                data.out().bytes.len()
            )),
            Err(e) => Some(e),
        };
        println!(
            "{label}: {}",
            error
                .as_deref()
                .map_or("ok".into(), |e| format!("FAILED: {e}"))
        );
        ok &= error.is_none();
        entries.push(Entry {
            label,
            kernel: case.kernel.to_string(),
            config: art.config.to_string(),
            shape: [case.shape.0, case.shape.1, case.shape.2],
            seed: case.seed,
            ptx_hash: hex(Fnv::of(art.ptx.as_bytes())),
            input_hash: hex(data.input_hash()),
            output: data.out().name.clone(),
            elem: data.out().elem.name().to_string(),
            offset,
            len: bin.len() - offset,
            error,
        });
    }
    let manifest = Manifest {
        tool: format!("tirx {}", env!("CARGO_PKG_VERSION")),
        date: tirx_kernels::bench::report::now(),
        device,
        compute_capability: cc,
        sm_count,
        cases: entries,
    };
    manifest.write(out, &bin)?;
    println!(
        "wrote {} cases, {} bytes, to {}",
        manifest.cases.len(),
        bin.len(),
        out.display()
    );
    Ok(ok)
}

/// A device tensor of any shipped element type.
enum GpuTensor {
    Bf16(Tensor<bf16>),
    F16(Tensor<f16>),
    F32(Tensor<f32>),
    E4m3(Tensor<tirx::e4m3>),
    E5m2(Tensor<tirx::e5m2>),
    Ue8m0(Tensor<tirx::ue8m0>),
    E2m1x2(Tensor<tirx::e2m1x2>),
    Ue4m3(Tensor<tirx::ue4m3>),
    E3m2(Tensor<tirx::e3m2>),
    E2m3(Tensor<tirx::e2m3>),
    E2m1(Tensor<tirx::e2m1>),
    I8(Tensor<i8>),
    U8(Tensor<u8>),
    I32(Tensor<i32>),
    U32(Tensor<u32>),
    I64(Tensor<i64>),
    U64(Tensor<u64>),
}

impl GpuTensor {
    fn upload(rt: &Runtime, t: &TensorData) -> Result<GpuTensor, RuntimeError> {
        let halves = || -> Vec<u16> {
            t.bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect()
        };
        Ok(match t.elem {
            ElemType::Bf16 => {
                let v: Vec<bf16> = halves().into_iter().map(bf16::from_bits).collect();
                GpuTensor::Bf16(rt.upload(&v, &t.shape)?)
            }
            ElemType::F16 => {
                let v: Vec<f16> = halves().into_iter().map(f16::from_bits).collect();
                GpuTensor::F16(rt.upload(&v, &t.shape)?)
            }
            ElemType::F32 => {
                let v: Vec<f32> = t
                    .bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                GpuTensor::F32(rt.upload(&v, &t.shape)?)
            }
            ElemType::E4m3 => {
                let v: Vec<tirx::e4m3> = t.bytes.iter().map(|&b| tirx::e4m3(b)).collect();
                GpuTensor::E4m3(rt.upload(&v, &t.shape)?)
            }
            ElemType::E5m2 => {
                let v: Vec<tirx::e5m2> = t.bytes.iter().map(|&b| tirx::e5m2(b)).collect();
                GpuTensor::E5m2(rt.upload(&v, &t.shape)?)
            }
            ElemType::Ue8m0 => {
                let v: Vec<tirx::ue8m0> = t.bytes.iter().map(|&b| tirx::ue8m0(b)).collect();
                GpuTensor::Ue8m0(rt.upload(&v, &t.shape)?)
            }
            ElemType::E2m1x2 => {
                let v: Vec<tirx::e2m1x2> = t.bytes.iter().map(|&b| tirx::e2m1x2(b)).collect();
                GpuTensor::E2m1x2(rt.upload(&v, &t.shape)?)
            }
            ElemType::Ue4m3 => {
                let v: Vec<tirx::ue4m3> = t.bytes.iter().map(|&b| tirx::ue4m3(b)).collect();
                GpuTensor::Ue4m3(rt.upload(&v, &t.shape)?)
            }
            ElemType::E3m2 => {
                let v: Vec<tirx::e3m2> = t.bytes.iter().map(|&b| tirx::e3m2(b)).collect();
                GpuTensor::E3m2(rt.upload(&v, &t.shape)?)
            }
            ElemType::E2m3 => {
                let v: Vec<tirx::e2m3> = t.bytes.iter().map(|&b| tirx::e2m3(b)).collect();
                GpuTensor::E2m3(rt.upload(&v, &t.shape)?)
            }
            ElemType::E2m1 => {
                let v: Vec<tirx::e2m1> = t.bytes.iter().map(|&b| tirx::e2m1(b)).collect();
                GpuTensor::E2m1(rt.upload(&v, &t.shape)?)
            }
            ElemType::I8 => {
                let v: Vec<i8> = t.bytes.iter().map(|&b| b as i8).collect();
                GpuTensor::I8(rt.upload(&v, &t.shape)?)
            }
            ElemType::U8 => GpuTensor::U8(rt.upload(&t.bytes, &t.shape)?),
            ElemType::I32 => {
                let v: Vec<i32> = t
                    .bytes
                    .chunks_exact(4)
                    .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                GpuTensor::I32(rt.upload(&v, &t.shape)?)
            }
            ElemType::U32 => {
                let v: Vec<u32> = t
                    .bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                GpuTensor::U32(rt.upload(&v, &t.shape)?)
            }
            ElemType::I64 => {
                let v: Vec<i64> = t
                    .bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect();
                GpuTensor::I64(rt.upload(&v, &t.shape)?)
            }
            ElemType::U64 => {
                let v: Vec<u64> = t
                    .bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect();
                GpuTensor::U64(rt.upload(&v, &t.shape)?)
            }
        })
    }

    fn view(&self) -> TensorArg<'_> {
        match self {
            GpuTensor::Bf16(t) => t.view(),
            GpuTensor::F16(t) => t.view(),
            GpuTensor::F32(t) => t.view(),
            GpuTensor::E4m3(t) => t.view(),
            GpuTensor::E5m2(t) => t.view(),
            GpuTensor::Ue8m0(t) => t.view(),
            GpuTensor::E2m1x2(t) => t.view(),
            GpuTensor::Ue4m3(t) => t.view(),
            GpuTensor::E3m2(t) => t.view(),
            GpuTensor::E2m3(t) => t.view(),
            GpuTensor::E2m1(t) => t.view(),
            GpuTensor::I8(t) => t.view(),
            GpuTensor::U8(t) => t.view(),
            GpuTensor::I32(t) => t.view(),
            GpuTensor::U32(t) => t.view(),
            GpuTensor::I64(t) => t.view(),
            GpuTensor::U64(t) => t.view(),
        }
    }

    fn download(&self, rt: &Runtime) -> Result<Vec<u8>, RuntimeError> {
        Ok(match self {
            GpuTensor::Bf16(t) => rt
                .download(t)?
                .iter()
                .flat_map(|v| v.to_bits().to_le_bytes())
                .collect(),
            GpuTensor::F16(t) => rt
                .download(t)?
                .iter()
                .flat_map(|v| v.to_bits().to_le_bytes())
                .collect(),
            GpuTensor::F32(t) => rt
                .download(t)?
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            GpuTensor::E4m3(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::E5m2(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::Ue8m0(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::E2m1x2(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::Ue4m3(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::E3m2(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::E2m3(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::E2m1(t) => rt.download(t)?.iter().map(|v| v.0).collect(),
            GpuTensor::I8(t) => rt.download(t)?.iter().map(|&v| v as u8).collect(),
            GpuTensor::U8(t) => rt.download(t)?,
            GpuTensor::I32(t) => rt
                .download(t)?
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            GpuTensor::U32(t) => rt
                .download(t)?
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            GpuTensor::I64(t) => rt
                .download(t)?
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            GpuTensor::U64(t) => rt
                .download(t)?
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        })
    }
}

/// One case on the GPU: upload, launch, wait, download the output's bytes.
fn run_gpu(rt: &Runtime, art: &KernelArtifact, data: &CaseData) -> Result<Vec<u8>, String> {
    let go = || -> Result<Vec<u8>, RuntimeError> {
        let tensors: Vec<GpuTensor> = data
            .tensors
            .iter()
            .map(|t| GpuTensor::upload(rt, t))
            .collect::<Result<_, _>>()?;
        let args: Vec<TensorArg<'_>> = tensors.iter().map(GpuTensor::view).collect();
        rt.launch_with(art, &args, &data.scalars)?;
        rt.synchronize()?;
        tensors[data.output].download(rt)
    };
    go().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(label: &str, offset: usize, len: usize) -> Entry {
        Entry {
            label: label.into(),
            kernel: "tma_copy".into(),
            config: "default".into(),
            shape: [3, 8, 0],
            seed: 7,
            ptx_hash: hex(1),
            input_hash: hex(u64::MAX),
            output: "dst".into(),
            elem: "bf16".into(),
            offset,
            len,
            error: None,
        }
    }

    /// A manifest and its outputs read back as written; an entry past the end is refused.
    #[test]
    fn manifest_round_trips() {
        let dir = std::env::temp_dir().join(format!("tirx-simdump-{}", std::process::id()));
        let m = Manifest {
            tool: "tirx test".into(),
            date: "2026-12-02T00:00:00Z".into(),
            device: "emulator".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            cases: vec![entry("a", 0, 4), entry("b", 4, 2)],
        };
        m.write(&dir, &[1, 2, 3, 4, 5, 6]).unwrap();
        let (back, bin) = Manifest::read(&dir).unwrap();
        assert_eq!(back, m);
        assert_eq!(bin, [1, 2, 3, 4, 5, 6]);
        let bad = Manifest {
            cases: vec![entry("c", 4, 8)],
            ..m
        };
        bad.write(&dir, &[0; 6]).unwrap();
        let e = Manifest::read(&dir).unwrap_err();
        assert!(e.contains("past the end"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
