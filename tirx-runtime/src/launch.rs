//! Launching compiled kernels: the [`KernelArtifact`] the macro emits, variant selection, the
//! parameter buffer, and the launch through `cuLaunchKernelEx` (`cuLaunchKernel` when it
//! carries no launch attribute; CUDA Driver API §6.22, "Execution Control").
//!
//! The one unsafe entry is [`Runtime::launch_ptx`]: it trusts that the PTX is memory-safe for
//! any arguments its signature accepts. [`KernelArtifact::new`] is `unsafe` and carries that
//! same promise, so [`Runtime::launch`] (used by generated launchers) is safe.
//!
//! Order of a launch, and why:
//! 1. target: the device runs the artifact's target (arch-specific PTX loads on nothing else);
//! 2. plan ([`plan_launch`]): every argument check happens before any driver call, so a wrong
//!    call is an error value, not a fault;
//! 3. load: module from the cache, or JIT (with the JIT log on failure), opting in to > 48 KB
//!    of dynamic shared memory and checking the entry's parameter count and sizes once;
//! 4. encode the TMA descriptors, fill the parameter buffer, launch with the cluster attribute.
//!
//! A launch of an artifact is kept ([`cache`]): the same artifact on the same tensors and
//! scalars again skips steps 1–4 up to the launch itself, and its path before
//! `cuLaunchKernelEx` allocates nothing — the key is hashed from the arguments in place, the
//! parameter bytes ([`params`]) were filled when it was prepared, and the `kernelParams` array
//! and launch attributes live on the stack (`host_path_timing` in `launch/tests.rs` times it).

mod cache;
mod params;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::CudaFunction;
use cudarc::driver::sys;
use tirx_ir::abi::{ConfigValue, ElemType, Signature, Target};
use tirx_ir::problem::Problem;

use crate::device::{PtxText, Runtime};
use crate::error::RuntimeError;
use crate::plan::{LaunchPlan, PlannedParam, ScalarArg, TensorMeta, plan_launch_args};
use crate::tensor::TensorArg;

pub(crate) use cache::{AsArg, LaunchCache, LaunchKey};
pub use params::ParamBuffer;

/// One compiled variant of a kernel (one config on one target), as the `#[tile_kernel]` macro
/// emits it in a `static` array.
///
/// `#[non_exhaustive]` so that only the `unsafe` [`KernelArtifact::new`] makes one outside
/// this crate: its promise is what makes [`Runtime::launch`] safe.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct KernelArtifact {
    /// The user's function name.
    pub kernel: &'static str,
    /// The configuration name (e.g. `"default"`).
    pub config: &'static str,
    /// The target the PTX is for.
    pub target: Target,
    /// The PTX module text.
    pub ptx: &'static str,
    /// The tile IR, as stable text.
    pub ir: &'static str,
    /// The kernel signature (a function so the array can be a `static`).
    pub signature: fn() -> Signature,
    /// The config's entries in declaration order (`BM = 128`, `TA = bf16`, `MB = mn`): what
    /// the artifact is, as data; the host chooses by these, never by the config's name.
    pub consts: &'static [(&'static str, ConfigValue)],
    /// The problem it solves (`solves = …` in the kernel's attribute, derived per config from
    /// the signature), or `None` for a kernel that declares none (it is never chosen by a
    /// host-side dispatcher, only launched by name).
    pub problem: Option<Problem>,
    /// The source file of the kernel (`file!()` where the macro expanded), or `""`.
    pub source_file: &'static str,
    /// The line map: `(PTX line, source line)` pairs, PTX lines increasing, each the first PTX
    /// line of a statement from that source line (the lines up to the next pair belong to it),
    /// so that a diagnostic about a PTX line (the emulator's, ptxas's) names the user's line.
    pub line_map: &'static [(u32, u32)],
}

impl KernelArtifact {
    /// Describes one compiled kernel variant.
    ///
    /// # Safety
    /// `ptx` must have been produced by the tirx compiler together with `signature`: its
    /// entry `signature().entry` takes exactly `signature().params`, and for any arguments that
    /// pass [`plan_launch`] against that signature it accesses only the memory those tensors
    /// describe and the shared/tensor memory the signature declares. (The macro upholds this;
    /// hand-written PTX should use [`Runtime::launch_ptx`] instead.)
    pub const unsafe fn new(
        kernel: &'static str,
        config: &'static str,
        target: Target,
        ptx: &'static str,
        ir: &'static str,
        signature: fn() -> Signature,
    ) -> KernelArtifact {
        KernelArtifact {
            kernel,
            config,
            target,
            ptx,
            ir,
            signature,
            consts: &[],
            problem: None,
            source_file: "",
            line_map: &[],
        }
    }

    /// The same artifact with its source file and line map (the macro adds these).
    pub const fn with_source(
        self,
        source_file: &'static str,
        line_map: &'static [(u32, u32)],
    ) -> KernelArtifact {
        KernelArtifact {
            source_file,
            line_map,
            ..self
        }
    }

    /// The source line that PTX line `ptx_line` (1-based) was written for: the line of the
    /// last map entry at or before it; `None` before the first (the module's header and
    /// declarations) or without a map.
    pub fn source_line(&self, ptx_line: u32) -> Option<u32> {
        let i = self.line_map.partition_point(|&(p, _)| p <= ptx_line);
        i.checked_sub(1).map(|i| self.line_map[i].1)
    }

    /// The same artifact described by its config entries and problem (the macro adds these;
    /// they choose artifacts, they do not change what the PTX may touch, so this is safe).
    pub const fn with_meta(
        self,
        consts: &'static [(&'static str, ConfigValue)],
        problem: Option<Problem>,
    ) -> KernelArtifact {
        KernelArtifact {
            consts,
            problem,
            ..self
        }
    }

    /// The config entry `name`.
    pub fn value(&self, name: &str) -> Option<ConfigValue> {
        self.consts
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// The integer config constant `name` (`BN`, `STAGES`, …).
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.value(name)? {
            ConfigValue::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The artifact's signature, built on the first call and kept for the process (one per
    /// artifact, never freed): a launch consults it several times — the roles' order, a
    /// plan's workspace and reduce, the cost model — and building it allocates every
    /// name, extent and grid expression anew, which on a decode GEMM's launch path cost more
    /// host time than the launches (measured on an H100, 2026-12-06: split-K at 1×4096×4096
    /// queued in 23–35 µs against 5 µs for one plain launch, `gpu_splitk`'s host-time test).
    pub fn sig(&self) -> &'static Signature {
        type Kept = Mutex<HashMap<usize, &'static Signature>>;
        static KEPT: OnceLock<Kept> = OnceLock::new();
        let key = self.signature as usize;
        let kept = KEPT.get_or_init(Kept::default);
        if let Some(sig) = kept.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return sig;
        }
        // Built outside the lock; a racing thread's copy is equal, and the first one kept wins.
        let built: &'static Signature = Box::leak(Box::new((self.signature)()));
        kept.lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_insert(built)
    }

    /// The element type of the tensor parameter `tensor` (from the signature).
    pub fn elem_of(&self, tensor: &str) -> Option<ElemType> {
        self.sig()
            .tensors
            .iter()
            .find(|t| t.name == tensor)
            .map(|t| t.elem)
    }
}

/// A kernel as data, as the macro emits it (`<kernel>::KERNEL`; a `#[tile_module]` lists its
/// kernels in `KERNELS`): its name, every compiled (config, target), and the configs a
/// `product` generated that a `static_assert` pruned.
#[derive(Debug)]
pub struct Kernel {
    /// The kernel's name (the function's).
    pub name: &'static str,
    /// Every compiled instance, configs in declaration order, each for every target.
    pub artifacts: &'static [KernelArtifact],
    /// Generated configs dropped by a failed `static_assert`: (config, the assertion's message).
    pub pruned: &'static [(&'static str, &'static str)],
}

impl Kernel {
    /// The problem its first artifact solves (`None` if it declares none); configs may solve
    /// variants of it (a GEMM's `nn` configs take B given K×N), so choose by
    /// [`KernelArtifact::problem`].
    pub fn problem(&self) -> Option<Problem> {
        self.artifacts.first().and_then(|a| a.problem)
    }

    /// Its configs' names, each once, in declaration order.
    pub fn configs(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for a in self.artifacts {
            if !out.contains(&a.config) {
                out.push(a.config);
            }
        }
        out
    }
}

/// The artifact for `config` on `target`, or an error listing every compiled (config, target).
pub fn select<'a>(
    artifacts: &'a [KernelArtifact],
    config: &str,
    target: Target,
) -> Result<&'a KernelArtifact, RuntimeError> {
    artifacts
        .iter()
        .find(|a| a.config == config && a.target == target)
        .ok_or_else(|| RuntimeError::NoSuchKernel {
            kernel: artifacts
                .first()
                .map_or("<no artifacts>", |a| a.kernel)
                .to_string(),
            config: config.to_string(),
            target,
            available: artifacts
                .iter()
                .map(|a| (a.config.to_string(), a.target))
                .collect(),
        })
}

/// A launch checked against its signature, its module loaded and its parameters encoded, not
/// yet queued ([`Runtime::prepare_args`]). It borrows the runtime for as long as the tensors
/// it was prepared with (one lifetime), so none of them can go away before
/// [`PreparedLaunch::submit`].
pub struct PreparedLaunch<'a> {
    rt: &'a Runtime,
    launch: Arc<CachedLaunch>,
}

impl PreparedLaunch<'_> {
    /// The plan it was prepared with (grid, block, cluster, shared memory, parameters).
    pub fn plan(&self) -> &LaunchPlan {
        &self.launch.plan
    }

    /// Queues the kernel on the runtime's stream (`cuLaunchKernelEx`); returns once queued.
    pub fn submit(self) -> Result<(), RuntimeError> {
        self.rt.context().bind_to_thread()?;
        // SAFETY: `prepare_parts` checked the arguments against the signature and laid out
        // exactly its parameters; the tensors outlive `self` (its lifetime), and the rest is
        // the promise of the artifact or of `launch_ptx`'s caller, made when it was prepared.
        unsafe { self.rt.launch_planned(&self.launch) }
    }

    /// The parameter bytes it will launch with.
    pub fn params(&self) -> &ParamBuffer {
        &self.launch.params
    }
}

/// A launch of a compiled artifact as its preparation left it — the loaded function, the
/// checked plan and the parameter bytes with the encoded TMA descriptors — kept by the runtime
/// ([`LaunchKey`]) so that the next launch of the same artifact on the same tensors and scalars
/// skips the signature, the plan, the module lookup, the descriptors' encoding and the filling
/// of the parameters (the key fixes every byte of them): a decode step calls the same GEMMs on
/// the same buffers every token, and on an idle GPU that host work is the step's time.
pub(crate) struct CachedLaunch {
    function: CudaFunction,
    plan: LaunchPlan,
    params: ParamBuffer,
    /// The kernel waits for its prerequisite grids (`griddepcontrol.wait`, the language's
    /// `grid::dependency_wait()`): it is launched as a programmatic dependent of the work
    /// before it on the stream.
    dependent: bool,
}

impl Runtime {
    /// Launches a compiled variant on this runtime's stream after checking `args` against its
    /// signature. Returns once the launch is queued; [`Runtime::synchronize`] waits for it.
    pub fn launch(
        &self,
        artifact: &KernelArtifact,
        args: &[TensorArg<'_>],
    ) -> Result<(), RuntimeError> {
        self.launch_with(artifact, args, &[])
    }

    /// [`Runtime::launch`] for a kernel that also takes scalar (`f32`) arguments, `scalars` in
    /// the signature's order.
    pub fn launch_with(
        &self,
        artifact: &KernelArtifact,
        args: &[TensorArg<'_>],
        scalars: &[f32],
    ) -> Result<(), RuntimeError> {
        // On the stack for the usual few scalars: this is every plain launch's path.
        const INLINE: usize = 8;
        if let Some(inline) = scalars.get(..INLINE.min(scalars.len()))
            && inline.len() == scalars.len()
        {
            let mut typed = [ScalarArg::F32(0.0); INLINE];
            typed
                .iter_mut()
                .zip(inline)
                .for_each(|(t, &v)| *t = ScalarArg::F32(v));
            return self.launch_args(artifact, args, &typed[..inline.len()]);
        }
        let scalars: Vec<ScalarArg> = scalars.iter().map(|&v| ScalarArg::F32(v)).collect();
        self.launch_args(artifact, args, &scalars)
    }

    /// [`Runtime::launch`] with typed scalar arguments (`f32`, `i32`, `u32`) in the signature's
    /// order; a value of another type than its parameter is [`RuntimeError::ScalarType`],
    /// before any launch.
    pub fn launch_args(
        &self,
        artifact: &KernelArtifact,
        args: &[TensorArg<'_>],
        scalars: &[ScalarArg],
    ) -> Result<(), RuntimeError> {
        self.prepare_args(artifact, args, scalars)?.submit()
    }

    /// The checks [`Runtime::launch_args`] makes before it loads or encodes anything — the
    /// artifact's target against the device, the tensors' context, every argument against the
    /// signature and the launch plan ([`plan_launch_args`]) — without queueing: the error a
    /// later kernel of a plan would raise, raised before the plan's first kernel is queued. A
    /// launch prepared before on the same arguments passed them already and is not checked
    /// again.
    pub fn check_args(
        &self,
        artifact: &KernelArtifact,
        args: &[TensorArg<'_>],
        scalars: &[ScalarArg],
    ) -> Result<(), RuntimeError> {
        self.check_in(artifact, args, scalars)
    }

    /// [`Runtime::check_args`] on references to the tensor arguments (a launch by role orders
    /// references to its caller's arguments instead of cloning them).
    pub fn check_refs(
        &self,
        artifact: &KernelArtifact,
        args: &[&TensorArg<'_>],
        scalars: &[ScalarArg],
    ) -> Result<(), RuntimeError> {
        self.check_in(artifact, args, scalars)
    }

    fn check_in<A: AsArg>(
        &self,
        artifact: &KernelArtifact,
        args: &[A],
        scalars: &[ScalarArg],
    ) -> Result<(), RuntimeError> {
        if self
            .launches()
            .get(&LaunchKey::of(artifact, args, scalars))
            .is_some()
        {
            return Ok(());
        }
        let sig = self.artifact_signature(artifact)?;
        self.checked_plan(sig, args, scalars).map(drop)
    }

    /// Everything [`Runtime::launch_args`] does before queueing the kernel — the checks, the
    /// module load, the TMA descriptors, the parameter buffer — as a launch that
    /// [`PreparedLaunch::submit`] queues later on this runtime's stream. The runtime keeps what
    /// it prepared (up to 1024 launches, shared by the runtimes of one context): the same
    /// artifact on the same tensors (addresses and layouts) and scalars again only copies the
    /// parameters.
    ///
    /// A plan of several kernels should not prepare the later ones before queueing the first:
    /// while the GPU is idle (a decode GEMM called once per token) the second kernel's host work
    /// then sits in front of the first kernel instead of overlapping it (measured on an H100,
    /// 2026-12-06: split-K at 1×4096×4096 fell from 0.86× to 0.53× cuBLASLt that way). It checks
    /// the later ones with [`Runtime::check_args`] (an error before anything runs), then
    /// prepares and submits each in turn.
    pub fn prepare_args<'a>(
        &'a self,
        artifact: &KernelArtifact,
        args: &[TensorArg<'a>],
        scalars: &[ScalarArg],
    ) -> Result<PreparedLaunch<'a>, RuntimeError> {
        self.prepare_in(artifact, args, scalars)
    }

    /// [`Runtime::prepare_args`] on references to the tensor arguments (a launch by role orders
    /// references to its caller's arguments instead of cloning them).
    pub fn prepare_refs<'a>(
        &'a self,
        artifact: &KernelArtifact,
        args: &[&TensorArg<'a>],
        scalars: &[ScalarArg],
    ) -> Result<PreparedLaunch<'a>, RuntimeError> {
        self.prepare_in(artifact, args, scalars)
    }

    /// [`Runtime::prepare_args`] for either form of the arguments; the public entries tie the
    /// tensors' lifetime to the returned launch's.
    fn prepare_in<'a, A: AsArg>(
        &'a self,
        artifact: &KernelArtifact,
        args: &[A],
        scalars: &[ScalarArg],
    ) -> Result<PreparedLaunch<'a>, RuntimeError> {
        let key = LaunchKey::of(artifact, args, scalars);
        let launch = match self.launches().get(&key) {
            Some(launch) => launch,
            None => {
                let sig = self.artifact_signature(artifact)?;
                // SAFETY: `KernelArtifact::new`'s contract is exactly `launch_ptx`'s.
                let launch = Arc::new(unsafe {
                    self.prepare_parts(PtxText::Static(artifact.ptx), sig, args, scalars)
                }?);
                self.launches().insert(&key, launch.clone());
                launch
            }
        };
        Ok(PreparedLaunch { rt: self, launch })
    }

    /// `artifact`'s signature, once its target is checked against the device's and the
    /// signature's own.
    fn artifact_signature(
        &self,
        artifact: &KernelArtifact,
    ) -> Result<&'static Signature, RuntimeError> {
        let target = self.target()?;
        if artifact.target != target {
            return Err(RuntimeError::UnsupportedDevice {
                cc: self.compute_capability(),
                want: Some(artifact.target),
            });
        }
        let sig = artifact.sig();
        if sig.target != artifact.target {
            return Err(RuntimeError::BadSignature {
                entry: sig.entry.clone(),
                reason: format!(
                    "the artifact is for {} but its signature says {}",
                    artifact.target.name(),
                    sig.target.name()
                ),
            });
        }
        Ok(sig)
    }

    /// Selects the variant for `config` on this device's target ([`select`]) and launches it:
    /// what a generated launcher calls.
    pub fn launch_variant(
        &self,
        artifacts: &[KernelArtifact],
        config: &str,
        args: &[TensorArg<'_>],
    ) -> Result<(), RuntimeError> {
        self.launch(select(artifacts, config, self.target()?)?, args)
    }

    /// [`Runtime::launch_variant`] with scalar arguments ([`Runtime::launch_with`]).
    pub fn launch_variant_with(
        &self,
        artifacts: &[KernelArtifact],
        config: &str,
        args: &[TensorArg<'_>],
        scalars: &[f32],
    ) -> Result<(), RuntimeError> {
        self.launch_with(select(artifacts, config, self.target()?)?, args, scalars)
    }

    /// [`Runtime::launch_variant`] with typed scalar arguments ([`Runtime::launch_args`]).
    pub fn launch_variant_args(
        &self,
        artifacts: &[KernelArtifact],
        config: &str,
        args: &[TensorArg<'_>],
        scalars: &[ScalarArg],
    ) -> Result<(), RuntimeError> {
        self.launch_args(select(artifacts, config, self.target()?)?, args, scalars)
    }

    /// Launches entry `sig.entry` of `ptx` with `args` after checking them against `sig`.
    ///
    /// # Safety
    /// The PTX entry must take exactly `sig.params` (their count and sizes are also checked at
    /// load where the driver can report them), and for any arguments that pass [`plan_launch`]
    /// against `sig` it must access only the global memory those tensors describe and the
    /// shared memory `sig` declares. The checks here cannot see what the PTX does.
    pub unsafe fn launch_ptx(
        &self,
        ptx: &str,
        sig: &Signature,
        args: &[TensorArg<'_>],
    ) -> Result<(), RuntimeError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.launch_text(PtxText::Borrowed(ptx), sig, args, &[]) }
    }

    /// [`Runtime::launch_ptx`], told whether the text is `'static` (then the module cache
    /// recognises it by address instead of hashing it).
    ///
    /// # Safety
    /// As [`Runtime::launch_ptx`].
    unsafe fn launch_text(
        &self,
        ptx: PtxText<'_>,
        sig: &Signature,
        args: &[TensorArg<'_>],
        scalars: &[ScalarArg],
    ) -> Result<(), RuntimeError> {
        // SAFETY: the caller's promise, passed on.
        let launch = unsafe { self.prepare_parts(ptx, sig, args, scalars) }?;
        PreparedLaunch {
            rt: self,
            launch: Arc::new(launch),
        }
        .submit()
    }

    /// `sig`'s target against the device's, the tensors' context and the launch plan of
    /// `args`: the checks before anything is loaded or encoded.
    fn checked_plan<A: AsArg>(
        &self,
        sig: &Signature,
        args: &[A],
        scalars: &[ScalarArg],
    ) -> Result<(Vec<TensorMeta>, LaunchPlan), RuntimeError> {
        let target = self.target()?;
        if sig.target != target {
            return Err(RuntimeError::UnsupportedDevice {
                cc: self.compute_capability(),
                want: Some(sig.target),
            });
        }
        if let Some(i) = args.iter().position(|a| !a.as_arg().belongs_to(self)) {
            let tensor = sig
                .tensors
                .get(i)
                .map_or_else(|| format!("#{i}"), |t| t.name.clone());
            return Err(RuntimeError::WrongContext { tensor });
        }
        let metas: Vec<TensorMeta> = args.iter().map(|a| a.as_arg().meta().clone()).collect();
        let plan = plan_launch_args(sig, &metas, scalars, self.limits())?;
        Ok((metas, plan))
    }

    /// The steps of [`Runtime::launch_text`] up to the parameter buffer: the checks, the
    /// function (its module loaded once per context) and the TMA descriptors.
    ///
    /// # Safety
    /// As [`Runtime::launch_ptx`].
    unsafe fn prepare_parts<A: AsArg>(
        &self,
        ptx: PtxText<'_>,
        sig: &Signature,
        args: &[A],
        scalars: &[ScalarArg],
    ) -> Result<CachedLaunch, RuntimeError> {
        let (metas, plan) = self.checked_plan(sig, args, scalars)?;
        let function = self.function(&sig.entry, ptx, sig.smem_bytes, |f| {
            verify_param_layout(f, sig)
        })?;
        let mut maps = Vec::new();
        for p in &plan.params {
            if let PlannedParam::TensorMap {
                tensor,
                box_dims,
                swizzle,
            } = p
            {
                let name = &sig.tensors[*tensor].name;
                maps.push(
                    self.encode_tiled(name, &metas[*tensor], box_dims, *swizzle)?
                        .as_bytes(),
                );
            }
        }
        // A kernel that waits for its prerequisites may start before they finish (programmatic
        // dependent launch); one that does not must not, or it would read their outputs early.
        let dependent = ptx.text().contains("griddepcontrol.wait");
        Ok(CachedLaunch {
            function,
            params: ParamBuffer::new(&plan, &maps),
            plan,
            dependent,
        })
    }

    /// `cuLaunchKernelEx` with the plan's grid, block, shared memory and attributes
    /// ([`launch_attributes`]), and the kept parameter bytes; a launch with no attribute (no
    /// cluster, not a programmatic dependent) through the classic `cuLaunchKernel`, the entry
    /// the CUDA runtime's own launches reach, with the same grid, block, shared memory, stream
    /// and parameters (issue #32: a plain launch spent 5–10 µs of host time in the driver
    /// on the H100/H200, against about 3 µs for torch's whole launch path).
    ///
    /// # Safety
    /// `launch.params` must hold the entry's parameters, as [`Runtime::launch_ptx`] builds
    /// them, for tensors that are still allocated.
    unsafe fn launch_planned(&self, launch: &CachedLaunch) -> Result<(), RuntimeError> {
        let plan = &launch.plan;
        let (mut attrs, num_attrs) = launch_attributes(plan, launch.dependent);
        let mut pointers = launch.params.pointers();
        debug_assert_eq!(pointers.as_slice().len(), plan.params.len());
        if num_attrs == 0 {
            // SAFETY: as below; `cuLaunchKernel` takes the same parameters without a config.
            unsafe {
                sys::cuLaunchKernel(
                    launch.function.cu_function(),
                    plan.grid[0],
                    plan.grid[1],
                    plan.grid[2],
                    plan.block[0],
                    plan.block[1],
                    plan.block[2],
                    plan.smem_bytes,
                    self.stream().cu_stream(),
                    pointers.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
                .result()?;
            }
            return Ok(());
        }
        let config = sys::CUlaunchConfig {
            gridDimX: plan.grid[0],
            gridDimY: plan.grid[1],
            gridDimZ: plan.grid[2],
            blockDimX: plan.block[0],
            blockDimY: plan.block[1],
            blockDimZ: plan.block[2],
            sharedMemBytes: plan.smem_bytes,
            hStream: self.stream().cu_stream(),
            attrs: attrs.as_mut_ptr(),
            numAttrs: num_attrs as u32,
        };
        // SAFETY: `config`, `attrs` and `pointers` (each into `launch.params`) outlive the
        // call, which only reads the parameters and copies them before returning; the rest is
        // this function's precondition.
        unsafe {
            sys::cuLaunchKernelEx(
                &config,
                launch.function.cu_function(),
                pointers.as_mut_ptr(),
                std::ptr::null_mut(),
            )
            .result()?;
        }
        Ok(())
    }
}

/// The launch attributes of `plan`, in the first `.1` entries: (when not 1×1×1) the
/// cluster-dimension attribute and, for a `dependent` kernel, the programmatic stream
/// serialization attribute (programmatic dependent launch: the kernel may be scheduled once
/// the grid before it on the stream has issued `griddepcontrol.launch_dependents` in every CTA
/// or finished, and its `griddepcontrol.wait` holds it until that grid completed). On the
/// stack: this runs on every launch.
fn launch_attributes(plan: &LaunchPlan, dependent: bool) -> ([sys::CUlaunchAttribute; 2], usize) {
    let blank = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_IGNORE,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue { pad: [0; 64] },
    };
    let mut attrs = [blank; 2];
    let mut n = 0;
    if plan.cluster != [1, 1, 1] {
        let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
        value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
            x: plan.cluster[0],
            y: plan.cluster[1],
            z: plan.cluster[2],
        };
        attrs[n] = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
            pad: [0; 4],
            value,
        };
        n += 1;
    }
    if dependent {
        let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
        value.programmaticStreamSerializationAllowed = 1;
        attrs[n] = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value,
        };
        n += 1;
    }
    (attrs, n)
}

/// Checks that the loaded entry has every parameter of the signature, with the same sizes,
/// through `cuFuncGetParamInfo` (driver 12.4+; skipped on older drivers), so a signature that
/// disagrees with its PTX is an error instead of a kernel reading garbage.
///
/// Extra trailing PTX parameters are not detected: finding them means asking for one index
/// past the end, which fails by design and shows up as an API error in every
/// `compute-sanitizer` run (`cuFuncGetParamCount` needs a CUDA 13.2 driver).
///
/// Offsets are not compared: on the H200 (driver 580) the driver reports a first
/// `.param .align 64 .b8 [128]` at offset 48, because it aligns parameters within its constant
/// bank, not from the start of the parameter list. Passing `kernelParams` as one pointer per
/// parameter (as [`Runtime::launch_ptx`] does) leaves the layout to the driver, so only the
/// sizes must agree.
fn verify_param_layout(function: &CudaFunction, sig: &Signature) -> Result<(), RuntimeError> {
    let mut version = 0;
    // SAFETY: the driver is loaded (a `Runtime` exists); writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    if version < 12040 {
        return Ok(());
    }
    let info = |i: usize| {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `function` is a loaded entry; the call writes two `usize`s or fails.
        let r =
            unsafe { sys::cuFuncGetParamInfo(function.cu_function(), i, &mut offset, &mut size) };
        r.result().map(|()| size)
    };
    let bad = |reason: String| RuntimeError::BadSignature {
        entry: sig.entry.clone(),
        reason,
    };
    for (i, p) in sig.params.iter().enumerate() {
        let want = p.size_align(sig).0;
        match info(i) {
            Ok(got) if got == want => {}
            Ok(got) => {
                return Err(bad(format!(
                    "parameter {i} ({p:?}) has {got} bytes in the PTX but {want} in the signature"
                )));
            }
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_INVALID_VALUE => {
                return Err(bad(format!(
                    "the PTX entry has {i} parameter(s); the signature lists {}",
                    sig.params.len()
                )));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
