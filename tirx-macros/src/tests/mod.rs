//! Unit tests of the front end: attribute, parameters, body lowering and error messages, run
//! on sample functions without the proc-macro bridge (proc_macro2's fallback spans).

mod elem_types;
mod errors;
mod griddep;
mod language_doc;
mod lower;
mod module;
mod mutate;
mod tiles;
mod writers;

use crate::error::ErrorSink;
use crate::expand;
use crate::model::KernelDef;
use crate::module::TileFns;
use crate::parse::Lowered;
use proc_macro2::TokenStream;

/// The attribute and function of a test kernel.
pub(crate) fn def(attr: &str, item: &str) -> (KernelDef, ErrorSink) {
    let attr: TokenStream = attr.parse().expect("attribute tokens");
    let item: syn::ItemFn = syn::parse_str(item).expect("a function");
    let mut sink = ErrorSink::new();
    let def = KernelDef::new(attr, item, &TileFns::default(), &mut sink);
    (def, sink)
}

/// Every front-end error message for a kernel (attribute, parameters, body of every config).
pub(crate) fn errors(attr: &str, item: &str) -> Vec<String> {
    let (def, mut sink) = def(attr, item);
    let _ = expand::lower_configs(&def, &TileFns::default(), &mut sink).ok;
    sink.finish()
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect()
}

/// The lowered first config of a kernel that must have no front-end error.
pub(crate) fn lowered(attr: &str, item: &str) -> Lowered {
    let (def, mut sink) = def(attr, item);
    let mut all = expand::lower_configs(&def, &TileFns::default(), &mut sink).ok;
    let messages: Vec<String> = sink
        .finish()
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    assert!(messages.is_empty(), "unexpected errors: {messages:#?}");
    all.remove(0).1
}

/// The errors of a body inside a standard two-tensor kernel.
pub(crate) fn body_errors(body: &str) -> Vec<String> {
    errors(
        STD_ATTR,
        &format!(
            "fn k(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {{ {body} }}"
        ),
    )
}

/// An attribute that is valid on its own.
pub(crate) const STD_ATTR: &str = "target = sm_90a, threads = 128, grid = (cdiv(N, BN), cdiv(M, BM)), configs(default = (BM = 64, BN = 64))";
