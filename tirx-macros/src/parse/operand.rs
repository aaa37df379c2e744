//! Operands: tiles (`buf`, `buf[s]`, `tensor.tile(i, j)`) and barriers (`bar`, `bar[i]`,
//! `pipe.full(s)`, `pipe.empty(s)`), with the checks that need the declarations (ranks,
//! barrier counts, memory spaces).

use super::stmt::strip_parens;
use super::{Fail, Local, Lowerer, Res};
use syn::{Expr as SExpr, Ident};
use tirx_ir::{BarRef, Buffer, Expr, Space, TileRef};

impl Lowerer<'_> {
    /// A tile operand: `buf`, `buf[i]…`, `tensor.tile(c0, c1, …)`.
    pub(crate) fn tile_ref(&mut self, e: &SExpr) -> Res<TileRef> {
        const EXPECTED: &str = "expected a tile: a buffer (`a_s`), a stage of one (`a_s[s]`) or a tensor tile (`src.tile(i, j)`)";
        match strip_parens(e) {
            SExpr::Path(_) => {
                let id = crate::args::path_ident(e).ok_or_else(|| self.fail(e, EXPECTED))?;
                match self.local(&id.to_string()) {
                    Some(Local::Buf(buf)) => Ok(TileRef::Buf {
                        buf,
                        index: Vec::new(),
                    }),
                    Some(Local::Tensor(_)) => Err(self.fail(
                        id,
                        format!(
                            "`{id}` is a global tensor; name one tile of it: `{id}.tile(i, j)`"
                        ),
                    )),
                    _ => Err(self.wrong_kind(id, "a tile", "")),
                }
            }
            SExpr::Index(_) => self.indexed_tile(e),
            SExpr::MethodCall(m) if m.method == "tile" || m.method == "at" => {
                self.tensor_tile(m, None)
            }
            SExpr::MethodCall(w) if w.method == "within" => match strip_parens(&w.receiver) {
                SExpr::MethodCall(m) if m.method == "at" => self.tensor_tile(m, Some(w)),
                other => Err(self.fail(
                    other,
                    "`.within(…)` bounds a tile at element offsets: write `x.at(…).within(…)`",
                )),
            },
            // A register-tile expression: computed into a temporary tile just before the op.
            other if self.is_tile_expr(other) => Ok(TileRef::Buf {
                buf: self.tile_operand(other)?,
                index: Vec::new(),
            }),
            // A call of no function the language or the module knows: say so, not "expected a
            // tile".
            SExpr::Call(c)
                if super::tile::callee(&c.func).is_some_and(|n| {
                    super::vocab::lookup(
                        None,
                        &n,
                        &[super::vocab::Kind::TileFn, super::vocab::Kind::Function],
                    )
                    .is_none()
                }) && self.tile_fn_of(&c.func).is_none() =>
            {
                let name = super::tile::callee(&c.func).unwrap_or_default();
                let msg = self.unknown_tile_function(&name);
                Err(self.fail(&c.func, msg))
            }
            other => Err(self.fail(other, EXPECTED)),
        }
    }

    /// `buf[i][j]…`: leading indices of a buffer.
    fn indexed_tile(&mut self, e: &SExpr) -> Res<TileRef> {
        let mut indices = Vec::new();
        let mut base = strip_parens(e);
        while let SExpr::Index(ix) = base {
            indices.push(&*ix.index);
            base = strip_parens(&ix.expr);
        }
        indices.reverse();
        let Some(id) = crate::args::path_ident(base) else {
            return Err(self.fail(base, "expected a buffer name before `[…]`"));
        };
        let buf = match self.local(&id.to_string()) {
            Some(Local::Buf(b)) => b,
            _ => {
                return Err(self.wrong_kind(id, "a buffer", "; only buffers are indexed as tiles"));
            }
        };
        let layout = &self.kernel.buffers[buf].layout;
        let rank = layout.shape.len();
        // An MN-major tile is stored `[.., chunks, K, span]` for a logical `[.., MN, K]`: only
        // the leading dimensions are the user's to index.
        if layout.major == tirx_ir::Major::MN && indices.len() + 3 > rank {
            return Err(self.fail(
                e,
                format!(
                    "`{id}` is an MN-major tile: index its {} leading dimension(s) only, not its [MN, K] tile",
                    rank - 3
                ),
            ));
        }
        if indices.len() >= rank {
            return Err(self.fail(
                e,
                format!(
                    "`{id}` has {rank} dimension(s); index at most {} leading one(s)",
                    rank - 1
                ),
            ));
        }
        let shape = layout.shape.clone();
        let mut index = Vec::new();
        let mut failed = false;
        for (d, i) in indices.into_iter().enumerate() {
            match self.int(i) {
                // A constant index (a literal or config constant) must name an entry of its
                // dimension: a staged buffer's stage `s` of `STAGES`, a tile of a tile array.
                Ok(Expr::Imm(v, _)) if v < 0 || v >= i64::from(shape[d]) => {
                    self.fail(
                        i,
                        format!(
                            "index {v} out of range: dimension {d} of `{id}` has {} entr{} (0…{})",
                            shape[d],
                            if shape[d] == 1 { "y" } else { "ies" },
                            shape[d].saturating_sub(1)
                        ),
                    );
                    failed = true;
                }
                Ok(v) => index.push(v),
                Err(_) => failed = true,
            }
        }
        if failed {
            Err(Fail)
        } else {
            Ok(TileRef::Buf { buf, index })
        }
    }

    /// `tensor.tile(c0, c1, …)`: one coordinate per dimension; `tensor.at(e0, e1, …)`: one
    /// element offset per dimension, and `within` its `.within(b0, b1, …)`, one bound each.
    fn tensor_tile(
        &mut self,
        m: &syn::ExprMethodCall,
        within: Option<&syn::ExprMethodCall>,
    ) -> Res<TileRef> {
        let method = m.method.to_string();
        let Some(id) = crate::args::path_ident(&m.receiver) else {
            return Err(self.fail(
                &m.receiver,
                format!("expected a tensor name before `.{method}(…)`"),
            ));
        };
        let Some(Local::Tensor(i)) = self.local(&id.to_string()) else {
            return Err(self.wrong_kind(
                id,
                "a global tensor",
                "; `.tile(…)` and `.at(…)` name a tile of a tensor parameter",
            ));
        };
        // Inside a tile function `id` is its parameter; the tile is of the kernel's tensor.
        let param = &self.def.params[i];
        let rank = param.shape.len();
        let dims: Vec<String> = param
            .shape
            .iter()
            .map(crate::model::ShapeDim::text)
            .collect();
        if m.args.len() != rank {
            let found = m.args.len();
            return Err(self.fail(m, format!("`{id}` has {rank} dimension(s) ({}); `{method}` takes {rank} coordinate(s), found {found}", dims.join(", "))));
        }
        if let Some(w) = within.filter(|w| w.args.len() != rank) {
            let found = w.args.len();
            return Err(self.fail(w, format!("`{id}` has {rank} dimension(s) ({}); `within` takes {rank} bound(s), found {found}", dims.join(", "))));
        }
        let coords: Vec<Res<Expr>> = m.args.iter().map(|a| self.int(a)).collect();
        let coords = coords.into_iter().collect::<Res<Vec<_>>>()?;
        let elements = if method == "at" {
            let bounds: Vec<Res<Expr>> = within
                .map(|w| w.args.iter().map(|a| self.int(a)).collect())
                .unwrap_or_default();
            Some(Box::new(tirx_ir::Bounds(
                bounds.into_iter().collect::<Res<Vec<_>>>()?,
            )))
        } else {
            None
        };
        Ok(TileRef::Global {
            tensor: self.def.params[i].ident.to_string(),
            coords,
            elements,
        })
    }

    /// A barrier operand: `bar`, `bar[i]`, `pipe.full(s)`, `pipe.empty(s)`.
    pub(crate) fn bar_ref(&mut self, e: &SExpr) -> Res<BarRef> {
        const EXPECTED: &str =
            "expected a barrier: `bar`, `bar[i]`, `pipe.full(s)` or `pipe.empty(s)`";
        let (base, index) = match strip_parens(e) {
            SExpr::Index(ix) => (&*ix.expr, Some(&*ix.index)),
            SExpr::MethodCall(m) if m.method == "full" || m.method == "empty" => {
                return self.pipe_bar(m);
            }
            other => (other, None),
        };
        let Some(id) = crate::args::path_ident(base) else {
            return Err(self.fail(e, EXPECTED));
        };
        let bar = match self.local(&id.to_string()) {
            Some(Local::Bar(b)) => b,
            Some(Local::Pipe(_)) => {
                return Err(self.fail(id, format!("`{id}` is a pipeline; name one of its barriers: `{id}.full(s)` or `{id}.empty(s)`")));
            }
            _ => return Err(self.wrong_kind(id, "a barrier", "")),
        };
        let index_syntax = index;
        let index = match index {
            Some(i) => self.int(i)?,
            None => Expr::u32(0),
        };
        let count = self.kernel.barriers[bar].count;
        if let (Expr::Imm(v, _), Some(i)) = (&index, index_syntax)
            && *v >= i64::from(count)
        {
            return Err(self.fail(
                i,
                format!("barrier index {v} out of range: `{id}` has {count} barrier(s)"),
            ));
        }
        Ok(BarRef { bar, index })
    }

    /// `pipe.full(s)` / `pipe.empty(s)`.
    fn pipe_bar(&mut self, m: &syn::ExprMethodCall) -> Res<BarRef> {
        let pipe =
            match crate::args::path_ident(&m.receiver).and_then(|id| self.local(&id.to_string())) {
                Some(Local::Pipe(p)) => p,
                Some(Local::Poison) => return Err(Fail),
                _ => {
                    return Err(self.fail(
                        &m.receiver,
                        format!(
                            "`.{}(s)` names a barrier of a pipeline; this is not a pipeline",
                            m.method
                        ),
                    ));
                }
            };
        let usage = format!("{}(stage)", m.method);
        let args = self.call_args(&m.args, m, &usage, 1..=1, &[])?;
        let index = self.int(args.pos[0])?;
        let p = &self.kernel.pipelines[pipe];
        let bar = if m.method == "full" { p.full } else { p.empty };
        Ok(BarRef { bar, index })
    }

    /// The TMEM buffer named by `e` (`tcgen05::alloc`/`dealloc`).
    pub(crate) fn tmem_buffer(&mut self, e: &SExpr, op: &str) -> Res<tirx_ir::Handle<Buffer>> {
        let hint =
            format!("`tcgen05::{op}` takes a TMEM buffer declared with `tmem::<f32>([BM, BN])`");
        let Some(id) = crate::args::path_ident(e) else {
            return Err(self.fail(e, hint));
        };
        match self.local(&id.to_string()) {
            Some(Local::Buf(b)) if self.kernel.buffers[b].space == Space::Tmem => Ok(b),
            Some(Local::Poison) => Err(Fail),
            _ => Err(self.fail(id, hint)),
        }
    }
}

impl Lowerer<'_> {
    /// What a name is, for "`x` is …, not a …" messages.
    pub(crate) fn describe(&self, name: &str) -> Option<&'static str> {
        match self.local(name) {
            Some(Local::Var { .. }) => Some("a scalar variable"),
            Some(Local::Value(_)) => Some("a scalar"),
            Some(Local::Buf(b)) => Some(match self.kernel.buffers[b].space {
                Space::Shared => "a smem buffer",
                Space::Tmem => "a tmem buffer",
                Space::Reg => "a reg buffer",
            }),
            Some(Local::Bar(_)) => Some("an mbarrier"),
            Some(Local::Pipe(_)) => Some("a pipeline"),
            Some(Local::Tensor(_)) => Some("a global tensor"),
            Some(Local::Arg(_)) => Some("an f32 argument of the kernel"),
            Some(Local::TileExpr(_)) => Some("a mask or index tile"),
            Some(Local::Poison) => None,
            None if self.kernel.const_value(name).is_some() => Some("a config constant"),
            None if self
                .def
                .params
                .iter()
                .any(|p| p.symbols().any(|s| s == name)) =>
            {
                Some("a shape symbol")
            }
            None if super::vocab::is_builtin(name) => Some("a built-in scalar"),
            None => None,
        }
    }

    /// The error for a name that is not the expected kind of thing.
    pub(crate) fn wrong_kind(&mut self, id: &Ident, expected: &str, hint: &str) -> Fail {
        let name = id.to_string();
        match self.describe(&name) {
            Some(what) => self.fail(id, format!("`{name}` is {what}, not {expected}{hint}")),
            None if matches!(self.local(&name), Some(Local::Poison)) => Fail,
            None => self.not_found(id),
        }
    }
}
