//! The copy family: `dst ← src`, both M×N of one element type, as
//! [`crate::family::Family`] sees it — its request ([`CopyRequest`]: acceptance by problem,
//! element type and the launch planner; cost from the tile), its host entry ([`copy`]), its
//! check (bit-exact, on the GPU and in the emulator) and its default shape 130×136 (tails in
//! both dimensions; 272-byte rows TMA takes).

use half::bf16;
use tirx::abi::ElemType;
use tirx::problem::Problem;
use tirx::runtime::TensorMeta;
use tirx::{KernelArtifact, Runtime, RuntimeError, Tensor, TensorArg};
use tirx_sim::{Device as SimDevice, Stats};

use crate::dispatch::tune::{self, Key};
use crate::dispatch::{self, Choice, Device, ProblemDef, Reject, mentions_sms};
use crate::family::{CheckReport, Family, Shape, SimRun, by_role, launch_roles};
use crate::reference::Rng;
use crate::simulate::{download, upload};

/// A copy kernel's typed launcher (`src` → `dst`, both M×N bf16), e.g. `tma_copy::launch`.
pub type CopyLaunch =
    fn(&Runtime, &str, &Tensor<bf16>, &mut Tensor<bf16>) -> Result<(), RuntimeError>;

/// The copy family.
pub struct Copy;

/// One copy to run: `src` and `dst`, same shape and element type.
#[derive(Clone, Debug)]
pub struct CopyRequest {
    /// `src` [M, N].
    pub src: TensorMeta,
    /// `dst` [M, N].
    pub dst: TensorMeta,
}

impl CopyRequest {
    /// The request on contiguous tensors of `elem` at 256-byte aligned addresses.
    pub fn contiguous(elem: ElemType, (m, n): (usize, usize)) -> CopyRequest {
        let meta = TensorMeta::row_major(elem, &[m, n], 0);
        CopyRequest {
            src: meta.clone(),
            dst: meta,
        }
    }

    /// The request on the tensors given (their strides and addresses count).
    pub fn on(src: &TensorArg<'_>, dst: &TensorArg<'_>) -> CopyRequest {
        CopyRequest {
            src: src.meta().clone(),
            dst: dst.meta().clone(),
        }
    }

    fn dims(&self) -> (usize, usize) {
        let s = &self.src.shape;
        (
            s.first().copied().unwrap_or(0),
            s.get(1).copied().unwrap_or(0),
        )
    }
}

impl ProblemDef for CopyRequest {
    fn describe(&self) -> String {
        let (m, n) = self.dims();
        format!("copy of {m}x{n} {}", self.src.elem.name())
    }

    fn solves(&self, artifact: &KernelArtifact) -> Result<(), Reject> {
        if artifact.problem != Some(Problem::Copy) {
            return Err(Reject::problem(artifact));
        }
        match artifact.elem_of("src") {
            Some(e) if e == self.src.elem => Ok(()),
            e => Err(Reject::Types { found: vec![e] }),
        }
    }

    fn arguments(&self, artifact: &KernelArtifact) -> (Vec<TensorMeta>, Vec<f32>) {
        let roles = [("src", self.src.clone()), ("dst", self.dst.clone())];
        by_role(artifact, &roles, &[]).unwrap_or_default()
    }

    /// Waves of CTAs times the bytes each moves: a kernel whose grid leaves SMs idle on the
    /// last wave pays for it. No measurement ranks the shipped tiles yet (`tirx bench copy`
    /// runs both); the tune cache corrects the model where it is wrong.
    fn cost(&self, artifact: &KernelArtifact, device: &Device) -> Result<f64, Reject> {
        let (Some(bm), Some(bn)) = (artifact.int("BM"), artifact.int("BN")) else {
            return Err(Reject::Unranked(
                "the cost model needs the config constants BM and BN".into(),
            ));
        };
        let (bm, bn) = (bm.max(1) as usize, bn.max(1) as usize);
        let (m, n) = self.dims();
        let tiles = m.div_ceil(bm) * n.div_ceil(bn);
        let persistent = artifact.sig().grid.iter().any(mentions_sms);
        let per_cta = if persistent { 1 } else { tiles };
        let waves = per_cta.div_ceil(device.limits.sm_count.max(1) as usize);
        Ok((waves * bm * bn) as f64 / 4096.0)
    }

    fn cache_key(&self, device: &Device) -> Key {
        let (m, n) = self.dims();
        Key {
            device: device.name.clone(),
            sms: device.limits.sm_count,
            problem: "copy".into(),
            types: self.src.elem.name().into(),
            bucket: [tune::bucket(m), tune::bucket(n), 0],
            align: [tune::alignment(m), tune::alignment(n), 0],
        }
    }
}

/// `dst ← src` on the host's choice of copy kernel for these tensors; returns the choice.
pub fn copy(
    rt: &Runtime,
    src: &Tensor<bf16>,
    dst: &mut Tensor<bf16>,
) -> Result<Choice, RuntimeError> {
    let (sv, dv) = (src.view(), dst.view());
    let request = CopyRequest::on(&sv, &dv);
    let choice = dispatch::choose(
        &request,
        &crate::catalogue::all(),
        &Device::of(rt)?,
        dispatch::tune::Cache::host(),
    )?;
    launch_roles(rt, choice.artifact, &[("src", sv), ("dst", dv)], &[])?;
    Ok(choice)
}

/// Runs `art` on an M×N random tensor and counts elements that are not bit-exact.
pub fn check_copy(
    rt: &Runtime,
    art: &KernelArtifact,
    (m, n): (usize, usize),
    seed: u64,
) -> Result<CheckReport, RuntimeError> {
    let host = Rng::new(seed).bf16s(m * n);
    let src = rt.upload(&host, &[m, n])?;
    let mut dst = rt.zeros::<bf16>(&[m, n])?;
    rt.poison(&mut dst)?;
    launch_roles(rt, art, &[("src", src.view()), ("dst", dst.view())], &[])?;
    rt.synchronize()?;
    let got = rt.download(&dst)?;
    let bad = got
        .iter()
        .zip(&host)
        .filter(|(g, h)| g.to_bits() != h.to_bits())
        .count();
    Ok(CheckReport {
        shape: (m, n, 0),
        error: bad as f64,
        ok: bad == 0,
        blocks: String::new(),
    })
}

impl Family for Copy {
    fn name(&self) -> &'static str {
        "copy"
    }

    fn owns(&self, problem: Problem) -> bool {
        problem == Problem::Copy
    }

    fn request(
        &self,
        art: &KernelArtifact,
        (m, n, _): Shape,
    ) -> Result<Box<dyn ProblemDef>, RuntimeError> {
        let elem = art.elem_of("src").unwrap_or(ElemType::Bf16);
        Ok(Box::new(CopyRequest::contiguous(elem, (m, n))))
    }

    fn default_shape(&self, _art: &KernelArtifact) -> Shape {
        (130, 136, 0)
    }

    fn check(
        &self,
        rt: &Runtime,
        art: &'static KernelArtifact,
        (m, n, _): Shape,
        seed: u64,
    ) -> Result<CheckReport, RuntimeError> {
        check_copy(rt, art, (m, n), seed)
    }

    fn simulate(
        &self,
        art: &KernelArtifact,
        (m, n, _): Shape,
        run: &SimRun,
    ) -> Result<(Stats, String), String> {
        let data = Rng::new(run.seed).bf16s(m * n);
        let dev = &mut SimDevice::new();
        let src = upload(dev, &data, &[m, n]);
        let dst = upload(dev, &[], &[m, n]);
        let roles = [("src", src), ("dst", dst.clone())];
        let (tensors, _) = by_role(art, &roles, &[]).map_err(|e| e.to_string())?;
        let stats = run.launch(art, dev, &tensors, &[])?;
        let got = download(dev, &dst);
        match got
            .iter()
            .zip(&data)
            .position(|(g, d)| g.to_bits() != d.to_bits())
        {
            None => Ok((stats, "bit-exact".into())),
            Some(i) => Err(format!("element {i} is {}, the input {}", got[i], data[i])),
        }
    }

    fn error_name(&self) -> &'static str {
        "mismatches"
    }
}
