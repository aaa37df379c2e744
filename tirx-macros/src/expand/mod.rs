//! The macro's expansion: read the attribute and the function, lower the body once per config,
//! compile each config × target through `tirx_ir::passes::run_pipeline` and `tirx_ptx`, and
//! emit the module (`launcher.rs`) with the signatures as tokens (`signature.rs`). A
//! `#[tile_module]` (`module.rs`) expands each of its kernels the same way, with its tile
//! functions.
//!
//! Errors from every stage go to one `ErrorSink` and come out as `compile_error!`s next to the
//! module skeleton. The passes only run when the front end found no error, so their
//! diagnostics are never caused by the front end's recovery.

mod launcher;
mod module;
mod signature;

pub use module::{lone_tile_fn, tile_module};

use crate::args;
use crate::error::{Diag, ErrorSink, span_range};
use crate::model::{ConfigDef, KernelDef};
use crate::module::TileFns;
use crate::parse::{self, Lowered};
use proc_macro2::TokenStream;
use quote::quote;
use tirx_ir::abi::{Signature, SymExpr, Target};

/// One compiled instance.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// Config name.
    pub config: String,
    /// Target.
    pub target: Target,
    /// PTX text.
    pub ptx: String,
    /// The `Tile`-phase IR text (before the passes).
    pub ir: String,
    /// The final signature (after the passes).
    pub sig: Signature,
}

/// `#[tile_kernel(attr)] item` → the module (plus `compile_error!`s on errors).
pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => {
            let message = format!("`#[tile_kernel]` applies to a function: {e}");
            return syn::Error::new(e.span(), message).into_compile_error();
        }
    };
    kernel(attr, item, &TileFns::default())
}

/// One kernel (its `#[tile_kernel]` attribute's tokens `attr` and the function) that may call
/// the tile functions `fns` → its module (plus `compile_error!`s on errors).
pub fn kernel(attr: TokenStream, item: syn::ItemFn, fns: &TileFns) -> TokenStream {
    let mut sink = ErrorSink::new();
    let def = KernelDef::new(attr, item, fns, &mut sink);
    let artifacts = compile(&def, fns, &mut sink);
    let module = launcher::module(&def, &artifacts);
    let errors = sink.into_compile_errors();
    quote!(#errors #module)
}

/// Lowers and compiles every instance; empty when anything failed (errors in `sink`, or
/// reported elsewhere: a call of a tile function with a bad signature).
pub fn compile(def: &KernelDef, fns: &TileFns, sink: &mut ErrorSink) -> Vec<Artifact> {
    let lowered = lower_all(def, fns, sink);
    if !sink.is_empty() || lowered.len() != def.args.configs.len() {
        return Vec::new();
    }
    let total = lowered.len() * def.targets().len();
    let mut out = Vec::new();
    for (config, low) in &lowered {
        for &target in def.targets() {
            let label = format!("config `{}`, {}", config.name, target.name());
            match compile_instance(def, config, low, target) {
                Ok(a) => out.push(a),
                Err(errors) => {
                    for diag in errors {
                        sink.push_diag(diag, Some((label.clone(), total)));
                    }
                }
            }
        }
    }
    if sink.is_empty() { out } else { Vec::new() }
}

/// Lowers the body once per config (the target changes only the signature).
pub fn lower_all<'d>(
    def: &'d KernelDef,
    fns: &TileFns,
    sink: &mut ErrorSink,
) -> Vec<(&'d ConfigDef, Lowered)> {
    let shapes = def.shape_symbols();
    let configs = &def.args.configs;
    let mut out = Vec::new();
    for config in configs {
        let label = Some((format!("config `{}`", config.name), configs.len()));
        // On a grid error the body is still lowered (with a placeholder grid) for its errors.
        let grid = args::grid_for(&def.args.grid, &config.consts, &shapes).unwrap_or_else(
            |(range, message)| {
                sink.push_in(range, message, label.clone());
                [SymExpr::Const(1), SymExpr::Const(1), SymExpr::Const(1)]
            },
        );
        let target = def.targets()[0];
        let sig = Signature {
            entry: entry_name(def, config, target),
            target,
            tensors: def.tensors(config),
            scalars: def.scalars.iter().map(ToString::to_string).collect(),
            params: Vec::new(),
            threads: def.args.threads,
            cluster: def.args.cluster,
            grid,
            smem_bytes: 0,
            tmem_cols: 0,
        };
        match parse::lower(def, fns, config, sig) {
            Ok(low) => out.push((config, low)),
            Err(errors) => {
                for diag in errors {
                    sink.push_diag(diag, label.clone());
                }
            }
        }
    }
    out
}

/// `<fn>_<config>_<target>`, e.g. `tma_copy_default_sm_90a`.
pub fn entry_name(def: &KernelDef, config: &ConfigDef, target: Target) -> String {
    format!("{}_{}_{}", def.name, config.name, target.name())
}

/// One config × target: the passes, then PTX. Errors are placed at the user's tokens.
fn compile_instance(
    def: &KernelDef,
    config: &ConfigDef,
    low: &Lowered,
    target: Target,
) -> Result<Artifact, Vec<Diag>> {
    let mut kernel = low.kernel.clone();
    kernel.sig.target = target;
    kernel.sig.entry = entry_name(def, config, target);
    let ir = kernel.to_string();
    let (compiled, _) = tirx_ir::passes::run_pipeline(kernel, false).map_err(|diags| {
        diags
            .iter()
            .map(|d| Diag {
                range: low.spans.get(d.span),
                message: d.message.clone(),
                calls: low.spans.calls(d.span),
            })
            .collect::<Vec<_>>()
    })?;
    let ptx = tirx_ptx::write_string(&compiled).map_err(|e| {
        vec![Diag {
            range: span_range(&def.name),
            message: format!("PTX generation failed: {e}"),
            calls: Vec::new(),
        }]
    })?;
    Ok(Artifact {
        config: config.name.clone(),
        target,
        ptx,
        ir,
        sig: compiled.sig,
    })
}
