//! Tokens that rebuild a `tirx_ir::abi::Signature` value in the user's crate (through the
//! `::tirx::abi` re-export), so the runtime gets the final signature without parsing text.

use proc_macro2::TokenStream;
use quote::quote;
use tirx_ir::abi::{
    AbiParam, CmpOp, ElemType, ShapeCheck, Signature, Swizzle, SymExpr, Target, TensorDecl,
};

/// An expression of type `::tirx::abi::Signature` equal to `sig`.
pub fn signature_tokens(sig: &Signature) -> TokenStream {
    let Signature {
        entry,
        target,
        tensors,
        scalars,
        scalar_types,
        params,
        threads,
        cluster,
        grid,
        checks,
        smem_bytes,
        tmem_cols,
    } = sig;
    let target = target_tokens(*target);
    let scalar_types = scalar_types.iter().map(|e| elem_tokens(*e));
    let tensors = tensors.iter().map(tensor_tokens);
    let params = params.iter().map(param_tokens);
    let [cx, cy, cz] = cluster;
    let grid = grid.iter().map(sym_tokens);
    let checks = checks.iter().map(check_tokens);
    quote! {
        ::tirx::abi::Signature {
            entry: ::std::string::String::from(#entry),
            target: #target,
            tensors: ::std::vec![#(#tensors),*],
            scalars: ::std::vec![#(::std::string::String::from(#scalars)),*],
            scalar_types: ::std::vec![#(#scalar_types),*],
            params: ::std::vec![#(#params),*],
            threads: #threads,
            cluster: [#cx, #cy, #cz],
            grid: [#(#grid),*],
            checks: ::std::vec![#(#checks),*],
            smem_bytes: #smem_bytes,
            tmem_cols: #tmem_cols,
        }
    }
}

/// `::tirx::abi::Target::Sm90a` etc.
pub fn target_tokens(target: Target) -> TokenStream {
    match target {
        Target::Sm90a => quote!(::tirx::abi::Target::Sm90a),
        Target::Sm100a => quote!(::tirx::abi::Target::Sm100a),
    }
}

/// `::tirx::abi::ElemType::…`.
pub(super) fn elem_tokens(elem: ElemType) -> TokenStream {
    match elem {
        ElemType::Bf16 => quote!(::tirx::abi::ElemType::Bf16),
        ElemType::F16 => quote!(::tirx::abi::ElemType::F16),
        ElemType::F32 => quote!(::tirx::abi::ElemType::F32),
        ElemType::E4m3 => quote!(::tirx::abi::ElemType::E4m3),
        ElemType::E5m2 => quote!(::tirx::abi::ElemType::E5m2),
        ElemType::Ue8m0 => quote!(::tirx::abi::ElemType::Ue8m0),
        ElemType::E2m1x2 => quote!(::tirx::abi::ElemType::E2m1x2),
        ElemType::E3m2 => quote!(::tirx::abi::ElemType::E3m2),
        ElemType::E2m3 => quote!(::tirx::abi::ElemType::E2m3),
        ElemType::E2m1 => quote!(::tirx::abi::ElemType::E2m1),
        ElemType::I8 => quote!(::tirx::abi::ElemType::I8),
        ElemType::U8 => quote!(::tirx::abi::ElemType::U8),
        ElemType::Ue4m3 => quote!(::tirx::abi::ElemType::Ue4m3),
        ElemType::I32 => quote!(::tirx::abi::ElemType::I32),
        ElemType::U32 => quote!(::tirx::abi::ElemType::U32),
        ElemType::I64 => quote!(::tirx::abi::ElemType::I64),
        ElemType::U64 => quote!(::tirx::abi::ElemType::U64),
    }
}

fn swizzle_tokens(swizzle: Swizzle) -> TokenStream {
    match swizzle {
        Swizzle::None => quote!(::tirx::abi::Swizzle::None),
        Swizzle::B32 => quote!(::tirx::abi::Swizzle::B32),
        Swizzle::B64 => quote!(::tirx::abi::Swizzle::B64),
        Swizzle::B128 => quote!(::tirx::abi::Swizzle::B128),
    }
}

fn string(s: &str) -> TokenStream {
    quote!(::std::string::String::from(#s))
}

fn tensor_tokens(t: &TensorDecl) -> TokenStream {
    let name = string(&t.name);
    let elem = elem_tokens(t.elem);
    let shape = t.shape.iter().map(|s| string(s));
    quote!(::tirx::abi::TensorDecl { name: #name, elem: #elem, shape: ::std::vec![#(#shape),*] })
}

fn param_tokens(p: &AbiParam) -> TokenStream {
    match p {
        AbiParam::TensorMap {
            tensor,
            box_dims,
            swizzle,
        } => {
            let tensor = string(tensor);
            let swizzle = swizzle_tokens(*swizzle);
            quote!(::tirx::abi::AbiParam::TensorMap {
                tensor: #tensor,
                box_dims: ::std::vec![#(#box_dims),*],
                swizzle: #swizzle,
            })
        }
        AbiParam::Pointer { tensor } => {
            let tensor = string(tensor);
            quote!(::tirx::abi::AbiParam::Pointer { tensor: #tensor })
        }
        AbiParam::Stride { tensor, dim } => {
            let tensor = string(tensor);
            quote!(::tirx::abi::AbiParam::Stride { tensor: #tensor, dim: #dim })
        }
        AbiParam::Scalar { name } => {
            quote!(::tirx::abi::AbiParam::Scalar { name: ::std::string::String::from(#name) })
        }
        AbiParam::Dim { symbol } => {
            let symbol = string(symbol);
            quote!(::tirx::abi::AbiParam::Dim { symbol: #symbol })
        }
    }
}

fn check_tokens(k: &ShapeCheck) -> TokenStream {
    let text = string(&k.text);
    let (lhs, rhs) = (sym_tokens(&k.lhs), sym_tokens(&k.rhs));
    let op = match k.op {
        CmpOp::Eq => quote!(Eq),
        CmpOp::Ne => quote!(Ne),
        CmpOp::Lt => quote!(Lt),
        CmpOp::Le => quote!(Le),
        CmpOp::Gt => quote!(Gt),
        CmpOp::Ge => quote!(Ge),
    };
    quote!(::tirx::abi::ShapeCheck {
        text: #text,
        lhs: #lhs,
        op: ::tirx::abi::CmpOp::#op,
        rhs: #rhs,
    })
}

fn sym_tokens(e: &SymExpr) -> TokenStream {
    match e {
        SymExpr::Const(c) => quote!(::tirx::abi::SymExpr::Const(#c)),
        SymExpr::Sym(s) => {
            let s = string(s);
            quote!(::tirx::abi::SymExpr::Sym(#s))
        }
        SymExpr::Sms => quote!(::tirx::abi::SymExpr::Sms),
        SymExpr::CeilDiv(a, b) => {
            let (a, b) = (sym_tokens(a), sym_tokens(b));
            quote!(::tirx::abi::SymExpr::CeilDiv(::std::boxed::Box::new(#a), ::std::boxed::Box::new(#b)))
        }
        SymExpr::Div(a, b) => {
            let (a, b) = (sym_tokens(a), sym_tokens(b));
            quote!(::tirx::abi::SymExpr::Div(::std::boxed::Box::new(#a), ::std::boxed::Box::new(#b)))
        }
        SymExpr::Mul(a, b) => {
            let (a, b) = (sym_tokens(a), sym_tokens(b));
            quote!(::tirx::abi::SymExpr::Mul(::std::boxed::Box::new(#a), ::std::boxed::Box::new(#b)))
        }
        SymExpr::Add(a, b) => {
            let (a, b) = (sym_tokens(a), sym_tokens(b));
            quote!(::tirx::abi::SymExpr::Add(::std::boxed::Box::new(#a), ::std::boxed::Box::new(#b)))
        }
        SymExpr::Sub(a, b) => {
            let (a, b) = (sym_tokens(a), sym_tokens(b));
            quote!(::tirx::abi::SymExpr::Sub(::std::boxed::Box::new(#a), ::std::boxed::Box::new(#b)))
        }
        SymExpr::Rem(a, b) => {
            let (a, b) = (sym_tokens(a), sym_tokens(b));
            quote!(::tirx::abi::SymExpr::Rem(::std::boxed::Box::new(#a), ::std::boxed::Box::new(#b)))
        }
    }
}
