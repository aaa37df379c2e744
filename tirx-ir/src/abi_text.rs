//! The text form of a kernel [`Signature`]: `Display` prints it, [`Signature::parse`] reads it
//! back. The runtime may use it on its own; the kernel printer and parser embed it.
//!
//! ```text
//! signature gemm_default_sm_90a
//!   target sm_90a
//!   threads 128
//!   cluster (1, 1, 1)
//!   grid (cdiv(N, 64), cdiv(M, 64), 1)
//!   smem 33792
//!   tmem 0
//!   tensor a: bf16[M, K]
//!   scalar alpha
//!   scalar n: i32
//!   param tensormap a box [64, 64] swizzle B128
//!   param ptr a
//!   param stride a 0
//!   param dim M
//!   param scalar alpha
//!   check eq(rem(K, 64), 0) "K % 64 == 0"
//! ```
//!
//! Invariants: one item per line; the header lines come in the order above, each once; `tensor`,
//! `scalar`, `param` and `check` lines (a `static_assert` over shape symbols: a comparison
//! `eq`/`ne`/`lt`/`le`/`gt`/`ge` of two expressions and the user's text) follow in declaration order (a tensor map's `box` is innermost first, as
//! the TMA encoder takes it). Names that are not plain identifiers print quoted, so every
//! `Signature` value round-trips: `Signature::parse(&s.to_string()) == Ok(s)`.

use std::fmt::{self, Write};

use crate::abi::{
    AbiParam, CmpOp, ElemType, ShapeCheck, Signature, Swizzle, SymExpr, Target, TensorDecl,
};
use crate::parse::ParseError;
use crate::parse::lexer::{Cursor, Name, Tok};

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_signature(f, self, 0)
    }
}

impl Signature {
    /// Parses the text form printed by `Display` (surrounding blank lines and `//` comments
    /// allowed).
    pub fn parse(text: &str) -> Result<Signature, ParseError> {
        let mut c = Cursor::new(text)?;
        c.skip_newlines();
        let sig = parse_signature(&mut c)?;
        c.skip_newlines();
        match c.peek() {
            Tok::Eof => Ok(sig),
            _ => Err(c.expected("end of input after the signature")),
        }
    }
}

impl std::str::FromStr for Signature {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Signature, ParseError> {
        Signature::parse(s)
    }
}

/// Writes `sig` with its header line indented by `indent` spaces and its items by `indent + 2`;
/// every line ends with a newline.
pub(crate) fn write_signature(f: &mut dyn Write, sig: &Signature, indent: usize) -> fmt::Result {
    let pad = " ".repeat(indent + 2);
    writeln!(f, "{:indent$}signature {}", "", Name(&sig.entry))?;
    writeln!(f, "{pad}target {}", sig.target.name())?;
    writeln!(f, "{pad}threads {}", sig.threads)?;
    let [x, y, z] = sig.cluster;
    writeln!(f, "{pad}cluster ({x}, {y}, {z})")?;
    let [gx, gy, gz] = &sig.grid;
    writeln!(f, "{pad}grid ({}, {}, {})", Sym(gx), Sym(gy), Sym(gz))?;
    writeln!(f, "{pad}smem {}", sig.smem_bytes)?;
    writeln!(f, "{pad}tmem {}", sig.tmem_cols)?;
    for t in &sig.tensors {
        write!(f, "{pad}tensor {}: {}[", Name(&t.name), t.elem.name())?;
        for (i, s) in t.shape.iter().enumerate() {
            write!(f, "{}{}", if i > 0 { ", " } else { "" }, Name(s))?;
        }
        writeln!(f, "]")?;
    }
    for (i, name) in sig.scalars.iter().enumerate() {
        match sig.scalar_types.get(i) {
            Some(e) if *e != ElemType::F32 => {
                writeln!(f, "{pad}scalar {}: {}", Name(name), e.name())?
            }
            _ => writeln!(f, "{pad}scalar {}", Name(name))?,
        }
    }
    for p in &sig.params {
        match p {
            AbiParam::TensorMap {
                tensor,
                box_dims,
                swizzle,
            } => {
                write!(f, "{pad}param tensormap {} box [", Name(tensor))?;
                for (i, d) in box_dims.iter().enumerate() {
                    write!(f, "{}{d}", if i > 0 { ", " } else { "" })?;
                }
                writeln!(f, "] swizzle {}", swizzle.name())?;
            }
            AbiParam::Pointer { tensor } => writeln!(f, "{pad}param ptr {}", Name(tensor))?,
            AbiParam::Stride { tensor, dim } => {
                writeln!(f, "{pad}param stride {} {dim}", Name(tensor))?
            }
            AbiParam::Dim { symbol } => writeln!(f, "{pad}param dim {}", Name(symbol))?,
            AbiParam::Scalar { name } => writeln!(f, "{pad}param scalar {}", Name(name))?,
        }
    }
    for k in &sig.checks {
        writeln!(
            f,
            "{pad}check {}({}, {}) {}",
            k.op.name(),
            Sym(&k.lhs),
            Sym(&k.rhs),
            crate::parse::lexer::Quoted(&k.text)
        )?;
    }
    Ok(())
}

/// A grid expression: `abi::SymExpr`'s own spelling (`cdiv(a, b)`, `div(a, b)`, `mul(a, b)`,
/// `sms()`), with symbols
/// that are not plain identifiers quoted.
struct Sym<'a>(&'a SymExpr);

impl fmt::Display for Sym<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            SymExpr::Const(c) => write!(f, "{c}"),
            SymExpr::Sym(s) => write!(f, "{}", Name(s)),
            SymExpr::Sms => write!(f, "sms()"),
            SymExpr::CeilDiv(a, b) => write!(f, "cdiv({}, {})", Sym(a), Sym(b)),
            SymExpr::Div(a, b) => write!(f, "div({}, {})", Sym(a), Sym(b)),
            SymExpr::Mul(a, b) => write!(f, "mul({}, {})", Sym(a), Sym(b)),
            SymExpr::Add(a, b) => write!(f, "add({}, {})", Sym(a), Sym(b)),
            SymExpr::Sub(a, b) => write!(f, "sub({}, {})", Sym(a), Sym(b)),
            SymExpr::Rem(a, b) => write!(f, "rem({}, {})", Sym(a), Sym(b)),
        }
    }
}

/// The words that start a signature item line.
const ITEMS: [&str; 10] = [
    "target", "threads", "cluster", "grid", "smem", "tmem", "tensor", "scalar", "param", "check",
];

/// Parses a signature starting at its `signature` line; stops before the first line that does
/// not start with a signature item word.
pub(crate) fn parse_signature(c: &mut Cursor) -> Result<Signature, ParseError> {
    c.expect_kw("signature", "to start a signature")?;
    let entry = c.expect_name("the entry name after `signature`")?;
    c.expect_eol("after the signature's entry name")?;
    c.skip_newlines();
    c.expect_kw("target", "(the signature's first item)")?;
    let at = c.pos();
    let name = c.expect_ident("a target name")?;
    let target = Target::from_name(&name).map_err(|m| {
        c.reset(at);
        c.error(m)
    })?;
    end_line(c, "target")?;
    let threads = number_line(c, "threads", "target")?;
    c.expect_kw("cluster", "after `threads`")?;
    let cluster = triple(c, "cluster", |c| c.expect_u32("a cluster dimension"))?;
    end_line(c, "cluster")?;
    c.expect_kw("grid", "after `cluster`")?;
    let grid = triple(c, "grid", parse_sym)?;
    end_line(c, "grid")?;
    let smem_bytes = number_line(c, "smem", "grid")?;
    let tmem_cols = number_line(c, "tmem", "smem")?;
    let (mut tensors, mut scalars, mut params) = (Vec::new(), Vec::new(), Vec::new());
    let mut scalar_types = Vec::new();
    let mut checks = Vec::new();
    loop {
        if c.eat_kw("tensor") {
            tensors.push(parse_tensor(c)?);
            end_line(c, "tensor")?;
        } else if c.eat_kw("scalar") {
            scalars.push(c.expect_name("a scalar argument's name after `scalar`")?);
            scalar_types.push(if c.eat_punct(":") {
                parse_elem(c)?
            } else {
                ElemType::F32
            });
            end_line(c, "scalar")?;
        } else if c.eat_kw("param") {
            params.push(parse_param(c)?);
            end_line(c, "param")?;
        } else if c.eat_kw("check") {
            checks.push(parse_check(c)?);
            end_line(c, "check")?;
        } else if let Tok::Ident(w) = c.peek()
            && ITEMS.contains(&w.as_str())
        {
            return Err(c.error(format!(
                "`{w}` may appear only once, before the tensors and params"
            )));
        } else {
            break;
        }
    }
    Ok(Signature {
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
    })
}

/// `op(lhs, rhs) "text"` after `check`.
fn parse_check(c: &mut Cursor) -> Result<ShapeCheck, ParseError> {
    let at = c.pos();
    let name = c.expect_ident("a comparison (`eq`, `ne`, `lt`, `le`, `gt` or `ge`)")?;
    let Some(op) = CmpOp::ALL.into_iter().find(|o| o.name() == name) else {
        c.reset(at);
        return Err(c.expected("a comparison (`eq`, `ne`, `lt`, `le`, `gt` or `ge`)"));
    };
    c.expect_punct("(", "after the comparison")?;
    let lhs = parse_sym(c)?;
    c.expect_punct(",", "between the compared expressions")?;
    let rhs = parse_sym(c)?;
    c.expect_punct(")", "after the compared expressions")?;
    let text = c.expect_str("the check's text")?;
    Ok(ShapeCheck { text, lhs, op, rhs })
}

/// A `kw <u32>` line, which must follow the `prev` item.
fn number_line(c: &mut Cursor, kw: &str, prev: &str) -> Result<u32, ParseError> {
    c.expect_kw(kw, &format!("after `{prev}`"))?;
    let v = c.expect_u32(&format!("a number after `{kw}`"))?;
    end_line(c, kw)?;
    Ok(v)
}

fn end_line(c: &mut Cursor, item: &str) -> Result<(), ParseError> {
    c.expect_eol(&format!("after the `{item}` item"))?;
    c.skip_newlines();
    Ok(())
}

/// `(a, b, c)`.
fn triple<T>(
    c: &mut Cursor,
    what: &str,
    mut item: impl FnMut(&mut Cursor) -> Result<T, ParseError>,
) -> Result<[T; 3], ParseError> {
    c.expect_punct("(", &format!("after `{what}`"))?;
    let a = item(c)?;
    c.expect_punct(",", &format!("between {what} dimensions"))?;
    let b = item(c)?;
    c.expect_punct(",", &format!("between {what} dimensions"))?;
    let d = item(c)?;
    c.expect_punct(")", &format!("after the third {what} dimension"))?;
    Ok([a, b, d])
}

/// A grid expression.
fn parse_sym(c: &mut Cursor) -> Result<SymExpr, ParseError> {
    match c.peek().clone() {
        Tok::Int(v) => {
            c.bump();
            Ok(SymExpr::Const(v))
        }
        Tok::Ident(f) if f == "sms" && matches!(c.peek_at(1), Tok::Punct("(")) => {
            c.bump();
            c.bump();
            c.expect_punct(")", "after `sms(`")?;
            Ok(SymExpr::Sms)
        }
        Tok::Ident(f)
            if matches!(f.as_str(), "cdiv" | "div" | "mul" | "add" | "sub" | "rem")
                && matches!(c.peek_at(1), Tok::Punct("(")) =>
        {
            c.bump();
            c.bump();
            let a = parse_sym(c)?;
            c.expect_punct(",", &format!("between the arguments of `{f}`"))?;
            let b = parse_sym(c)?;
            c.expect_punct(")", &format!("after the arguments of `{f}`"))?;
            let (a, b) = (Box::new(a), Box::new(b));
            Ok(match f.as_str() {
                "cdiv" => SymExpr::CeilDiv(a, b),
                "div" => SymExpr::Div(a, b),
                "add" => SymExpr::Add(a, b),
                "sub" => SymExpr::Sub(a, b),
                "rem" => SymExpr::Rem(a, b),
                _ => SymExpr::Mul(a, b),
            })
        }
        Tok::Ident(s) | Tok::Str(s) => {
            c.bump();
            Ok(SymExpr::Sym(s))
        }
        _ => Err(c.expected(
            "a grid expression (a number, a shape symbol, `sms()`, or `cdiv`, `div`, `mul`, `add`, `sub`, `rem` of two)",
        )),
    }
}

/// `name: elem[S0, S1, …]` after `tensor`.
fn parse_tensor(c: &mut Cursor) -> Result<TensorDecl, ParseError> {
    let name = c.expect_name("a tensor name after `tensor`")?;
    c.expect_punct(":", "after the tensor name")?;
    let elem = parse_elem(c)?;
    c.expect_punct("[", "before the tensor's shape")?;
    let mut shape = Vec::new();
    while !c.eat_punct("]") {
        if !shape.is_empty() {
            c.expect_punct(",", "between shape symbols")?;
        }
        shape.push(c.expect_name("a shape symbol")?);
    }
    Ok(TensorDecl { name, elem, shape })
}

/// An element type (`bf16`, `f16`, `f32`).
pub(crate) fn parse_elem(c: &mut Cursor) -> Result<ElemType, ParseError> {
    if let Tok::Ident(s) = c.peek()
        && let Some(e) = ElemType::from_name(s)
    {
        c.bump();
        return Ok(e);
    }
    Err(c.expected("an element type (`bf16`, `f16` or `f32`)"))
}

/// A swizzle mode (`none`, `B32`, `B64`, `B128`).
pub(crate) fn parse_swizzle(c: &mut Cursor) -> Result<Swizzle, ParseError> {
    if let Tok::Ident(s) = c.peek()
        && let Some(sw) = Swizzle::from_name(s)
    {
        c.bump();
        return Ok(sw);
    }
    Err(c.expected("a swizzle (`none`, `B32`, `B64` or `B128`)"))
}

/// The rest of a `param` line.
fn parse_param(c: &mut Cursor) -> Result<AbiParam, ParseError> {
    let at = c.pos();
    let kind =
        c.expect_ident("a parameter kind (`tensormap`, `ptr`, `stride`, `dim` or `scalar`)")?;
    Ok(match kind.as_str() {
        "tensormap" => {
            let tensor = c.expect_name("a tensor name after `tensormap`")?;
            c.expect_kw("box", "after the tensor map's tensor")?;
            c.expect_punct("[", "after `box`")?;
            let mut box_dims = Vec::new();
            while !c.eat_punct("]") {
                if !box_dims.is_empty() {
                    c.expect_punct(",", "between box dimensions")?;
                }
                box_dims.push(c.expect_u32("a box dimension")?);
            }
            c.expect_kw("swizzle", "after the box")?;
            AbiParam::TensorMap {
                tensor,
                box_dims,
                swizzle: parse_swizzle(c)?,
            }
        }
        "ptr" => AbiParam::Pointer {
            tensor: c.expect_name("a tensor name after `ptr`")?,
        },
        "stride" => {
            let tensor = c.expect_name("a tensor name after `stride`")?;
            let at = c.pos();
            let dim = c.expect_u64("a dimension index after the tensor name")?;
            let dim = usize::try_from(dim).map_err(|_| {
                c.reset(at);
                c.error("dimension index too large")
            })?;
            AbiParam::Stride { tensor, dim }
        }
        "dim" => AbiParam::Dim {
            symbol: c.expect_name("a shape symbol after `dim`")?,
        },
        "scalar" => AbiParam::Scalar {
            name: c.expect_name("a scalar argument's name after `scalar`")?,
        },
        _ => {
            c.reset(at);
            return Err(
                c.expected("a parameter kind (`tensormap`, `ptr`, `stride`, `dim` or `scalar`)")
            );
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Signature {
        Signature {
            entry: "tma_copy_default_sm_90a".into(),
            target: Target::Sm90a,
            tensors: vec![
                TensorDecl {
                    name: "src".into(),
                    elem: ElemType::Bf16,
                    shape: vec!["M".into(), "N".into()],
                },
                TensorDecl {
                    name: "odd name".into(),
                    elem: ElemType::F32,
                    shape: vec![],
                },
            ],
            scalars: vec!["alpha".into(), "n".into()],
            scalar_types: vec![ElemType::F32, ElemType::I32],
            params: vec![
                AbiParam::TensorMap {
                    tensor: "src".into(),
                    box_dims: vec![64, 64],
                    swizzle: Swizzle::B128,
                },
                AbiParam::Pointer {
                    tensor: "odd name".into(),
                },
                AbiParam::Stride {
                    tensor: "src".into(),
                    dim: 0,
                },
                AbiParam::Dim { symbol: "M".into() },
                AbiParam::Scalar {
                    name: "alpha".into(),
                },
            ],
            threads: 128,
            cluster: [2, 1, 1],
            grid: [
                SymExpr::CeilDiv(
                    Box::new(SymExpr::Sym("N".into())),
                    Box::new(SymExpr::Const(64)),
                ),
                SymExpr::Mul(
                    Box::new(SymExpr::Sym("cdiv".into())),
                    Box::new(SymExpr::Const(2)),
                ),
                SymExpr::Mul(
                    Box::new(SymExpr::Div(
                        Box::new(SymExpr::Sms),
                        Box::new(SymExpr::Const(2)),
                    )),
                    Box::new(SymExpr::Const(2)),
                ),
            ],
            checks: vec![ShapeCheck {
                text: "M % 64 == 0".into(),
                lhs: SymExpr::Rem(
                    Box::new(SymExpr::Sub(
                        Box::new(SymExpr::Add(
                            Box::new(SymExpr::Sym("M".into())),
                            Box::new(SymExpr::Const(1)),
                        )),
                        Box::new(SymExpr::Const(1)),
                    )),
                    Box::new(SymExpr::Const(64)),
                ),
                op: CmpOp::Eq,
                rhs: SymExpr::Const(0),
            }],
            smem_bytes: 33792,
            tmem_cols: 0,
        }
    }

    #[test]
    fn prints_golden_text() {
        let expected = "\
signature tma_copy_default_sm_90a
  target sm_90a
  threads 128
  cluster (2, 1, 1)
  grid (cdiv(N, 64), mul(cdiv, 2), mul(div(sms(), 2), 2))
  smem 33792
  tmem 0
  tensor src: bf16[M, N]
  tensor \"odd name\": f32[]
  scalar alpha
  scalar n: i32
  param tensormap src box [64, 64] swizzle B128
  param ptr \"odd name\"
  param stride src 0
  param dim M
  param scalar alpha
  check eq(rem(sub(add(M, 1), 1), 64), 0) \"M % 64 == 0\"
";
        assert_eq!(sample().to_string(), expected);
    }

    #[test]
    fn round_trips() {
        let s = sample();
        let text = s.to_string();
        assert_eq!(Signature::parse(&text), Ok(s));
        assert_eq!(Signature::parse(&text).unwrap().to_string(), text);
    }

    #[test]
    fn reports_the_failing_line() {
        let text = sample()
            .to_string()
            .replace("cluster (2, 1, 1)", "cluster (2, 1)");
        let err = Signature::parse(&text).unwrap_err();
        assert_eq!((err.line, err.col), (4, 16));
        assert_eq!(
            err.to_string(),
            "line 4, col 16: expected `,` between cluster dimensions, found `)`"
        );
        let err = Signature::parse("signature k\n  target sm_120a\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("consumer Blackwell"), "{err}");
    }
}
