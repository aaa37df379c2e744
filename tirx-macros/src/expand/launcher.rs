//! The module that replaces the user's function: `ARTIFACTS` (every compiled instance), one
//! `__sig_*` function per instance, and the typed `launch` function.
//!
//! The module and `launch` have the same shape whether or not compilation succeeded (on errors
//! `ARTIFACTS` is empty, so `launch` returns the runtime's "no such config" error), so callers
//! and IDEs keep working while the user fixes the kernel.

use super::signature::{elem_tokens, signature_tokens};
use super::{Artifact, Pruned};
use crate::configs::ConfigDef;
use crate::model::{ElemRef, KernelDef, ParamDef};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use tirx_ir::Major;
use tirx_ir::abi::{ConfigValue, ElemType, Target};
use tirx_ir::problem::{Act, BLayout, Epilogue, Factors, Problem, RowOp};

/// The kernel's source file as the artifact names it: `file!()`, made relative to the
/// compiler's working directory (the workspace root) where the file lies below it — a module
/// a build script declares with `#[path = "/absolute/…"]` (`kernels/build.rs` declares the
/// family folders' files so) would otherwise name a machine's absolute path. `file!()` itself
/// outside a macro invocation (the macro's unit tests).
fn source_file(def: &KernelDef) -> TokenStream {
    if !proc_macro::is_available() {
        return quote!(::core::file!());
    }
    let file = def.name.span().unwrap().file();
    let relative = std::env::current_dir().ok().and_then(|cwd| {
        std::path::Path::new(&file)
            .strip_prefix(cwd)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
    });
    let file = relative.unwrap_or(file);
    quote!(#file)
}

/// The generated module for `def` with `artifacts` (empty on errors) and the generated configs
/// a `static_assert` pruned.
pub fn module(def: &KernelDef, artifacts: &[Artifact], pruned: &[Pruned]) -> TokenStream {
    let KernelDef {
        name, vis, attrs, ..
    } = def;
    let kernel = name.to_string();
    let entries = artifacts.iter().map(|a| {
        let config = &a.config;
        let target = artifact_target(a.target);
        let (ptx, ir) = (&a.ptx, &a.ir);
        let sig_fn = sig_fn_name(a);
        let consts = def
            .args
            .configs
            .iter()
            .find(|c| c.name == a.config)
            .map_or_else(|| quote!(), config_values);
        let problem = problem_tokens(a.problem);
        let lines = a.line_map.iter().map(|(p, l)| quote!((#p, #l)));
        let file = source_file(def);
        // SAFETY: this PTX and this signature come from the same compilation, by this macro.
        quote! {
            unsafe { ::tirx::KernelArtifact::new(#kernel, #config, #target, #ptx, #ir, #sig_fn) }
                .with_meta(&[#consts], #problem)
                .with_source(#file, &[#(#lines),*])
        }
    });
    let pruned = pruned.iter().map(|p| {
        let (config, why) = (&p.config, &p.why);
        quote!((#config, #why))
    });
    let sig_fns = artifacts.iter().map(|a| {
        let sig_fn = sig_fn_name(a);
        let body = signature_tokens(&a.sig);
        let doc = format!(
            "The signature of config `{}` on `{}`, after compilation.",
            a.config,
            a.target.name()
        );
        quote! {
            #[doc = #doc]
            fn #sig_fn() -> ::tirx::abi::Signature { #body }
        }
    });
    let launch = launch_fn(def);
    quote! {
        #(#attrs)*
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            /// Every compiled instance.
            pub static ARTIFACTS: &[::tirx::KernelArtifact] = &[#(#entries),*];
            /// The kernel as data: its name, every compiled instance, and the configs a
            /// `product` generated that a `static_assert` pruned (name, why).
            pub static KERNEL: ::tirx::Kernel = ::tirx::Kernel {
                name: #kernel,
                artifacts: ARTIFACTS,
                pruned: &[#(#pruned),*],
            };
            #(#sig_fns)*
            #launch
        }
    }
}

/// A config's entries as `("BM", ConfigValue::Int(128)), …`.
fn config_values(config: &ConfigDef) -> TokenStream {
    let entries = config.entries.iter().map(|(name, value)| {
        let value = match value {
            ConfigValue::Int(v) => quote!(::tirx::abi::ConfigValue::Int(#v)),
            ConfigValue::Elem(e) => {
                let e = elem_tokens(*e);
                quote!(::tirx::abi::ConfigValue::Elem(#e))
            }
            ConfigValue::Major(Major::K) => {
                quote!(::tirx::abi::ConfigValue::Major(::tirx::abi::Major::K))
            }
            ConfigValue::Major(Major::MN) => {
                quote!(::tirx::abi::ConfigValue::Major(::tirx::abi::Major::MN))
            }
        };
        quote!((#name, #value))
    });
    quote!(#(#entries),*)
}

/// `Some(::tirx::problem::Problem::…)` or `None`.
fn problem_tokens(problem: Option<Problem>) -> TokenStream {
    let path = quote!(::tirx::problem);
    let value = match problem {
        None => return quote!(::core::option::Option::None),
        Some(Problem::Copy) => quote!(#path::Problem::Copy),
        Some(Problem::SiluMul) => quote!(#path::Problem::SiluMul),
        Some(Problem::Attention) => quote!(#path::Problem::Attention),
        Some(Problem::Row(op)) => {
            let op = match op {
                RowOp::Softmax => quote!(#path::RowOp::Softmax),
                RowOp::RmsNorm => quote!(#path::RowOp::RmsNorm),
                RowOp::LayerNorm => quote!(#path::RowOp::LayerNorm),
            };
            quote!(#path::Problem::Row(#op))
        }
        Some(Problem::Gemm(g)) => {
            let b = match g.b {
                BLayout::Tn => quote!(#path::BLayout::Tn),
                BLayout::Nn => quote!(#path::BLayout::Nn),
            };
            let epilogue = match g.epilogue {
                Epilogue::Plain => quote!(#path::Epilogue::Plain),
                Epilogue::Scaled => quote!(#path::Epilogue::Scaled),
                Epilogue::ScaleTensor => quote!(#path::Epilogue::ScaleTensor),
                Epilogue::ScaleRows => quote!(#path::Epilogue::ScaleRows),
                Epilogue::ScaleBlocks => quote!(#path::Epilogue::ScaleBlocks),
                Epilogue::ScaleBlocksMn => quote!(#path::Epilogue::ScaleBlocksMn),
                Epilogue::ScaleFactors(f) => {
                    let f = match f {
                        Factors::Mx => quote!(#path::Factors::Mx),
                        Factors::Nv => quote!(#path::Factors::Nv),
                    };
                    quote!(#path::Epilogue::ScaleFactors(#f))
                }
                Epilogue::Partial => quote!(#path::Epilogue::Partial),
                Epilogue::Bias(act) => {
                    let act = act_tokens(&path, act);
                    quote!(#path::Epilogue::Bias(#act))
                }
                Epilogue::BiasResidual(act) => {
                    let act = act_tokens(&path, act);
                    quote!(#path::Epilogue::BiasResidual(#act))
                }
            };
            quote!(#path::Problem::Gemm(#path::GemmProblem { b: #b, epilogue: #epilogue }))
        }
    };
    quote!(::core::option::Option::Some(#value))
}

/// The tokens of an activation of a fused GEMM epilogue.
fn act_tokens(path: &TokenStream, act: Act) -> TokenStream {
    match act {
        Act::None => quote!(#path::Act::None),
        Act::Relu => quote!(#path::Act::Relu),
        Act::Gelu => quote!(#path::Act::Gelu),
        Act::Silu => quote!(#path::Act::Silu),
    }
}

/// `__sig_<config>_<target>`.
fn sig_fn_name(a: &Artifact) -> proc_macro2::Ident {
    format_ident!("__sig_{}_{}", a.config, a.target.name())
}

/// The facade's `Target` value.
fn artifact_target(target: Target) -> TokenStream {
    match target {
        Target::Sm90a => quote!(::tirx::Target::Sm90a),
        Target::Sm100a => quote!(::tirx::Target::Sm100a),
    }
}

/// `::tirx::Tensor<elem>`; a config symbol stays a name (a type parameter of `launch`).
fn tensor_type(p: &ParamDef) -> TokenStream {
    let elem = match &p.elem {
        ElemRef::Lit(ElemType::Bf16) => quote!(::tirx::bf16),
        ElemRef::Lit(ElemType::F16) => quote!(::tirx::f16),
        ElemRef::Lit(ElemType::F32) => quote!(::core::primitive::f32),
        ElemRef::Lit(ElemType::I32) => quote!(::core::primitive::i32),
        ElemRef::Lit(ElemType::U32) => quote!(::core::primitive::u32),
        ElemRef::Lit(ElemType::I64) => quote!(::core::primitive::i64),
        ElemRef::Lit(ElemType::U64) => quote!(::core::primitive::u64),
        ElemRef::Lit(ElemType::I8) => quote!(::core::primitive::i8),
        ElemRef::Lit(ElemType::U8) => quote!(::core::primitive::u8),
        // The host types of the 8- and 4-bit formats carry the ISA's spelling (`tirx::e4m3`).
        ElemRef::Lit(e) => {
            let t = format_ident!("{}", e.name());
            quote!(::tirx::#t)
        }
        ElemRef::Sym(id) => quote!(#id),
    };
    quote!(::tirx::Tensor<#elem>)
}

/// `pub fn launch<T: Element, …>(rt, config, tensors…)`: one type parameter per config
/// symbol the tensors use as element type (tensors sharing a symbol share the type); tensors
/// the body writes are `&mut`. Which types a config takes is checked at launch, against the
/// chosen artifact's signature (`RuntimeError::ElemMismatch`), before anything runs.
fn launch_fn(def: &KernelDef) -> TokenStream {
    let type_params = def.type_params();
    let generics = if type_params.is_empty() {
        quote!()
    } else {
        quote!(<#(#type_params: ::tirx::Element),*>)
    };
    let params = def.params.iter().map(|p| {
        let (ident, ty) = (&p.ident, tensor_type(p));
        if def.written.contains(&p.ident.to_string()) {
            quote!(#ident: &mut #ty)
        } else {
            quote!(#ident: &#ty)
        }
    });
    let views = def.params.iter().map(|p| {
        let ident = &p.ident;
        quote!(#ident.view())
    });
    let scalars = &def.scalars;
    let scalar_params = scalars.iter().zip(&def.scalar_types).map(|(s, t)| {
        let ty = syn::Ident::new(t.name(), s.span());
        quote!(#s: #ty)
    });
    let configs: Vec<String> = def
        .args
        .configs
        .iter()
        .map(|c| format!("`{}`", c.name))
        .collect();
    let mut doc = format!(
        "Launches config `config` ({}) of `{}` on `rt`'s device; tensors, then scalars, in the \
         function's parameter order.",
        configs.join(", "),
        def.name
    );
    if !type_params.is_empty() {
        let per_config: Vec<String> = def
            .args
            .configs
            .iter()
            .map(|c| {
                let types: Vec<String> = type_params
                    .iter()
                    .map(|t| {
                        let name = t.to_string();
                        let elem = c.elem_type(&name).map_or("?", |e| e.name());
                        format!("{name} = {elem}")
                    })
                    .collect();
                format!("`{}`: {}", c.name, types.join(", "))
            })
            .collect();
        doc.push_str(&format!(
            "\n\nElement types per config ({}); other types are refused with \
             `RuntimeError::ElemMismatch` before launch.",
            per_config.join("; ")
        ));
    }
    quote! {
        #[doc = #doc]
        // The launcher's arity is the kernel's: rt, config, then every parameter.
        #[allow(non_camel_case_types, clippy::too_many_arguments)]
        pub fn launch #generics (
            rt: &::tirx::Runtime,
            config: &str,
            #(#params,)*
            #(#scalar_params),*
        ) -> ::core::result::Result<(), ::tirx::RuntimeError> {
            let __art = ::tirx::select(ARTIFACTS, config, rt.target()?)?;
            // `Runtime::launch_args` is safe: the PTX/signature pairing was vouched for when
            // the artifact was built (`KernelArtifact::new`, unsafe, above).
            rt.launch_args(
                __art,
                &[#(#views),*],
                &[#(::tirx::runtime::ScalarArg::from(#scalars)),*],
            )
        }
    }
}
