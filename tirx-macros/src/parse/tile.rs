//! Register-tile expressions: syn → `TExpr`, and the statements that compute them.
//!
//! An expression is a tile expression when it mentions a register tile, a mask bound by
//! `let`, or a tile function (`exp2_approx`, `reduce_max`, `select`, …; `min`/`max` of
//! tiles). Its parts that mention neither tiles nor floats are ordinary `u32` scalars
//! (`N - cta.x * R`), computed once and compared with `row_index`/`col_index`.
//!
//! - `let y = EXPR;` with a float value: a new register tile `y` of the layout of the tiles it
//!   reads (a statistic broadcasts onto it), `compute @y = EXPR`;
//! - `let mask = EXPR;` with a predicate or index value: no registers — the name stands for
//!   the expression wherever it is used;
//! - `let s = reduce_max(t, axis = 1);`: the statistic `s` (`reduce`); inside a larger
//!   expression a reduction is computed first into a temporary;
//! - `t = EXPR;`, `t += EXPR;`: recompute a tile declared with `regs` or `let mut`.
//!
//! Types follow `tirx_ir::regtile::ttype`: floats compute in f32 (16-bit tiles widen as they
//! are read), a value is stored into a tile of its own type, and narrowing is spelled
//! `cast::<bf16>(…)`.

use super::stmt::strip_parens;
use super::vocab::{self, Id, Kind};
use super::{Local, Lowerer, Res};
use syn::Expr as SExpr;
use tirx_ir::abi::ElemType;
use tirx_ir::abi::Swizzle;
use tirx_ir::{
    Block, Buffer, CmpOp, Handle, Layout, Op, ReduceKind, ScalarType, Space, Stmt, StmtKind, TBin,
    TExpr, TType, TUn,
};

/// The functions a register-tile expression may call, in vocabulary order.
fn tile_functions() -> Vec<&'static str> {
    let mut v = vocab::names(Kind::TileFn);
    v.extend(
        vocab::names(Kind::Function)
            .into_iter()
            .filter(|n| matches!(*n, "min" | "max")),
    );
    v
}

/// The last path segment's name of a callee (`cast` in `cast::<bf16>`).
pub(crate) fn callee(func: &SExpr) -> Option<String> {
    match strip_parens(func) {
        SExpr::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            Some(p.path.segments[0].ident.to_string())
        }
        _ => None,
    }
}

/// `f32::INFINITY` and friends.
fn f32_const(e: &SExpr) -> Option<f32> {
    let SExpr::Path(p) = strip_parens(e) else {
        return None;
    };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match segs.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["f32", "INFINITY"] => Some(f32::INFINITY),
        ["f32", "NEG_INFINITY"] => Some(f32::NEG_INFINITY),
        ["f32", "MAX"] => Some(f32::MAX),
        ["f32", "MIN"] => Some(f32::MIN),
        _ => None,
    }
}

impl Lowerer<'_> {
    fn tile_local(&self, e: &SExpr) -> Option<Local> {
        let SExpr::Path(p) = strip_parens(e) else {
            return None;
        };
        let id = p.path.get_ident()?;
        match self.local(&id.to_string())? {
            l @ Local::Buf(b) if self.kernel.buffers[b].space == Space::Reg => Some(l),
            l @ Local::TileExpr(_) => Some(l),
            _ => None,
        }
    }

    /// `base`, or `base.2`, `base.3`, … when a buffer already has that name (temporaries,
    /// shadowed `let`s): buffer names are unique.
    fn fresh(&self, base: &str) -> String {
        let taken = |n: &str| self.kernel.buffers.iter().any(|(_, b)| b.name == n);
        if !taken(base) {
            return base.to_string();
        }
        (2..)
            .map(|i| format!("{base}.{i}"))
            .find(|n| !taken(n))
            .expect("a free name")
    }

    /// Whether `e` is a tile expression (see the module docs).
    pub(crate) fn is_tile_expr(&self, e: &SExpr) -> bool {
        if self.tile_local(e).is_some() {
            return true;
        }
        match strip_parens(e) {
            SExpr::Call(c) => {
                let name = callee(&c.func);
                let tile_fn = name
                    .as_deref()
                    .is_some_and(|n| vocab::lookup(None, n, &[Kind::TileFn]).is_some());
                tile_fn || c.args.iter().any(|a| self.is_tile_expr(a))
            }
            SExpr::Binary(b) => self.is_tile_expr(&b.left) || self.is_tile_expr(&b.right),
            SExpr::Unary(u) => self.is_tile_expr(&u.expr),
            _ => false,
        }
    }

    /// Whether `e` mentions a float (a literal, `f32::…`, an f32 argument).
    pub(crate) fn mentions_float(&self, e: &SExpr) -> bool {
        match strip_parens(e) {
            SExpr::Lit(l) => matches!(l.lit, syn::Lit::Float(_)),
            SExpr::Path(p) => {
                f32_const(e).is_some()
                    || p.path
                        .get_ident()
                        .is_some_and(|i| matches!(self.local(&i.to_string()), Some(Local::Arg(_))))
            }
            SExpr::Binary(b) => self.mentions_float(&b.left) || self.mentions_float(&b.right),
            SExpr::Unary(u) => self.mentions_float(&u.expr),
            SExpr::Call(c) => c.args.iter().any(|a| self.mentions_float(a)),
            _ => false,
        }
    }

    /// Lowers a tile expression; reductions inside it are computed into temporaries first
    /// (their statements go to `out`); `carriers` collects the tiles `row_index`/`col_index`
    /// name (they carry the layout).
    pub(crate) fn texpr(
        &mut self,
        e: &SExpr,
        out: &mut Block,
        carriers: &mut Vec<Handle<Buffer>>,
    ) -> Res<TExpr> {
        if let Some(l) = self.tile_local(e) {
            return Ok(match l {
                Local::Buf(b) => TExpr::Tile(b),
                Local::TileExpr(i) => self.tile_aliases[i].clone(),
                _ => unreachable!("tile_local returns tiles"),
            });
        }
        if let Some(v) = f32_const(e) {
            return Ok(TExpr::F32(v.to_bits()));
        }
        if let SExpr::Path(p) = strip_parens(e)
            && let Some(id) = p.path.get_ident()
            && let Some(Local::Tensor(_)) = self.local(&id.to_string())
        {
            return Err(self.fail(
                id,
                format!("`{id}` is a global tensor; copy a tile of it into a register tile first: `copy(t, {id}.tile(i, j))`"),
            ));
        }
        if let SExpr::Path(p) = strip_parens(e)
            && let Some(id) = p.path.get_ident()
            && let Some(Local::Buf(bf)) = self.local(&id.to_string())
        {
            let space = self.kernel.buffers[bf].space.name();
            return Err(self.fail(
                id,
                format!("`{id}` is a {space} buffer, not a register tile; copy it into one: `copy(t, {id})`"),
            ));
        }
        // A negative integer literal (`-1`; scalars are `u32`): its 32-bit two's complement,
        // which is the `i32` value next to an `i32` tile.
        if let SExpr::Unary(u) = strip_parens(e)
            && matches!(u.op, syn::UnOp::Neg(_))
            && let SExpr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) = strip_parens(&u.expr)
            && let Ok(v) = i.base10_parse::<u32>()
        {
            return Ok(TExpr::Int(tirx_ir::ir::Expr::u32(v.wrapping_neg())));
        }
        if !self.is_tile_expr(e) && !self.mentions_float(e) {
            let v = self.scalar(e)?;
            if self.ty(&v) != ScalarType::U32 {
                return Err(self.fail(
                    e,
                    "a predicate scalar cannot mix with tiles; compare tiles or indices instead",
                ));
            }
            return Ok(TExpr::Int(v));
        }
        let b = |x: TExpr| Box::new(x);
        Ok(match strip_parens(e) {
            SExpr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(f),
                ..
            }) => match f.base10_parse::<f32>() {
                Ok(v) if f.suffix().is_empty() || f.suffix() == "f32" => TExpr::F32(v.to_bits()),
                _ => return Err(self.fail(f, "expected an f32 literal")),
            },
            SExpr::Path(p) => {
                let Some(id) = p.path.get_ident() else {
                    return Err(self.fail(e, "expected a tile, a scalar or `f32::INFINITY`"));
                };
                match self.local(&id.to_string()) {
                    Some(Local::Arg(i)) => TExpr::Arg(self.def.scalars[i].to_string()),
                    _ => return Err(self.fail(id, format!("`{id}` is not a tile or a scalar"))),
                }
            }
            SExpr::Unary(u) => {
                let a = self.texpr(&u.expr, out, carriers)?;
                match (&u.op, a) {
                    (syn::UnOp::Neg(_), TExpr::F32(bits)) => TExpr::F32(bits ^ 0x8000_0000),
                    (syn::UnOp::Neg(_), a) => TExpr::Un(TUn::Neg, b(a)),
                    (syn::UnOp::Not(_), a) => TExpr::Un(TUn::Not, b(a)),
                    _ => return Err(self.fail(e, "unsupported unary operator on tiles")),
                }
            }
            SExpr::Binary(bin) => {
                let l = self.texpr(&bin.left, out, carriers)?;
                let r = self.texpr(&bin.right, out, carriers)?;
                use syn::BinOp as B;
                let arith = |o| TExpr::Bin(o, b(l.clone()), b(r.clone()));
                let cmp = |c| TExpr::Cmp(c, b(l.clone()), b(r.clone()));
                match bin.op {
                    B::Add(_) => arith(TBin::Add),
                    B::Sub(_) => arith(TBin::Sub),
                    B::Mul(_) => arith(TBin::Mul),
                    B::Div(_) => arith(TBin::Div),
                    B::And(_) => arith(TBin::And),
                    B::Or(_) => arith(TBin::Or),
                    B::Rem(_) => arith(TBin::Rem),
                    B::Shl(_) => arith(TBin::Shl),
                    B::Shr(_) => arith(TBin::Shr),
                    B::BitAnd(_) => arith(TBin::BitAnd),
                    B::BitOr(_) => arith(TBin::BitOr),
                    B::BitXor(_) => arith(TBin::BitXor),
                    B::Lt(_) => cmp(CmpOp::Lt),
                    B::Le(_) => cmp(CmpOp::Le),
                    B::Gt(_) => cmp(CmpOp::Gt),
                    B::Ge(_) => cmp(CmpOp::Ge),
                    B::Eq(_) => cmp(CmpOp::Eq),
                    B::Ne(_) => cmp(CmpOp::Ne),
                    _ => {
                        return Err(self.fail(
                            &bin.op,
                            "tiles take + - * / comparisons && ||, and on integers % << >> & | ^; this operator is for scalars",
                        ));
                    }
                }
            }
            SExpr::Call(c) => self.tile_call(c, out, carriers)?,
            _ => return Err(self.fail(e, "unsupported expression on register tiles")),
        })
    }

    fn tile_call(
        &mut self,
        c: &syn::ExprCall,
        out: &mut Block,
        carriers: &mut Vec<Handle<Buffer>>,
    ) -> Res<TExpr> {
        let name = callee(&c.func).unwrap_or_default();
        let Some(w) = vocab::lookup(None, &name, &[Kind::TileFn, Kind::Function]) else {
            let msg = self.unknown_tile_function(&name);
            return Err(self.fail(&c.func, msg));
        };
        let args = self.word_args(w, &c.args, c)?;
        let pos = args.pos.clone();
        let mut sub = |cx: &mut Self, i: usize| cx.texpr(pos[i], out, carriers).map(Box::new);
        let unary = match w.id {
            Id::Exp2Approx => Some(TUn::Exp2Approx),
            Id::Exp2Poly3 => Some(TUn::Exp2Poly3),
            Id::Log2Approx => Some(TUn::Log2Approx),
            Id::RsqrtApprox => Some(TUn::RsqrtApprox),
            Id::RcpApprox => Some(TUn::RcpApprox),
            Id::Rcp => Some(TUn::Rcp),
            Id::Sqrt => Some(TUn::Sqrt),
            Id::TanhApprox => Some(TUn::TanhApprox),
            Id::ToBits => Some(TUn::ToBits),
            Id::FromBits => Some(TUn::FromBits),
            Id::Abs => Some(TUn::Abs),
            _ => None,
        };
        if let Some(f) = unary {
            return Ok(TExpr::Un(f, sub(self, 0)?));
        }
        Ok(match w.id {
            Id::Min | Id::Max => {
                let op = if w.id == Id::Min {
                    TBin::Min
                } else {
                    TBin::Max
                };
                TExpr::Bin(op, sub(self, 0)?, sub(self, 1)?)
            }
            Id::Fma => TExpr::Fma(sub(self, 0)?, sub(self, 1)?, sub(self, 2)?),
            Id::Select => TExpr::Select(sub(self, 0)?, sub(self, 1)?, sub(self, 2)?),
            Id::Cast => {
                let to = self.cast_target(c)?;
                TExpr::Un(TUn::Cast(to), sub(self, 0)?)
            }
            Id::RowIndex | Id::ColIndex => {
                let Some(Local::Buf(t)) = self.tile_local(pos[0]) else {
                    return Err(self.fail(pos[0], "expected a register tile: `col_index(t)`"));
                };
                carriers.push(t);
                TExpr::Index(u8::from(w.id == Id::ColIndex))
            }
            Id::ReduceMax | Id::ReduceSum | Id::ReduceMin | Id::ArgMax | Id::ArgMin => {
                let s = self.reduce_into(c, None, out)?;
                TExpr::Tile(s)
            }
            Id::Gather => self.gather(c, &pos, args.get("oob"), out, carriers)?,
            _ => {
                let msg = format!(
                    "`{name}` takes scalars, not register tiles; functions on tiles are {}",
                    tile_functions().join(", ")
                );
                return Err(self.fail(&c.func, msg));
            }
        })
    }

    /// "unknown function `name`; functions on register tiles are …; did you mean …?", with
    /// the module's tile functions when there are some.
    pub(crate) fn unknown_tile_function(&self, name: &str) -> String {
        let fns = tile_functions();
        let candidates: Vec<String> = fns.iter().map(|s| s.to_string()).collect();
        // One guess over the functions on tiles and the module's tile functions together.
        let module = self.tile_fn_hint(name, &candidates);
        let hint = if module.is_empty() {
            self.or_own_fn(super::did_you_mean(name, &candidates))
        } else {
            module
        };
        format!(
            "unknown function `{name}`; functions on register tiles are {}{hint}",
            fns.join(", ")
        )
    }

    fn cast_target(&mut self, c: &syn::ExprCall) -> Res<ElemType> {
        let SExpr::Path(p) = strip_parens(&c.func) else {
            return Err(self.fail(&c.func, "expected `cast::<bf16>(x)`"));
        };
        let syn::PathArguments::AngleBracketed(ab) = &p.path.segments[0].arguments else {
            return Err(self.fail(&c.func, "say the type: `cast::<bf16>(x)`"));
        };
        let ty = match ab.args.first() {
            Some(syn::GenericArgument::Type(syn::Type::Path(t))) => t.path.get_ident(),
            _ => None,
        };
        match ty.and_then(|i| self.elem_type(i)) {
            Some(e) if e.is_scale() => Err(self.fail(
                ab,
                format!(
                    "no cast to {}: scale factors are block-scaled MMA operands, loaded by \
                     TMA and copied into tensor memory by tcgen05::cp, not computed in registers",
                    e.name()
                ),
            )),
            Some(e) if e.is_fp4() => Err(self.fail(
                ab,
                "no cast to e2m1x2: packed FP4 is an operand of the block-scaled MMA, loaded by \
                 TMA, not computed in registers",
            )),
            Some(e) if e.is_int8() => Err(self.fail(
                ab,
                format!(
                    "no cast to {}: 8-bit integers are kind::i8 MMA operands, loaded by TMA, not \
                     computed in registers",
                    e.name()
                ),
            )),
            Some(e) if e.is_f6f4() => Err(self.fail(
                ab,
                format!(
                    "no cast to {}: the 6- and 4-bit floats are MMA operand types in a padded \
                     shared-memory packing, loaded by TMA, not computed in registers",
                    e.name()
                ),
            )),
            Some(e) if e.is_fp8() => Err(self.fail(
                ab,
                format!(
                    "no cast to {}: 8-bit floats are MMA operand types, loaded by TMA, not \
                     computed in registers",
                    e.name()
                ),
            )),
            Some(e) => Ok(e),
            None => Err(self.fail(
                ab,
                "expected an element type: bf16, f16, f32, i32, u32, i64, u64 or a config's",
            )),
        }
    }

    /// `reduce_max(t, axis = A)` into a new statistic buffer (named `name`, else a
    /// temporary); `t` may be any float tile expression (computed first).
    fn reduce_into(
        &mut self,
        c: &syn::ExprCall,
        name: Option<String>,
        out: &mut Block,
    ) -> Res<Handle<Buffer>> {
        let name_of = callee(&c.func).unwrap_or_default();
        let w = vocab::lookup(None, &name_of, &[Kind::TileFn]).expect("a reduction");
        let args = self.word_args(w, &c.args, c)?;
        let axis = match args.get("axis") {
            Some(a) => self.const_u32(a, "the axis")?,
            None => return Err(self.fail(c, format!("say the axis: `{}`", w.usage))),
        };
        if axis > 1 {
            return Err(self.fail(
                args.get("axis").expect("given"),
                "the axis is 0 (down the rows) or 1 (along the columns)",
            ));
        }
        // `across = cluster`: the statistic combines the CTAs of the cluster too (pushed with
        // `st.async`); `across = cluster_pull`: the same through a cluster barrier and reads of
        // every peer's slot.
        let (cluster, pull) = match args.get("across") {
            None => (false, false),
            Some(a) => match a {
                SExpr::Path(p) if p.path.is_ident("cluster") || p.path.is_ident("cluster_pull") => {
                    let size: u32 = self.kernel.sig.cluster.iter().product();
                    if size < 2 {
                        return Err(self.fail(
                            a,
                            "`across = cluster` combines the CTAs of a cluster, but this kernel's cluster is one CTA: declare `cluster = (n, 1, 1)`",
                        ));
                    }
                    (true, p.path.is_ident("cluster_pull"))
                }
                _ => {
                    return Err(self.fail(
                        a,
                        "`across` takes `cluster` (or `cluster_pull`): `reduce_sum(t, axis = 1, across = cluster)`",
                    ));
                }
            },
        };
        // A tile is reduced as it is; an expression is evaluated element by element as the
        // reduction combines it, never stored (its layout is the template tile's).
        let (src, value) = match self.tile_local(args.pos[0]) {
            Some(Local::Buf(b)) => (b, None),
            _ => {
                let mut carriers = Vec::new();
                let v = self.texpr(args.pos[0], out, &mut carriers)?;
                match tirx_ir::regtile::ttype(&self.kernel, &v) {
                    Ok(TType::Elem(_) | TType::I32 | TType::U32 | TType::I64 | TType::U64) => {}
                    Ok(t) => {
                        return Err(self.fail(
                            args.pos[0],
                            format!(
                                "`{name_of}` takes float or integer values; this is a {} tile (a comparison or mask): reduce the values it selects, `select(cond, t, f32::NEG_INFINITY)`",
                                t.name()
                            ),
                        ));
                    }
                    Err(why) => return Err(self.fail(args.pos[0], why.to_string())),
                }
                (self.template(args.pos[0], &v, &carriers)?, Some(v))
            }
        };
        let vt = match &value {
            Some(v) => tirx_ir::regtile::ttype(&self.kernel, v).ok(),
            None => Some(tirx_ir::regtile::tile_ttype(self.kernel.buffers[src].elem)),
        };
        if let Some(t @ (TType::I64 | TType::U64)) = vt
            && matches!(w.id, Id::ArgMax | Id::ArgMin)
        {
            // TODO(#30): 64-bit keys for argmax/argmin.
            return Err(self.fail(
                args.pos[0],
                format!(
                    "`{name_of}` of {} values is not supported yet: index reductions compare 32-bit keys (cast the values to f32 or i32 first)",
                    t.name()
                ),
            ));
        }
        let l = tirx_ir::regtile::layout(&self.kernel, src)
            .map_err(|e| self.fail(args.pos[0], e.to_string()))?;
        let stat = l
            .reduce(axis as usize)
            .map_err(|e| self.fail(c, e.to_string()))?;
        let shape = &self.kernel.buffers[src].layout.shape;
        let shape = if axis == 1 {
            vec![shape[0], 1]
        } else {
            vec![1, shape[1]]
        };
        let kind = match w.id {
            Id::ReduceMax => ReduceKind::Max,
            Id::ReduceMin => ReduceKind::Min,
            Id::ArgMax => ReduceKind::ArgMax,
            Id::ArgMin => ReduceKind::ArgMin,
            _ => ReduceKind::Sum,
        };
        // The statistic of floats is f32; of integers, their own type (`i32` sums wrap); of
        // `argmax`/`argmin`, the `u32` index along the axis.
        let elem = match &value {
            Some(v) => tirx_ir::regtile::ttype(&self.kernel, v).ok(),
            None => Some(tirx_ir::regtile::tile_ttype(self.kernel.buffers[src].elem)),
        };
        let elem = match elem {
            _ if kind.is_arg() => ElemType::U32,
            Some(TType::I64) => ElemType::I64,
            Some(TType::U64) => ElemType::U64,
            Some(TType::I32) => ElemType::I32,
            Some(TType::U32) => ElemType::U32,
            _ => ElemType::F32,
        };
        let span = self.span(c);
        let dst = self.kernel.buffers.append(Buffer {
            name: self.fresh(&name.unwrap_or_else(|| format!("{name_of}.out"))),
            space: Space::Reg,
            elem,
            layout: Layout::row_major(&shape, Swizzle::None),
            offset: None,
            tmem_cols: None,
            alias: None,
            regs: Some(stat),
            span,
        });

        out.push(Stmt::at(
            StmtKind::Op(Op::Reduce {
                dst,
                src,
                value,
                kind,
                axis: axis as u8,
                scratch: None,
                again: false,
                cluster,
                pull,
                cluster_scratch: None,
                cluster_bar: None,
            }),
            span,
        ));
        Ok(dst)
    }

    /// Computes a float tile expression into a new tile named `name`.
    fn materialize(&mut self, e: &SExpr, name: String, out: &mut Block) -> Res<Handle<Buffer>> {
        let mut carriers = Vec::new();
        let value = self.texpr(e, out, &mut carriers)?;
        match tirx_ir::regtile::ttype(&self.kernel, &value) {
            Ok(TType::Elem(_) | TType::I32 | TType::I64 | TType::U64) => {
                self.materialize_value(e, name, value, &carriers, out)
            }
            Ok(TType::U32) if !tirx_ir::regtile::index_like(&self.kernel, &value) => {
                self.materialize_value(e, name, value, &carriers, out)
            }
            Ok(t) => Err(self.fail(
                e,
                format!(
                    "this is a {} tile, not a float or integer tile{}",
                    t.name(),
                    if t == TType::U32 {
                        " (an index expression: `cast::<i32>(…)` or `cast::<u32>(…)` makes it one)"
                    } else {
                        ""
                    }
                ),
            )),
            Err(why) => Err(self.fail(e, why.to_string())),
        }
    }

    /// The tile whose layout an expression's result takes: the one every other tile it
    /// reads equals or is a statistic of.
    pub(crate) fn template(
        &mut self,
        e: &SExpr,
        v: &TExpr,
        carriers: &[Handle<Buffer>],
    ) -> Res<Handle<Buffer>> {
        let mut tiles = carriers.to_vec();
        v.tiles(&mut tiles);
        let k = &self.kernel;
        let lay = |b| tirx_ir::regtile::layout(k, b).ok();
        let fits = |c: Handle<Buffer>| {
            let Some(lc) = lay(c) else { return false };
            tiles.iter().all(|&t| {
                lay(t)
                    .is_some_and(|lt| lt == lc || (0..2).any(|a| lc.reduce(a).as_ref() == Ok(&lt)))
            })
        };
        match tiles.iter().copied().find(|&c| fits(c)) {
            Some(t) => Ok(t),
            None if tiles.is_empty() => Err(self.fail(e, "a tile expression needs a tile to take its layout from")),
            None => Err(self.fail(e, "these tiles have layouts that do not combine: elementwise ops take tiles of one layout and the statistics reduced from it")),
        }
    }

    /// `let ident = EXPR;` for a tile expression.
    pub(crate) fn let_tile(
        &mut self,
        ident: &syn::Ident,
        mutable: bool,
        init: &SExpr,
        out: &mut Block,
    ) -> Res<()> {
        if let SExpr::Call(c) = strip_parens(init)
            && matches!(
                callee(&c.func).as_deref(),
                Some("reduce_max" | "reduce_sum" | "reduce_min" | "argmax" | "argmin")
            )
        {
            let b = self.reduce_into(c, Some(ident.to_string()), out)?;
            if mutable {
                self.mutable_tiles.push(b);
            }
            return self.bind(ident, Local::Buf(b));
        }
        let mut carriers = Vec::new();
        let value = self.texpr(init, out, &mut carriers)?;
        let mut tiles = carriers.clone();
        value.tiles(&mut tiles);
        match tirx_ir::regtile::ttype(&self.kernel, &value) {
            // A float scalar (`cast::<f32>(N)`, `alpha * 0.5`), or a 64-bit one
            // (`cast::<i64>(n)`): a named expression too.
            Ok(TType::Elem(_) | TType::I64 | TType::U64) if tiles.is_empty() && !mutable => {
                self.tile_aliases.push(value);
                let i = self.tile_aliases.len() - 1;
                return self.bind(ident, Local::TileExpr(i));
            }
            Ok(TType::Elem(_) | TType::I32 | TType::I64 | TType::U64) => {}
            Ok(TType::U32) if !tirx_ir::regtile::index_like(&self.kernel, &value) => {}
            Ok(_) if mutable => {
                return Err(self.fail(
                    ident,
                    "a mask or index tile is a named expression, not a variable; drop `mut`",
                ));
            }
            Ok(_) => {
                self.tile_aliases.push(value);
                let i = self.tile_aliases.len() - 1;
                return self.bind(ident, Local::TileExpr(i));
            }
            Err(why) => return Err(self.fail(init, why.to_string())),
        }
        let mut tmp = Vec::new();
        let b = self.materialize_value(init, ident.to_string(), value, &carriers, &mut tmp)?;
        out.extend(tmp);
        if mutable {
            self.mutable_tiles.push(b);
        }
        self.bind(ident, Local::Buf(b))
    }

    fn materialize_value(
        &mut self,
        e: &SExpr,
        name: String,
        value: TExpr,
        carriers: &[Handle<Buffer>],
        out: &mut Block,
    ) -> Res<Handle<Buffer>> {
        let Some(elem) = tirx_ir::regtile::ttype(&self.kernel, &value)
            .ok()
            .and_then(tirx_ir::regtile::ttype_elem)
        else {
            return Err(self.fail(e, "not a float or integer tile"));
        };
        let template = self.template(e, &value, carriers)?;
        let b = &self.kernel.buffers[template];
        let buf = Buffer {
            name: self.fresh(&name),
            space: Space::Reg,
            elem,
            layout: Layout::row_major(&b.layout.shape, Swizzle::None),
            offset: None,
            tmem_cols: None,
            alias: None,
            regs: b.regs.clone(),
            span: self.span(e),
        };
        let dst = self.kernel.buffers.append(buf);
        let span = self.span(e);
        out.push(Stmt::at(StmtKind::Op(Op::Compute { dst, value }), span));
        Ok(dst)
    }

    /// A tile expression used as an op's operand (`copy(y.tile(i, 0), t * r)`): computed
    /// into a temporary tile by statements that go before the op (`Lowerer::pre`).
    pub(crate) fn tile_operand(&mut self, e: &SExpr) -> Res<Handle<Buffer>> {
        let mut pre = std::mem::take(&mut self.pre);
        let r = self.materialize(e, "operand".into(), &mut pre);
        self.pre = pre;
        r
    }

    /// Whether `left` names a register tile (an assignment to it is a `compute`).
    pub(crate) fn assigns_tile(&self, left: &SExpr) -> bool {
        matches!(self.tile_local(left), Some(Local::Buf(_)))
    }

    /// `t = EXPR;` or `t op= EXPR;` on a register tile.
    pub(crate) fn assign_tile(
        &mut self,
        left: &SExpr,
        right: &SExpr,
        op: Option<TBin>,
        whole: &SExpr,
        out: &mut Block,
    ) -> Res<()> {
        let Some(Local::Buf(dst)) = self.tile_local(left) else {
            return Err(self.fail(left, "only register tiles and variables can be assigned"));
        };
        if !self.mutable_tiles.contains(&dst) {
            let name = &self.kernel.buffers[dst].name;
            return Err(self.fail(left, format!("cannot assign to `{name}`: declare it with `let mut {name}` (or `regs::<T>(…)`)")));
        }
        let mut carriers = Vec::new();
        let mut value = self.texpr(right, out, &mut carriers)?;
        if let Some(op) = op {
            value = TExpr::Bin(op, Box::new(TExpr::Tile(dst)), Box::new(value));
        }
        let span = self.span(whole);
        out.push(Stmt::at(StmtKind::Op(Op::Compute { dst, value }), span));
        Ok(())
    }
}
