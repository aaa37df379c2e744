//! Scalar expressions: syn → `tirx_ir::Expr`, typed and constant-folded.
//!
//! Types: every integer is `u32` (immediates `Imm(v, U32)`, `v` in `0..=u32::MAX`), every
//! comparison and `true`/`false` a `Pred`. Arithmetic wraps like the PTX `.u32` instructions.
//! Subexpressions whose operands are all immediates fold to one immediate, so config constants
//! combine at build time (`BM * BK * 2` is one number in the IR).
//!
//! Names: locals, then config constants (`Imm`), shape symbols (`Dim`), built-ins (`tid`,
//! `warp_id`, `lane_id`, `cta.x|y|z`). Buffers, barriers, pipelines and tensors are not scalars.

use super::vocab::{self, Id, Kind};
use super::{Fail, Local, Lowerer, Res};
use tirx_ir::{BinOp, CmpOp, Expr, ScalarType, Special};

impl Lowerer<'_> {
    /// Lowers a scalar expression.
    pub(crate) fn scalar(&mut self, e: &syn::Expr) -> Res<Expr> {
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit),
            syn::Expr::Paren(p) => self.scalar(&p.expr),
            syn::Expr::Group(g) => self.scalar(&g.expr),
            syn::Expr::Path(p) => match p.path.get_ident() {
                Some(id) if p.qself.is_none() => self.name(id),
                _ => Err(self.fail(e, "expected a scalar name, not a path")),
            },
            syn::Expr::Field(f) => self.field(f),
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Unary(u) => self.unary(u),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::MethodCall(m) => Err(self.fail(
                e,
                format!("`.{}(…)` is not a scalar; scalars are numbers, names and arithmetic on them", m.method),
            )),
            _ => Err(self.fail(e, "unsupported expression; scalars are literals, names, `cta.x`, arithmetic, comparisons, `&&`, `!`, cdiv/min/max")),
        }
    }

    /// Lowers an integer (`u32`) expression.
    pub(crate) fn int(&mut self, e: &syn::Expr) -> Res<Expr> {
        let v = self.scalar(e)?;
        self.expect_ty(e, v, ScalarType::U32)
    }

    /// Lowers a predicate expression.
    pub(crate) fn pred(&mut self, e: &syn::Expr) -> Res<Expr> {
        let v = self.scalar(e)?;
        self.expect_ty(e, v, ScalarType::Pred)
    }

    /// Lowers an integer that must be known at build time (`what` names it in the error).
    pub(crate) fn const_u32(&mut self, e: &syn::Expr, what: &str) -> Res<u32> {
        match self.int(e)? {
            Expr::Imm(v, _) => Ok(v as u32),
            _ => Err(self.fail(
                e,
                format!("{what} must be a build-time constant (literals and config constants)"),
            )),
        }
    }

    /// The type of a lowered expression.
    pub(crate) fn ty(&self, e: &Expr) -> ScalarType {
        match e {
            Expr::Imm(_, t) => *t,
            Expr::Var(v) => self.kernel.vars[*v].ty,
            Expr::Dim(_) | Expr::Special(_) => ScalarType::U32,
            Expr::Bin(_, l, _) => self.ty(l),
            Expr::Cmp(..) | Expr::Not(_) | Expr::AndP(..) => ScalarType::Pred,
        }
    }

    fn expect_ty(&mut self, e: &syn::Expr, v: Expr, want: ScalarType) -> Res<Expr> {
        match (self.ty(&v), want) {
            (a, b) if a == b => Ok(v),
            (_, ScalarType::Pred) => Err(self.fail(e, "expected a predicate (a comparison such as `k > 0`, or `true`/`false`), found an integer")),
            _ => Err(self.fail(e, "expected an integer, found a predicate")),
        }
    }

    fn literal(&mut self, lit: &syn::Lit) -> Res<Expr> {
        match lit {
            syn::Lit::Int(i) if matches!(i.suffix(), "" | "u32") => match i.base10_parse::<u32>() {
                Ok(v) => Ok(Expr::u32(v)),
                Err(_) => Err(self.fail(lit, "integer literal out of range for u32")),
            },
            syn::Lit::Int(i) => Err(self.fail(
                lit,
                format!(
                    "unsupported literal suffix `{}`; scalars are u32",
                    i.suffix()
                ),
            )),
            syn::Lit::Bool(b) => Ok(Expr::Imm(i64::from(b.value), ScalarType::Pred)),
            _ => Err(self.fail(
                lit,
                "unsupported literal; scalars are u32 integers and `true`/`false`",
            )),
        }
    }

    /// A name in scalar position.
    fn name(&mut self, id: &syn::Ident) -> Res<Expr> {
        let name = id.to_string();
        if let Some(local) = self.local(&name) {
            let what = match local {
                Local::Var { var, .. } => return Ok(Expr::Var(var)),
                Local::Value(i) => return Ok(self.values[i].clone()),
                Local::Poison => return Err(Fail),
                Local::Tensor(_) => "a global tensor".to_string(),
                Local::Arg(i) if self.def.scalar_types[i].is_int64() => {
                    let t = self.def.scalar_types[i].name();
                    return Err(self.fail(
                        id,
                        format!(
                            "`{name}` is an {t} argument of the kernel: a value in register-tile \
                             expressions (`t + {name}` with `t` an {t} tile), not a u32 scalar \
                             (a coordinate, a loop bound or a count is an `i32` or `u32` argument)"
                        ),
                    ));
                }
                Local::Arg(_) => {
                    return Err(self.fail(
                        id,
                        format!(
                            "`{name}` is an f32 argument of the kernel: a value in register-tile \
                             expressions (`x * {name}`) and a copy's scale (`alpha = {name}`), \
                             not a u32 scalar"
                        ),
                    ));
                }
                Local::Buf(b) => format!("a {} buffer", self.kernel.buffers[b].space.name()),
                Local::Bar(_) => "an mbarrier".to_string(),
                Local::Pipe(_) => "a pipeline".to_string(),
                Local::TileExpr(_) => "a mask or index tile".to_string(),
            };
            return Err(self.fail(id, format!("`{name}` is {what}, not a scalar")));
        }
        if let Some(v) = self.kernel.const_value(&name) {
            return u32::try_from(v).map(Expr::u32).map_err(|_| {
                self.fail(
                    id,
                    format!("config constant `{name}` = {v} does not fit in u32"),
                )
            });
        }
        if self
            .def
            .params
            .iter()
            .any(|p| p.symbols().any(|s| *s == name))
        {
            return Ok(Expr::Dim(name));
        }
        match name.as_str() {
            "tid" => return Ok(Expr::Special(Special::TidX)),
            "cta_rank" => return Ok(Expr::Special(Special::ClusterCtaRank)),
            "warp_id" => return Ok(Expr::Special(Special::WarpId)),
            "lane_id" => return Ok(Expr::Special(Special::LaneId)),
            "cta" | "ncta" => {
                return Err(self.fail(
                    id,
                    format!(
                        "`{name}` has fields x, y, z: write `{name}.x`, `{name}.y` or `{name}.z`"
                    ),
                ));
            }
            _ => {}
        }
        Err(self.not_found(id))
    }

    /// `cta.x|y|z`.
    fn field(&mut self, f: &syn::ExprField) -> Res<Expr> {
        let base = crate::args::path_ident(&f.base).map(|i| i.to_string());
        let grid = base.as_deref() == Some("ncta");
        if !matches!(base.as_deref(), Some("cta" | "ncta"))
            || self.local(base.as_deref().unwrap_or("")).is_some()
        {
            return Err(self.fail(
                f,
                "unsupported field access; the scalar fields are `cta.x|y|z` (CTA index) and `ncta.x|y|z` (grid size)",
            ));
        }
        let dim = match &f.member {
            syn::Member::Named(m) if m == "x" => 0,
            syn::Member::Named(m) if m == "y" => 1,
            syn::Member::Named(m) if m == "z" => 2,
            m => {
                let shown = quote::quote!(#m);
                return Err(self.fail(
                    m,
                    format!("unknown field `{shown}` of `cta`; expected x, y, z"),
                ));
            }
        };
        Ok(Expr::Special(if grid {
            Special::NCtaId(dim)
        } else {
            Special::CtaId(dim)
        }))
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Res<Expr> {
        use syn::BinOp as S;
        let arith = match b.op {
            S::Add(_) => Some(BinOp::Add),
            S::Sub(_) => Some(BinOp::Sub),
            S::Mul(_) => Some(BinOp::Mul),
            S::Div(_) => Some(BinOp::Div),
            S::Rem(_) => Some(BinOp::Rem),
            S::BitAnd(_) => Some(BinOp::And),
            S::BitOr(_) => Some(BinOp::Or),
            S::BitXor(_) => Some(BinOp::Xor),
            S::Shl(_) => Some(BinOp::Shl),
            S::Shr(_) => Some(BinOp::Shr),
            _ => None,
        };
        let cmp = match b.op {
            S::Eq(_) => Some(CmpOp::Eq),
            S::Ne(_) => Some(CmpOp::Ne),
            S::Lt(_) => Some(CmpOp::Lt),
            S::Le(_) => Some(CmpOp::Le),
            S::Gt(_) => Some(CmpOp::Gt),
            S::Ge(_) => Some(CmpOp::Ge),
            _ => None,
        };
        if let Some(op) = arith {
            let (l, r) = (self.int(&b.left), self.int(&b.right));
            return self.fold_bin(b, op, l?, r?);
        }
        if let Some(op) = cmp {
            let (l, r) = (self.int(&b.left), self.int(&b.right));
            return Ok(fold_cmp(op, l?, r?));
        }
        match b.op {
            S::And(_) => {
                let (l, r) = (self.pred(&b.left), self.pred(&b.right));
                Ok(and_p(l?, r?))
            }
            S::Or(_) => {
                // a || b == !(!a && !b): the IR has no predicate `or`.
                let (l, r) = (self.pred(&b.left), self.pred(&b.right));
                Ok(not_p(and_p(not_p(l?), not_p(r?))))
            }
            _ => Err(self.fail(&b.op, "compound assignment is a statement, not a value")),
        }
    }

    /// Builds `l op r`, folding immediates (`e` is where a division by zero is reported).
    pub(crate) fn fold_bin(
        &mut self,
        e: &impl quote::ToTokens,
        op: BinOp,
        l: Expr,
        r: Expr,
    ) -> Res<Expr> {
        // A constant zero divisor is an error even when the dividend is known only at run
        // time (`div.u32` by 0 gives an unspecified value, PTX ISA §9.7.1.8).
        if matches!(op, BinOp::Div | BinOp::Rem | BinOp::CeilDiv) && matches!(r, Expr::Imm(0, _)) {
            let what = if op == BinOp::CeilDiv {
                "`cdiv` by"
            } else {
                "division by"
            };
            return Err(self.fail(
                e,
                format!("{what} zero: the divisor is the constant 0 (a config constant or literal), so the result is unspecified"),
            ));
        }
        // Scalars are 32-bit: PTX `shl.b32` / `shr.u32` clamp a larger amount (§9.7.7.7,
        // §9.7.7.8), so a constant shift by 32 or more is always 0 — never what was meant.
        if let (BinOp::Shl | BinOp::Shr, Expr::Imm(b, _)) = (op, &r)
            && !(0..32).contains(b)
        {
            let sym = if op == BinOp::Shl { "<<" } else { ">>" };
            return Err(self.fail(
                e,
                format!(
                    "`{sym} {b}` shifts a 32-bit scalar by {b}: a shift by 32 or more gives 0 \
                     (the amount must be 0…31)"
                ),
            ));
        }
        // Adding or subtracting a constant 0 is the other operand: a tile function's scalar
        // parameter bound to `0` (a counter's start) adds no instruction.
        match (op, &l, &r) {
            (BinOp::Add, Expr::Imm(0, _), _) => return Ok(r),
            (BinOp::Add | BinOp::Sub, _, Expr::Imm(0, _)) => return Ok(l),
            _ => {}
        }
        let (Expr::Imm(a, _), Expr::Imm(b, _)) = (&l, &r) else {
            return Ok(Expr::bin(op, l, r));
        };
        let (a, b) = (*a as u32, *b as u32);
        let v = match op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div | BinOp::Rem | BinOp::CeilDiv if b == 0 => {
                return Err(self.fail(e, "division by zero"));
            }
            BinOp::Div => a / b,
            BinOp::Rem => a % b,
            BinOp::CeilDiv => a.div_ceil(b),
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            // Amounts of 32 or more are refused above.
            BinOp::Shl => a << b,
            BinOp::Shr => a >> b,
            BinOp::Min => a.min(b),
            BinOp::Max => a.max(b),
        };
        Ok(Expr::u32(v))
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> Res<Expr> {
        match u.op {
            syn::UnOp::Not(_) => {
                let v = self.scalar(&u.expr)?;
                if self.ty(&v) == ScalarType::Pred {
                    Ok(not_p(v))
                } else {
                    // Bitwise not of a u32.
                    self.fold_bin(u, BinOp::Xor, v, Expr::u32(u32::MAX))
                }
            }
            syn::UnOp::Neg(_) => Err(self.fail(u, "negation is not supported: scalars are u32")),
            _ => Err(self.fail(u, "dereference is not supported in a tile kernel")),
        }
    }

    /// `cdiv(a, b)`, `min(a, b)`, `max(a, b)`.
    fn call(&mut self, c: &syn::ExprCall) -> Res<Expr> {
        let name = crate::args::path_ident(&c.func)
            .map(|i| i.to_string())
            .unwrap_or_default();
        let word = vocab::lookup(None, &name, &[Kind::Function]);
        let op = match word.map(|w| w.id) {
            Some(Id::Cdiv) => BinOp::CeilDiv,
            Some(Id::Min) => BinOp::Min,
            Some(Id::Max) => BinOp::Max,
            // A vote is an op with a value (`vote.sync`), bound by `let` before its use.
            _ if vocab::lookup(None, &name, &[Kind::Op])
                .is_some_and(|w| matches!(w.id, Id::WarpAny | Id::WarpAll | Id::WarpBallot)) =>
            {
                return Err(self.fail(
                    c,
                    format!(
                        "`{name}` is a warp vote; bind it first: `let v = {name}(…);`, then use `v`"
                    ),
                ));
            }
            _ if self.tile_fn_of(&c.func).is_some() => {
                return Err(self.fail(
                    c,
                    format!(
                        "`{name}` is a tile function, inlined as a statement; bind its result first: `let v = {name}(…);`"
                    ),
                ));
            }
            _ => {
                let func = &c.func;
                let shown = quote::quote!(#func).to_string().replace(' ', "");
                let scalar_fns: Vec<String> = vocab::names(Kind::Function)
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                let hint = match self.tile_fn_hint(&name, &scalar_fns) {
                    h if h.is_empty() => self.or_own_fn(super::did_you_mean(&name, &scalar_fns)),
                    h => h,
                };
                let functions = scalar_fns.join(", ");
                return Err(self.fail(
                    &c.func,
                    format!("unknown function `{shown}`; scalar functions are {functions}{hint}"),
                ));
            }
        };
        let [a, b] = c.args.iter().collect::<Vec<_>>()[..] else {
            return Err(self.fail(
                c,
                format!("`{name}` takes 2 arguments, found {}", c.args.len()),
            ));
        };
        let (l, r) = (self.int(a), self.int(b));
        self.fold_bin(c, op, l?, r?)
    }
}

/// `l cmp r`, folded when both are immediates.
fn fold_cmp(op: CmpOp, l: Expr, r: Expr) -> Expr {
    let (Expr::Imm(a, _), Expr::Imm(b, _)) = (&l, &r) else {
        return Expr::cmp(op, l, r);
    };
    let v = match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    };
    Expr::Imm(i64::from(v), ScalarType::Pred)
}

/// Logical and, folded.
fn and_p(l: Expr, r: Expr) -> Expr {
    match (&l, &r) {
        (Expr::Imm(0, _), _) | (_, Expr::Imm(0, _)) => Expr::Imm(0, ScalarType::Pred),
        (Expr::Imm(_, _), _) => r,
        (_, Expr::Imm(_, _)) => l,
        _ => Expr::AndP(Box::new(l), Box::new(r)),
    }
}

/// Logical not, folded (and `!!a` = `a`).
fn not_p(v: Expr) -> Expr {
    match v {
        Expr::Imm(x, t) => Expr::Imm(i64::from(x == 0), t),
        Expr::Not(inner) => *inner,
        other => Expr::Not(Box::new(other)),
    }
}
