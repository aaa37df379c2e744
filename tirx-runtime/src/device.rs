//! The device context: [`Runtime`] opens one GPU, records its limits, caches loaded kernels and
//! times work on its stream.
//!
//! Invariants:
//! - `Runtime::new` never panics for want of a driver or a GPU. With cudarc's dynamic loading
//!   (the default) the first driver call panics when `libcuda` is missing, so `new` asks
//!   `cudarc::driver::sys::is_culib_present` before making any call; every later call (here
//!   and in the other modules) goes through a `Runtime`, whose existence proves the library
//!   is loaded. With the `dynamic-linking` feature the program links `libcuda`, so it is
//!   loaded before `main`; a stub library (no driver) answers every call with an error.
//! - All work (allocation, copies, launches, timing events) goes to the one stream
//!   `Runtime::stream`, so it runs in issue order and buffers freed on drop
//!   (`cuMemFreeAsync` on that stream) outlive the kernels that use them. That stream is the
//!   context's default stream, or one another library owns ([`Runtime::on_borrowed_stream`]:
//!   PyTorch's current stream), never one this crate creates.
//! - The context is the device's primary context (`cuDevicePrimaryCtxRetain`), the one the
//!   CUDA runtime — and so PyTorch — uses: device pointers another library allocated there are
//!   valid in launches here.
//! - The module cache maps a PTX entry name to its loaded function; an entry is reloaded if
//!   asked for with different PTX text.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;
use tirx_ir::abi::Target;

use crate::error::RuntimeError;
use crate::launch::{CachedLaunch, LaunchCache};
use crate::plan::DeviceLimits;

/// Dynamic shared memory a kernel gets without opting in (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
pub const DEFAULT_DYN_SMEM: u32 = 48 * 1024;

/// Whether the CUDA driver library can be loaded on this machine, asked once per process.
///
/// cudarc's `is_culib_present` formats its 17 candidate library names and `dlopen`s them in
/// turn (then closes the one it found) on every call; a name that is not there is searched
/// for along the whole library path. The Python binding asks before every launch (saving the
/// thread's context), so the answer is kept: a driver installed while a process runs is not
/// seen by it, as it would not be by the CUDA runtime either.
#[cfg(not(feature = "dynamic-linking"))]
pub fn driver_present() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: only tries `dlopen` on the candidate library names; calls nothing in them.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether the CUDA driver library can be loaded on this machine: always, with the
/// `dynamic-linking` feature, since the process links it (the loader refused to start the
/// program otherwise).
#[cfg(feature = "dynamic-linking")]
pub fn driver_present() -> bool {
    true
}

/// A loaded kernel: its module (kept alive by the function too) and the function.
pub(crate) struct LoadedKernel {
    /// The module; held so the cache shows what it owns.
    _module: Arc<CudaModule>,
    /// The entry point.
    pub(crate) function: CudaFunction,
    /// Hash of the PTX text it came from.
    ptx_hash: u64,
    /// Address and length of that text when it is `'static` (a compiled artifact's): such
    /// text never moves or changes, so the same address and length is the same PTX, and a
    /// launch need not hash the whole text again (3–14 µs per launch for the GEMMs, measured
    /// on the development machine, 2026-11-30 — as long as a small kernel runs).
    static_ptx: Option<(usize, usize)>,
}

/// The PTX a launch runs: its text, and whether the text is `'static` (see
/// [`LoadedKernel::static_ptx`]).
#[derive(Clone, Copy)]
pub(crate) enum PtxText<'a> {
    /// Text that lives for the whole program (a [`crate::KernelArtifact`]'s).
    Static(&'static str),
    /// Text that may be freed, and its address reused for other text.
    Borrowed(&'a str),
}

impl<'a> PtxText<'a> {
    /// The text.
    pub(crate) fn text(self) -> &'a str {
        match self {
            PtxText::Static(s) => s,
            PtxText::Borrowed(s) => s,
        }
    }
    fn static_key(self) -> Option<(usize, usize)> {
        match self {
            PtxText::Static(s) => Some((s.as_ptr() as usize, s.len())),
            PtxText::Borrowed(_) => None,
        }
    }
}

/// One GPU, opened: its context, stream, limits and loaded kernels.
pub struct Runtime {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    cc: (i32, i32),
    sm_count: u32,
    limits: DeviceLimits,
    memory: Option<(u32, u32)>,
    /// Shared by the runtimes [`Runtime::on_borrowed_stream`] makes: a kernel loads once per
    /// context, whichever stream launches it.
    modules: Arc<Mutex<HashMap<String, LoadedKernel>>>,
    /// The launches prepared so far ([`crate::launch::CachedLaunch`]), shared like `modules`.
    launches: Arc<LaunchCache<CachedLaunch>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("ordinal", &self.ctx.ordinal())
            .field("name", &self.name)
            .field("cc", &self.cc)
            .field("sm_count", &self.sm_count)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Opens GPU `ordinal`. Returns [`RuntimeError::NoDriver`] when `libcuda` cannot be loaded
    /// and [`RuntimeError::NoGpu`] when there is no such device; never panics for either.
    pub fn new(ordinal: usize) -> Result<Runtime, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::NoDriver(
                "libcuda.so could not be loaded; install the NVIDIA driver or put its folder on \
                 LD_LIBRARY_PATH"
                    .into(),
            ));
        }
        let found = match CudaContext::device_count() {
            Ok(n) => n.max(0) as usize,
            Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => 0,
            // The toolkit's link-only `libcuda` (or tirx-candle's test stub) stands in for a
            // driver: every call answers this.
            Err(DriverError(sys::CUresult::CUDA_ERROR_STUB_LIBRARY)) => {
                return Err(RuntimeError::NoDriver(
                    "libcuda.so.1 is a stub library (CUDA_ERROR_STUB_LIBRARY), not the NVIDIA \
                     driver; install the driver or put its folder first on LD_LIBRARY_PATH"
                        .into(),
                ));
            }
            Err(e) => return Err(e.into()),
        };
        if ordinal >= found {
            return Err(RuntimeError::NoGpu { ordinal, found });
        }
        let ctx = CudaContext::new(ordinal)?;
        let attr = |a: Attr| -> Result<u32, RuntimeError> { Ok(ctx.attribute(a)?.max(0) as u32) };
        let sm_count = attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let limits = DeviceLimits {
            max_dyn_smem: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            // Portable cluster size (CUDA C Programming Guide, "Thread Block Clusters"); larger
            // needs CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, which we do not set.
            max_cluster_size: 8,
            max_grid: [
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            sm_count,
        };
        // Read once here, not per launch: a cost model that asked for these at every
        // host-chosen launch made each ~0.25 ms slower on the H100 (2026-12-06; the only
        // per-launch driver call it added, so the likely cause, not profiled).
        let memory = attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            .ok()
            .zip(attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).ok())
            .filter(|&(clock, bits)| clock > 0 && bits > 0);
        let cc = ctx.compute_capability()?;
        let name = ctx.name()?;
        let stream = ctx.default_stream();
        Ok(Runtime {
            ctx,
            stream,
            name,
            cc,
            sm_count,
            limits,
            memory,
            modules: Arc::new(Mutex::new(HashMap::new())),
            launches: Arc::default(),
        })
    }

    /// This runtime — same device, primary context, limits and loaded kernels — issuing its
    /// work on `stream`, a stream another library owns (PyTorch's current stream,
    /// `torch.cuda.current_stream().cuda_stream`; null is the context's legacy default stream).
    /// Cheap (a few reference counts and the device's name): make one per call when the
    /// owner's current stream may change between calls. Dropping it leaves the stream alone.
    ///
    /// # Safety
    /// `stream` must be null or a live stream of this runtime's context (the device's primary
    /// context), and its owner must keep it alive while the returned runtime, or work issued
    /// through it, may use it. Ordering against work the owner issues elsewhere is the
    /// caller's: work issued here runs in order with the owner's work on the same stream.
    pub unsafe fn on_borrowed_stream(&self, stream: sys::CUstream) -> Runtime {
        // SAFETY: the caller's promise is cudarc's `wrap_borrowed_stream`'s, passed on.
        let stream = unsafe { self.ctx.wrap_borrowed_stream(stream) };
        Runtime {
            ctx: self.ctx.clone(),
            stream,
            name: self.name.clone(),
            cc: self.cc,
            sm_count: self.sm_count,
            limits: self.limits,
            memory: self.memory,
            modules: self.modules.clone(),
            launches: self.launches.clone(),
        }
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every operation of this runtime is issued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Compute capability (major, minor).
    pub fn compute_capability(&self) -> (i32, i32) {
        self.cc
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// The limits launches are checked against.
    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }

    /// The device memory's clock (kHz, `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`) and bus width
    /// (bits, `CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH`), read when the runtime was opened;
    /// `None` where the driver answers neither.
    pub fn memory_clock_and_bus(&self) -> Option<(u32, u32)> {
        self.memory
    }

    /// The tirx target this device runs: 9.0 → `sm_90a`, 10.0 → `sm_100a`. Arch-specific
    /// (`a`) code runs only on its exact compute capability, so anything else is unsupported.
    pub fn target(&self) -> Result<Target, RuntimeError> {
        target_for(self.cc)
    }

    /// The launches this runtime's context has prepared ([`Runtime::prepare_args`]).
    pub(crate) fn launches(&self) -> &LaunchCache<CachedLaunch> {
        &self.launches
    }

    /// How many kernels are loaded (in the cache this runtime shares).
    #[cfg(all(test, feature = "gpu"))]
    pub(crate) fn loaded_kernels(&self) -> usize {
        self.modules.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Waits for all work issued on the stream.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        Ok(self.stream.synchronize()?)
    }

    /// Runs `work` (which issues GPU work on [`Runtime::stream`], e.g. launches) between two
    /// timing events and returns the GPU time between them in milliseconds. Waits for the work.
    pub fn time_ms(
        &self,
        work: impl FnOnce() -> Result<(), RuntimeError>,
    ) -> Result<f32, RuntimeError> {
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.ctx.new_event(flags)?;
        let end = self.ctx.new_event(flags)?;
        start.record(&self.stream)?;
        work()?;
        end.record(&self.stream)?;
        Ok(start.elapsed_ms(&end)?)
    }

    /// Times `iters` runs of `work` after `warmup` untimed ones; returns the mean milliseconds
    /// per run.
    pub fn bench_ms(
        &self,
        warmup: usize,
        iters: usize,
        mut work: impl FnMut() -> Result<(), RuntimeError>,
    ) -> Result<f32, RuntimeError> {
        for _ in 0..warmup {
            work()?;
        }
        let total = self.time_ms(|| (0..iters).try_for_each(|_| work()))?;
        Ok(total / iters.max(1) as f32)
    }

    /// The function `entry` of `ptx`, loading (and caching) the module on first use. On that
    /// first load, opts the function in to `smem_bytes` of dynamic shared memory when it exceeds
    /// the 48 KB default, and runs `verify` on it (a failed check caches nothing).
    pub(crate) fn function(
        &self,
        entry: &str,
        ptx: PtxText<'_>,
        smem_bytes: u32,
        verify: impl FnOnce(&CudaFunction) -> Result<(), RuntimeError>,
    ) -> Result<CudaFunction, RuntimeError> {
        let mut cache = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(k), Some(key)) = (cache.get(entry), ptx.static_key())
            && k.static_ptx == Some(key)
        {
            return Ok(k.function.clone());
        }
        let ptx_hash = {
            let mut h = DefaultHasher::new();
            ptx.text().hash(&mut h);
            h.finish()
        };
        if let Some(k) = cache.get_mut(entry)
            && k.ptx_hash == ptx_hash
        {
            if ptx.static_key().is_some() {
                k.static_ptx = ptx.static_key();
            }
            return Ok(k.function.clone());
        }
        let ptx = ptx.text();
        let module = self.load_module(entry, ptx)?;
        let function = match module.load_function(entry) {
            Ok(f) => f,
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) => {
                return Err(RuntimeError::BadSignature {
                    entry: entry.to_string(),
                    reason: "the PTX has no `.entry` of that name".into(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        if smem_bytes > DEFAULT_DYN_SMEM {
            function.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem_bytes as i32,
            )?;
        }
        verify(&function)?;
        cache.insert(
            entry.to_string(),
            LoadedKernel {
                _module: module,
                function: function.clone(),
                ptx_hash,
                static_ptx: None,
            },
        );
        Ok(function)
    }

    /// Loads `ptx` through the driver JIT. cudarc's loader reports only the error code, so on
    /// failure the PTX is loaded once more with an error-log buffer to surface the JIT's message.
    fn load_module(&self, entry: &str, ptx: &str) -> Result<Arc<CudaModule>, RuntimeError> {
        if ptx.contains('\0') {
            return Err(RuntimeError::ModuleLoad {
                entry: entry.to_string(),
                code: sys::CUresult::CUDA_ERROR_INVALID_PTX,
                log: "the PTX text contains a NUL byte".into(),
            });
        }
        match self.ctx.load_module(Ptx::from_src(ptx)) {
            Ok(m) => Ok(m),
            Err(DriverError(code)) => {
                self.ctx.bind_to_thread()?;
                let log = jit_error_log(ptx);
                Err(RuntimeError::ModuleLoad {
                    entry: entry.to_string(),
                    code,
                    log,
                })
            }
        }
    }
}

/// Maps a compute capability to the tirx target that runs on it.
pub fn target_for(cc: (i32, i32)) -> Result<Target, RuntimeError> {
    match cc {
        (9, 0) => Ok(Target::Sm90a),
        (10, 0) => Ok(Target::Sm100a),
        _ => Err(RuntimeError::UnsupportedDevice { cc, want: None }),
    }
}

/// Loads `ptx` with `cuModuleLoadDataEx` and `CU_JIT_ERROR_LOG_BUFFER`, returning the JIT's
/// error log (and unloading the module should the load succeed this time).
fn jit_error_log(ptx: &str) -> String {
    const LOG_BYTES: usize = 16 * 1024;
    let mut log = vec![0u8; LOG_BYTES];
    let src = std::ffi::CString::new(ptx).unwrap_or_default();
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    // The driver takes option values as `void*`; the size is passed in the pointer's bits.
    let mut values = [
        log.as_mut_ptr().cast::<std::ffi::c_void>(),
        LOG_BYTES as *mut std::ffi::c_void,
    ];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: the driver is loaded and a context is current (the caller bound it); `log` has
    // LOG_BYTES writable bytes, as the size option says; `src` is NUL-terminated.
    let code = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            src.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if code == sys::CUresult::CUDA_SUCCESS {
        // SAFETY: `module` was just loaded and is not shared.
        unsafe { sys::cuModuleUnload(module) };
        return "(the JIT accepted the PTX when loaded again with a log buffer)".into();
    }
    let len = log.iter().position(|&b| b == 0).unwrap_or(LOG_BYTES);
    String::from_utf8_lossy(&log[..len]).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_without_driver_or_gpu_is_an_error_not_a_panic() {
        // This test machine has no GPU. With a driver and a GPU (the H200 machine) the
        // runtime opens and reports a supported target.
        match Runtime::new(0) {
            Err(RuntimeError::NoDriver(msg)) => assert!(msg.contains("libcuda")),
            Err(RuntimeError::NoGpu { ordinal: 0, .. }) => {}
            Ok(rt) => {
                assert!(rt.sm_count() > 0);
                rt.target().unwrap();
            }
            Err(e) => panic!("unexpected error: {e}"),
        }
        // An ordinal beyond any machine's devices is NoGpu (or NoDriver), never a panic.
        assert!(matches!(
            Runtime::new(4096),
            Err(RuntimeError::NoDriver(_) | RuntimeError::NoGpu { ordinal: 4096, .. })
        ));
    }

    #[test]
    fn targets_by_compute_capability() {
        assert_eq!(target_for((9, 0)).unwrap(), Target::Sm90a);
        assert_eq!(target_for((10, 0)).unwrap(), Target::Sm100a);
        for cc in [(8, 0), (9, 1), (10, 3), (12, 0)] {
            let err = target_for(cc).unwrap_err();
            assert!(matches!(
                err,
                RuntimeError::UnsupportedDevice { want: None, .. }
            ));
        }
        assert_eq!(
            target_for((12, 0)).unwrap_err().to_string(),
            "the device has compute capability 12.0; tirx targets sm_90a (9.0) and sm_100a (10.0)"
        );
    }
}
