//! Declarations: `smem::<T>([..], swizzle = B128, major = mn)`, `tmem::<T>([..])`, `regs::<T>([..])`,
//! `mbarrier(count = 1, arrivals = 1)`, `pipeline::<STAGES>(consumers = 1)`,
//! `clc_response(stages = 1)` (16 opaque bytes of shared memory per stage, where a
//! cluster-launch-control request answers: a `[stages, 4]` buffer of 32-bit words, one stage
//! per `resp[s]`; unswizzled buffers start 128-byte aligned, so each stage is 16-byte aligned
//! as PTX ISA §9.7.13.17 requires).
//!
//! Shapes, counts and stages are build-time constants (literals and config constants); a
//! pipeline also creates its `<name>.full` and `<name>.empty` barrier arrays, which share the
//! pipeline's span.

use super::ops::CallArgs;
use super::stmt::strip_parens;
use super::vocab::{self, Id, Kind, Word};
use super::{Local, Lowerer, Res};
use crate::error::span_range;
use quote::ToTokens;
use syn::{Expr as SExpr, Ident};
use tirx_ir::abi::{ElemType, Swizzle};
use tirx_ir::{Barrier, Buffer, Layout, Major, Pipeline, Space};

/// If `func` names a declaration constructor (`smem`, `smem::<bf16>`, …), its word and path
/// segment.
pub(crate) fn decl_kind(func: &SExpr) -> Option<(&'static Word, &syn::PathSegment)> {
    let SExpr::Path(p) = strip_parens(func) else {
        return None;
    };
    let [seg] = p.path.segments.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    Some((
        vocab::lookup(None, &seg.ident.to_string(), &[Kind::Decl])?,
        seg,
    ))
}

impl Lowerer<'_> {
    /// A declaration `let ident = smem::<T>(…)` etc.; returns what `ident` binds to.
    pub(crate) fn declare(
        &mut self,
        ident: &Ident,
        c: &syn::ExprCall,
        l: &syn::Local,
    ) -> Res<Local> {
        let Some((word, seg)) = decl_kind(&c.func) else {
            return Err(self.fail(
                &c.func,
                "expected a declaration such as `smem::<bf16>([BM, BK])`",
            ));
        };
        let generics = match &seg.arguments {
            syn::PathArguments::None => Vec::new(),
            syn::PathArguments::AngleBracketed(ab) => ab.args.iter().collect(),
            other => return Err(self.fail(other, "expected `::<…>`")),
        };
        let span = self.span(l);
        let name = ident.to_string();
        let space = match word.id {
            Id::Smem => Some(Space::Shared),
            Id::Tmem => Some(Space::Tmem),
            Id::Regs => Some(Space::Reg),
            _ => None,
        };
        match (word.id, space) {
            (_, Some(space)) => {
                let buffer = self.buffer(word, space, &generics, c, name, span)?;
                let h = self.kernel.buffers.append(buffer);
                if space == Space::Reg {
                    self.mutable_tiles.push(h);
                }
                Ok(Local::Buf(h))
            }
            (Id::Mbarrier, _) => {
                if let Some(g) = generics.first() {
                    return Err(self.fail(g, "`mbarrier` takes no generic arguments: `mbarrier(count = 1, arrivals = 1)`"));
                }
                let args = self.word_args(word, &c.args, c)?;
                let count = self.positive_arg(&args, "count")?;
                let arrivals = self.positive_arg(&args, "arrivals")?;
                let bar = Barrier {
                    name,
                    count,
                    arrivals,
                    offset: None,
                    span,
                };
                Ok(Local::Bar(self.kernel.barriers.append(bar)))
            }
            (Id::ClcResponse, _) => {
                if let Some(g) = generics.first() {
                    return Err(self.fail(
                        g,
                        "`clc_response` takes no generic arguments: `clc_response(stages = 1)`",
                    ));
                }
                let args = self.word_args(word, &c.args, c)?;
                let stages = self.positive_arg(&args, "stages")?;
                let shape: &[u32] = if args.get("stages").is_some() {
                    &[stages, 4]
                } else {
                    &[4]
                };
                let buffer = Buffer {
                    name,
                    space: Space::Shared,
                    elem: ElemType::F32,
                    layout: Layout::row_major(shape, Swizzle::None),
                    offset: None,
                    tmem_cols: None,
                    alias: None,
                    regs: None,
                    span,
                };
                Ok(Local::Buf(self.kernel.buffers.append(buffer)))
            }
            _ => self.pipeline(word, &generics, c, name, span),
        }
    }

    /// A register tile's `layout = …`: `wgmma` (the accumulator fragment, also the default),
    /// `blocked(vec = V)` / `blocked(vec = V, threads = T)` (threads default to the kernel's),
    /// or `tmem_<shape>` (`tmem_32x32b`, `tmem_16x64b`, `tmem_16x128b`, `tmem_16x256b`,
    /// `tmem_16x32bx2`: what `tcgen05.ld` of that shape gives a warpgroup of a 128-row tile).
    fn reg_layout(&mut self, e: &SExpr, shape: &[u32]) -> Res<Option<tirx_ir::RegLayout>> {
        use tirx_ir::RegLayout;
        const USAGE: &str = "expected `wgmma`, `blocked(vec = V)`, `blocked(vec = V, threads = T)`, `stat(tile, axis = A)` or `tmem_<shape>` (`tmem_32x32b`, `tmem_16x64b`, `tmem_16x128b`, `tmem_16x256b`, `tmem_16x32bx2`)";
        let &[rows, cols] = shape else {
            return Err(self.fail(
                e,
                "a register tile is 2-D: `regs::<f32>([R, C], layout = …)`",
            ));
        };
        let e = strip_parens(e);
        let name = match e {
            SExpr::Call(c) => crate::args::path_ident(&c.func).map(|i| i.to_string()),
            _ => crate::args::path_ident(e).map(|i| i.to_string()),
        };
        let built = match (name.as_deref(), e) {
            (Some("wgmma"), SExpr::Path(_)) => {
                return match RegLayout::wgmma_acc(rows, cols) {
                    Ok(_) => Ok(None),
                    Err(why) => Err(self.fail(e, why.to_string())),
                };
            }
            (Some(n), SExpr::Path(_)) if tirx_ir::TmemShape::from_layout_name(n).is_some() => {
                if rows != 128 {
                    return Err(self.fail(e, format!("`{n}` spreads 128 TMEM lanes over a warpgroup; this tile has {rows} rows")));
                }
                let shape = tirx_ir::TmemShape::from_layout_name(n).expect("matched above");
                shape
                    .layout(cols)
                    .map_err(|why| self.fail(e, why.to_string()))?
            }
            (Some("stat"), SExpr::Call(c)) => {
                // `stat(t, axis = A)`: the layout of `t`'s statistic along `A` (a row or
                // column vector broadcast onto `t`, e.g. a bias per column of an accumulator).
                let (Some(first), Some(SExpr::Assign(kv))) = (c.args.first(), c.args.iter().nth(1))
                else {
                    return Err(self.fail(c, "expected `stat(tile, axis = A)`"));
                };
                let tile =
                    crate::args::path_ident(first).and_then(|i| match self.local(&i.to_string()) {
                        Some(super::Local::Buf(b)) => Some(b),
                        _ => None,
                    });
                let Some(tile) = tile else {
                    return Err(self.fail(
                        first,
                        "expected a register tile declared before: `stat(acc, axis = 0)`",
                    ));
                };
                if crate::args::path_ident(&kv.left).is_none_or(|k| k != "axis") {
                    return Err(self.fail(&kv.left, "expected `axis = 0` or `axis = 1`"));
                }
                let axis = self.const_u32(&kv.right, "the axis")?;
                if axis > 1 {
                    return Err(self.fail(
                        &kv.right,
                        "the axis is 0 (one value per column) or 1 (one value per row)",
                    ));
                }
                let l = tirx_ir::regtile::layout(&self.kernel, tile)
                    .map_err(|e| self.fail(first, e.to_string()))?;
                let want: [u32; 2] = {
                    let s = &self.kernel.buffers[tile].layout.shape;
                    if axis == 0 { [1, s[1]] } else { [s[0], 1] }
                };
                if [rows, cols] != want {
                    return Err(self.fail(c, format!("a statistic of that tile along axis {axis} is {}×{}, not {rows}×{cols}", want[0], want[1])));
                }
                l.reduce(axis as usize)
                    .map_err(|e| self.fail(c, e.to_string()))?
            }
            (Some("blocked"), SExpr::Call(c)) => {
                let (mut vec, mut threads) = (None, None);
                for a in &c.args {
                    let SExpr::Assign(kv) = a else {
                        return Err(self.fail(a, "expected `vec = V` or `threads = T`"));
                    };
                    let key = crate::args::path_ident(&kv.left).map(|i| i.to_string());
                    let v = self.const_u32(&kv.right, "a layout parameter")?;
                    match key.as_deref() {
                        Some("vec") => vec = Some(v),
                        Some("threads") => threads = Some(v),
                        _ => {
                            return Err(self.fail(
                                &kv.left,
                                "unknown layout parameter; expected `vec` or `threads`",
                            ));
                        }
                    }
                }
                let Some(vec) = vec else {
                    return Err(self.fail(
                        c,
                        "`blocked` needs `vec = V` (consecutive elements per thread)",
                    ));
                };
                let threads = threads.unwrap_or(self.kernel.sig.threads);
                RegLayout::blocked(rows, cols, threads, vec).map_err(|why| {
                    // Say which vector widths would fit this shape, if any.
                    let fit: Vec<String> = [8, 4, 2, 1]
                        .into_iter()
                        .filter(|&v| RegLayout::blocked(rows, cols, threads, v).is_ok())
                        .map(|v| format!("`vec = {v}`"))
                        .collect();
                    let hint = match fit.as_slice() {
                        [] => format!("; no vector width fits {rows}×{cols} over {threads} threads (docs/guide.md §1 says which shapes do)"),
                        fit => format!("; {} fit{}", fit.join(", "), if fit.len() == 1 { "s" } else { "" }),
                    };
                    self.fail(c, format!("{why}{hint}"))
                })?
            }
            _ => return Err(self.fail(e, USAGE)),
        };
        Ok(Some(built))
    }

    /// `smem::<T>([d0, d1, …], swizzle = B128)` and the TMEM / register forms.
    fn buffer(
        &mut self,
        word: &Word,
        space: Space,
        generics: &[&syn::GenericArgument],
        c: &syn::ExprCall,
        name: String,
        span: tirx_ir::Span,
    ) -> Res<Buffer> {
        let usage = word.usage;
        let ident = match generics {
            [syn::GenericArgument::Type(syn::Type::Path(t))] if t.qself.is_none() => {
                t.path.get_ident()
            }
            _ => None,
        };
        let elem = ident.and_then(|i| self.elem_type(i));
        if let (Some(i), None) = (ident, elem)
            && self.kernel.const_value(&i.to_string()).is_some()
        {
            return Err(self.fail(
                i,
                format!(
                    "`{i}` is an integer constant of config `{}`, not an element type: `{usage}`",
                    self.config.name
                ),
            ));
        }
        if let (Some(i), None) = (ident, elem)
            && self
                .def
                .args
                .configs
                .iter()
                .any(|c| c.elem_type(&i.to_string()).is_some())
        {
            return Err(self.fail(
                i,
                format!(
                    "`{i}` is not defined in config `{}`: it needs `{i} = bf16`, `f16` or `f32`",
                    self.config.name
                ),
            ));
        }
        let Some(elem) = elem else {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!(
                    "expected an element type (bf16, f16, f32, i32, u32, i64, u64 or a config's element type): `{usage}`"
                ),
            ));
        };
        if elem.is_fp4() && space != Space::Shared {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!(
                    "e2m1x2 (two FP4 values a byte) is an operand type of the block-scaled MMA \
                     only: an e2m1x2 tile lives in shared memory (`smem::<e2m1x2>([rows, 128], \
                     swizzle = B128)`, 256 values a row, read by tcgen05.mma kind::mxf4nvf4), \
                     not in {}",
                    if space == Space::Reg {
                        "registers"
                    } else {
                        "tensor memory"
                    }
                ),
            ));
        }
        if elem.is_int8() && space != Space::Shared {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!(
                    "{0} is an MMA operand type: {0} tiles live in shared memory \
                     (`smem::<{0}>([rows, 128], swizzle = B128)`, read by tcgen05.mma kind::i8 \
                     into a `tmem::<i32>` accumulator), not in {1}",
                    elem.name(),
                    if space == Space::Reg {
                        "registers"
                    } else {
                        "tensor memory"
                    }
                ),
            ));
        }
        if elem.is_f6f4() && space != Space::Shared {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!(
                    "{0} is an MMA operand type stored in kind::f8f6f4's padded packing (16 \
                     values in each 16 bytes): an {0} tile lives in shared memory \
                     (`smem::<{0}>([rows, 128], swizzle = B128)`, read by tcgen05.mma \
                     kind::f8f6f4 or kind::mxf8f6f4), not in {1}",
                    elem.name(),
                    if space == Space::Reg {
                        "registers"
                    } else {
                        "tensor memory"
                    }
                ),
            ));
        }
        if elem.is_fp8() && space != Space::Shared {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!(
                    "{} is an MMA operand type: an {} tile lives in shared memory \
                     (`smem::<{}>([rows, 128], swizzle = B128)`, read by tcgen05.mma \
                     kind::f8f6f4), not in {}",
                    elem.name(),
                    elem.name(),
                    elem.name(),
                    if space == Space::Reg {
                        "registers"
                    } else {
                        "tensor memory"
                    }
                ),
            ));
        }
        // An i32 tile in tensor memory is kind::i8's s32 accumulator.
        if elem.is_int() && space != Space::Reg && !(elem == ElemType::I32 && space == Space::Tmem)
        {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!(
                    "{} tiles live in registers (`regs::<{}>([R, C], layout = blocked(vec = 4))`, \
                     copied from and to global tensors); integer tiles in {} are not supported \
                     yet (TODO(#30))",
                    elem.name(),
                    elem.name(),
                    if space == Space::Shared {
                        "shared memory"
                    } else {
                        "tensor memory"
                    }
                ),
            ));
        }
        if elem.is_scale() && space == Space::Reg {
            let at: &dyn ToTokens = generics
                .first()
                .map_or(&c.func as &dyn ToTokens, |g| *g as &dyn ToTokens);
            return Err(self.fail_at(
                span_range(&at),
                format!(
                    "{} is a block-scale factor type: its tiles live in shared memory \
                     (`smem::<{}>([32, 16])`, the image `tcgen05::cp` copies) and in tensor \
                     memory (`tmem::<{}>([128, 4])`, read by a block-scaled tcgen05::mma), \
                     not in registers",
                    elem.name(),
                    elem.name(),
                    elem.name()
                ),
            ));
        }
        let args = self.word_args(word, &c.args, c)?;
        let SExpr::Array(dims) = strip_parens(args.pos[0]) else {
            return Err(self.fail(
                args.pos[0],
                format!("expected the shape as an array: `{usage}`"),
            ));
        };
        if dims.elems.is_empty() {
            return Err(self.fail(dims, "a buffer needs at least one dimension"));
        }
        let mut shape = Vec::new();
        for d in &dims.elems {
            match self.const_u32(d, "a buffer dimension")? {
                0 => return Err(self.fail(d, "a buffer dimension must be positive")),
                v => shape.push(v),
            }
        }
        // Strides, offsets and byte sizes are u32 everywhere downstream.
        let bytes = shape
            .iter()
            .try_fold(u64::from(elem.bytes()), |n, &d| n.checked_mul(u64::from(d)));
        if bytes.is_none_or(|b| b > u64::from(u32::MAX)) {
            let extents: Vec<String> = shape.iter().map(u32::to_string).collect();
            return Err(self.fail(
                dims,
                format!(
                    "this buffer is too large: {} {} elements of {} bytes do not fit in 2^32 bytes",
                    extents.join(" × "),
                    elem.name(),
                    elem.bytes()
                ),
            ));
        }
        let swizzle = match args.get("swizzle") {
            None => Swizzle::None,
            Some(s) => {
                let named =
                    crate::args::path_ident(s).and_then(|i| Swizzle::from_name(&i.to_string()));
                named
                    .ok_or_else(|| self.fail(s, "unknown swizzle; expected none, B32, B64, B128"))?
            }
        };
        let major = match args.get("major") {
            Some(m) => self.major(m, elem, &shape, swizzle)?,
            None => Major::K,
        };
        let mut layout = match major {
            Major::K => Layout::row_major(&shape, swizzle),
            Major::MN => Layout::row_major(&mn_chunks(&shape, swizzle, elem), swizzle),
        };
        layout.major = major;
        if let Some(u) = args.get("unpacked")
            && self.unpacked(u, elem)?
        {
            // One 16-bit element per 32-bit TMEM cell: every stride doubled, so the innermost
            // is 2 (`Buffer::tmem_unpacked`; PTX ISA §9.7.16.10.4.1).
            layout.stride.iter_mut().for_each(|s| *s *= 2);
        }
        let regs = match args.get("layout") {
            Some(l) => self.reg_layout(l, &shape)?,
            None => None,
        };
        // Without `layout = …` a register tile takes the wgmma accumulator fragment; a shape
        // that fragment cannot hold is refused here, where it is declared, not at a later
        // use of the tile that is itself valid.
        if space == Space::Reg
            && regs.is_none()
            && let &[rows, cols] = &shape[..]
            && let Err(why) = tirx_ir::RegLayout::wgmma_acc(rows, cols)
        {
            return Err(self.fail(
                dims,
                format!(
                    "{why}: a register tile without `layout = …` takes the wgmma accumulator fragment; give it a layout that fits, e.g. `layout = blocked(vec = V)`"
                ),
            ));
        }
        let alias = match args.get("alias") {
            Some(a) if space == Space::Shared => Some(self.smem_alias(a)?),
            Some(a) => Some(self.tmem_alias(a)?),
            None => None,
        };
        Ok(Buffer {
            name,
            space,
            elem,
            layout,
            offset: None,
            tmem_cols: None,
            alias,
            regs,
            span,
        })
    }

    /// `unpacked = true|false` of a TMEM buffer: a 16-bit tile with one element in the low
    /// half of each 32-bit cell, the packing of a 16-bit accumulator D (PTX ISA
    /// §9.7.16.10.4.1 "Packing format for matrix D in Tensor Memory").
    fn unpacked(&mut self, u: &SExpr, elem: ElemType) -> Res<bool> {
        let SExpr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) = strip_parens(u)
        else {
            return Err(self.fail(u, "expected `unpacked = true` or `unpacked = false`"));
        };
        if b.value && elem.bytes() != 2 {
            return Err(self.fail(
                u,
                format!(
                    "`unpacked` spreads a 16-bit tile one element to a 32-bit TMEM cell (an f16 \
                     accumulator, PTX ISA §9.7.16.10.4.1); `{}` tiles have one element per cell \
                     already",
                    elem.name()
                ),
            ));
        }
        Ok(b.value)
    }

    /// `alias = s` of a TMEM buffer: a view of the TMEM buffer `s` declared before, from its
    /// first column (the 16-bit P written over the f32 S it was computed from).
    fn tmem_alias(&mut self, a: &SExpr) -> Res<tirx_ir::arena::Handle<Buffer>> {
        let base = crate::args::path_ident(a).and_then(|i| match self.local(&i.to_string()) {
            Some(super::Local::Buf(b)) if self.kernel.buffers[b].space == Space::Tmem => Some(b),
            _ => None,
        });
        base.ok_or_else(|| {
            self.fail(
                a,
                "expected a TMEM buffer declared before: `tmem::<bf16>([128, N], alias = s)`",
            )
        })
    }

    /// `alias = s` of a shared buffer: another shape over the bytes of the shared buffer `s`
    /// declared before (a TMA box of fewer rows written into part of an MMA operand tile);
    /// `plan-memory` checks that it fits and keeps the base's swizzle atoms whole.
    fn smem_alias(&mut self, a: &SExpr) -> Res<tirx_ir::arena::Handle<Buffer>> {
        let base = crate::args::path_ident(a).and_then(|i| match self.local(&i.to_string()) {
            Some(super::Local::Buf(b)) if self.kernel.buffers[b].space == Space::Shared => Some(b),
            _ => None,
        });
        base.ok_or_else(|| {
            self.fail(
                a,
                "expected a shared buffer declared before: `smem::<bf16>([G, R, 64], swizzle = B128, alias = s)`",
            )
        })
    }

    /// `major = k | mn` (or a config's majorness entry, `major = MB`) of a shared buffer:
    /// which operand dimension is contiguous when an MMA reads it. The shape is logical,
    /// `[.., MN, K]`, either way; an MN-major tile holds f16/bf16 (the only types `wgmma`
    /// transposes, PTX ISA §9.7.15.5.2) and its MN extent is whole swizzle spans (its chunks
    /// are swizzle atoms: [`mn_chunks`]); anything else is refused here, at the argument.
    fn major(&mut self, m: &SExpr, elem: ElemType, shape: &[u32], swizzle: Swizzle) -> Res<Major> {
        let name = crate::args::path_ident(m).map(|i| i.to_string());
        let major = name
            .as_deref()
            .and_then(|n| Major::from_name(n).or_else(|| self.config.major(n)));
        let Some(major) = major else {
            return Err(self.fail(
                m,
                "unknown majorness; expected `k`, `mn` or a config's majorness entry (`MB = mn`)",
            ));
        };
        if major == Major::K {
            return Ok(major);
        }
        if elem.is_int8() {
            return Err(self.fail(
                m,
                format!(
                    "an MN-major tile must hold bf16 or f16, not {0}: tirx reads kind::i8's operands K-major only; declare `smem::<{0}>([rows, 128], swizzle = B128)` and give the tensor K-major",
                    elem.name()
                ),
            ));
        }
        if elem.is_f6f4() {
            return Err(self.fail(
                m,
                format!(
                    "an MN-major tile must hold bf16 or f16, not {0}: tirx reads the 6- and 4-bit types K-major only (each 16 K-elements packed in one 16-byte group); declare `smem::<{0}>([rows, 128], swizzle = B128)` and give the tensor K-major",
                    elem.name()
                ),
            ));
        }
        if elem.is_fp8() {
            // PTX ISA §9.7.15.5.2: the `.e4m3`/`.e5m2` wgmma has no imm-trans operands.
            return Err(self.fail(
                m,
                format!(
                    "an MN-major tile must hold bf16 or f16, not {0}: the FP8 wgmma reads both operands K-major (PTX ISA §9.7.15.5.2, no transpose for 8-bit types); declare `smem::<{0}>([rows, 128], swizzle = B128)` and give the tensor K-major (B as N×K)",
                    elem.name()
                ),
            ));
        }
        if !matches!(elem, ElemType::Bf16 | ElemType::F16) {
            return Err(self.fail(
                m,
                format!(
                    "an MN-major tile must hold bf16 or f16 (wgmma transposes only 16-bit operands), not {}",
                    elem.name()
                ),
            ));
        }
        let Some(span_bytes) = swizzle.span_bytes() else {
            return Err(self.fail(
                m,
                "an MN-major tile needs a swizzle (`swizzle = B128`): its chunks are swizzle atoms",
            ));
        };
        let span = span_bytes / elem.bytes();
        match shape {
            [.., mn, _k] if mn % span == 0 => Ok(major),
            [.., mn, _k] => Err(self.fail(
                m,
                format!(
                    "an MN-major tile `[.., MN, K]` is stored in chunks of one {span_bytes}-byte swizzle span ({span} {} elements) of MN: MN must be a multiple of {span}, not {mn}",
                    elem.name()
                ),
            )),
            _ => Err(self.fail(
                m,
                "an MN-major tile has at least two dimensions, `[.., MN, K]`",
            )),
        }
    }

    /// `pipeline::<STAGES>(consumers = n)`: the pipeline and its `.full` / `.empty` barriers.
    fn pipeline(
        &mut self,
        word: &Word,
        generics: &[&syn::GenericArgument],
        c: &syn::ExprCall,
        name: String,
        span: tirx_ir::Span,
    ) -> Res<Local> {
        let usage = word.usage;
        let stages_expr: SExpr = match generics {
            [syn::GenericArgument::Const(e)] => e.clone(),
            [syn::GenericArgument::Type(syn::Type::Path(t))] if t.qself.is_none() => {
                SExpr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: t.path.clone(),
                })
            }
            _ => {
                return Err(self.fail(&c.func, format!("expected the number of stages: `{usage}`")));
            }
        };
        let args = self.word_args(word, &c.args, c);
        let stages = self.const_u32(&stages_expr, "the number of stages");
        let (args, stages) = (args?, stages?);
        if stages == 0 {
            return Err(self.fail(&stages_expr, "a pipeline needs at least one stage"));
        }
        let consumers = self.positive_arg(&args, "consumers")?;
        // With multicast, the producers of `peers` CTAs write into each stage, so a stage is
        // empty once the consumers of every one of them released it.
        let peers = self.positive_arg(&args, "peers")?;
        let Some(arrivals) = consumers.checked_mul(peers) else {
            return Err(self.fail(
                &c.args,
                format!("{consumers} consumers × {peers} peers arrivals overflow a u32 count"),
            ));
        };
        // Besides the producer's one `arrive.expect_tx` a phase, `writers` threads may fill
        // part of a stage with plain stores and arrive on its full barrier (`pipe.full(s)
        // .arrive()`, each releasing its own stores): the stage is full once all have.
        let writers = self.count_arg(&args, "writers")?;
        let Some(full_arrivals) = writers.checked_add(1) else {
            return Err(self.fail(&c.args, format!("{writers} writers overflow a u32 count")));
        };
        let full = Barrier {
            name: format!("{name}.full"),
            count: stages,
            arrivals: full_arrivals,
            offset: None,
            span,
        };
        let empty = Barrier {
            name: format!("{name}.empty"),
            count: stages,
            arrivals,
            offset: None,
            span,
        };
        let full = self.kernel.barriers.append(full);
        let empty = self.kernel.barriers.append(empty);
        let pipe = Pipeline {
            name,
            stages,
            full,
            empty,
            peers,
            span,
        };
        Ok(Local::Pipe(self.kernel.pipelines.append(pipe)))
    }

    /// The element type `ident` names: `bf16`/`f16`/`f32`, or an element-type entry of the
    /// config being lowered.
    pub(crate) fn elem_type(&self, ident: &Ident) -> Option<ElemType> {
        let name = ident.to_string();
        ElemType::from_name(&name).or_else(|| self.config.elem_type(&name))
    }

    /// A named count argument (default 1), positive.
    fn positive_arg(&mut self, args: &CallArgs, key: &str) -> Res<u32> {
        let Some(e) = args.get(key) else { return Ok(1) };
        match self.const_u32(e, &format!("`{key}`"))? {
            0 => Err(self.fail(e, format!("`{key}` must be at least 1"))),
            v => Ok(v),
        }
    }

    /// A named count argument (default 0).
    fn count_arg(&mut self, args: &CallArgs, key: &str) -> Res<u32> {
        match args.get(key) {
            Some(e) => self.const_u32(e, &format!("`{key}`")),
            None => Ok(0),
        }
    }
}

/// The stored shape of an MN-major tile of logical shape `[.., MN, K]`: `[.., MN / span, K,
/// span]`, chunks of one swizzle span of MN elements, each `K` rows of one swizzle row (what
/// one `[K, span]` TMA box of an MN-major tensor fills, and what a transposed wgmma operand
/// descriptor walks). The caller checked that MN is whole spans.
pub(crate) fn mn_chunks(shape: &[u32], swizzle: Swizzle, elem: ElemType) -> Vec<u32> {
    let span = swizzle.span_bytes().unwrap_or(128) / elem.bytes();
    let (lead, rest) = shape.split_at(shape.len().saturating_sub(2));
    let mut out = lead.to_vec();
    if let [mn, k] = rest {
        out.extend([mn / span, *k, span]);
    }
    out
}
