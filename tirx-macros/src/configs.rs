//! `configs(...)`: a kernel's configs, written one by one or generated as products.
//!
//! Grammar (inside `configs(…)`, comma-separated, in any mix):
//! - `name = (C = v, …)` — one config, written by hand;
//! - `product(axis(opt = (C = v, …), …), …, with = (C = v, …))` — every combination of one
//!   option per axis. A member's entries are its options' entries in axis order, then
//!   `with`'s; its name joins the names of its options other than `default` with `_` in axis
//!   order (`default` when every option is `default`), so names are generated, and adding an
//!   option to an axis renames nothing. A member whose body fails a `static_assert` is
//!   pruned (dropped, with the reason kept for the listing) instead of failing the build; a
//!   product must keep at least one member.
//!
//! An entry's value is an integer constant expression over literals, earlier integer entries
//! and `size_of(T)` of an earlier element-type entry (`EPI_N = 128 / size_of(TD)`); an element
//! type (`TA = f16`, or an earlier element-type entry); or an operand majorness (`MB = mn`,
//! `k`, or an earlier majorness entry). A name is the same kind in every config.

use crate::args::{eval_const_with, path_ident, tuple_elems};
use crate::error::{ErrorSink, SpanRange, span_range};
use syn::Expr;
use tirx_ir::Major;
use tirx_ir::abi::{ConfigValue, ElemType};

/// One config: a name and its entries in declaration order.
#[derive(Clone, Debug)]
pub struct ConfigDef {
    /// Name (`default`, `f16_n128`, …).
    pub name: String,
    /// Entries in declaration order. Element types and majorness are resolved by the front
    /// end (tensor parameters, `smem::<TA>`, `major = MB`), so the IR only sees integers.
    pub entries: Vec<(String, ConfigValue)>,
    /// The `product` token that generated it; `None` for a config written by hand. Only a
    /// generated config is pruned by a failing `static_assert`.
    pub product: Option<SpanRange>,
}

/// What a config symbol is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymKind {
    /// An integer constant (`BM = 128`).
    Int,
    /// An element type (`TA = f16`).
    Type,
    /// An operand majorness (`MB = mn`).
    Major,
}

impl SymKind {
    /// What the kind is, in words.
    pub fn describe(self) -> &'static str {
        match self {
            SymKind::Int => "an integer",
            SymKind::Type => "an element type",
            SymKind::Major => "a majorness",
        }
    }
}

impl ConfigDef {
    /// The implicit config of a kernel without `configs(...)`.
    pub fn default_config() -> ConfigDef {
        ConfigDef {
            name: "default".into(),
            entries: Vec::new(),
            product: None,
        }
    }

    /// The entry `name`.
    pub fn value(&self, name: &str) -> Option<ConfigValue> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// The integer constants, in declaration order (what the IR's kernel carries).
    pub fn consts(&self) -> Vec<(String, i64)> {
        let ints = self.entries.iter().filter_map(|(n, v)| match v {
            ConfigValue::Int(i) => Some((n.clone(), *i)),
            _ => None,
        });
        ints.collect()
    }

    /// The integer constant `name`.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.value(name)? {
            ConfigValue::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The element-type entry `name`.
    pub fn elem_type(&self, name: &str) -> Option<ElemType> {
        match self.value(name)? {
            ConfigValue::Elem(e) => Some(e),
            _ => None,
        }
    }

    /// The majorness entry `name`.
    pub fn major(&self, name: &str) -> Option<Major> {
        match self.value(name)? {
            ConfigValue::Major(m) => Some(m),
            _ => None,
        }
    }

    /// What kind of entry `name` is in this config.
    pub fn kind_of(&self, name: &str) -> Option<SymKind> {
        Some(match self.value(name)? {
            ConfigValue::Int(_) => SymKind::Int,
            ConfigValue::Elem(_) => SymKind::Type,
            ConfigValue::Major(_) => SymKind::Major,
        })
    }
}

/// `configs(…)`'s items → the configs, generated ones included. Every problem is reported at
/// its token; a bad item is left out.
pub fn parse_configs(items: &[&Expr], key: SpanRange, sink: &mut ErrorSink) -> Vec<ConfigDef> {
    let mut out: Vec<ConfigDef> = Vec::new();
    for item in items {
        match item {
            Expr::Assign(assign) => {
                let Some(name) = path_ident(&assign.left) else {
                    sink.push(
                        span_range(&assign.left),
                        "a config name must be an identifier",
                    );
                    continue;
                };
                let name = syn::ext::IdentExt::unraw(name).to_string();
                let entries = tuple_elems(&assign.right);
                let config = build(name, &entries, None, &out, sink);
                add(&mut out, config, span_range(&assign.left), sink);
            }
            Expr::Call(c) if path_ident(&c.func).is_some_and(|i| i == "product") => {
                for config in product(c, &out, sink) {
                    add(&mut out, config, span_range(&c.func), sink);
                }
            }
            _ => sink.push(
                span_range(item),
                "expected `name = (CONST = value, …)` or `product(axis(option = (…), …), …)`",
            ),
        }
    }
    if out.is_empty() {
        sink.push(key, "`configs` needs at least one config");
    }
    out
}

/// Adds `config` unless its name is taken.
fn add(out: &mut Vec<ConfigDef>, config: ConfigDef, at: SpanRange, sink: &mut ErrorSink) {
    if out.iter().any(|c| c.name == config.name) {
        let how = if config.product.is_some() {
            "generated by this product, but a config of that name already exists"
        } else {
            "defined twice"
        };
        sink.push(at, format!("config `{}` {how}", config.name));
        return;
    }
    out.push(config);
}

/// One option of a product axis: its name and its entries.
struct Axis<'e> {
    options: Vec<(String, Vec<&'e Expr>)>,
}

/// `product(axis(…), …, with = (…))` → its members, in order (first axis outermost).
fn product(c: &syn::ExprCall, earlier: &[ConfigDef], sink: &mut ErrorSink) -> Vec<ConfigDef> {
    let usage = "expected `axis(option = (CONST = value, …), …)` or `with = (CONST = value, …)` in a product";
    let mut axes: Vec<Axis> = Vec::new();
    let mut with: Vec<&Expr> = Vec::new();
    for arg in &c.args {
        match arg {
            Expr::Assign(a) if path_ident(&a.left).is_some_and(|i| i == "with") => {
                with.extend(tuple_elems(&a.right));
            }
            Expr::Call(axis) if path_ident(&axis.func).is_some() => {
                if let Some(axis) = axis_options(axis, sink) {
                    axes.push(axis);
                }
            }
            _ => sink.push(span_range(arg), usage),
        }
    }
    if axes.is_empty() {
        sink.push(span_range(c), "a product needs at least one axis");
        return Vec::new();
    }
    let mut members = vec![(Vec::<&str>::new(), Vec::<&Expr>::new())];
    for axis in &axes {
        let mut next = Vec::new();
        for (names, entries) in &members {
            for (option, opt_entries) in &axis.options {
                let mut names = names.clone();
                if option != "default" {
                    names.push(option.as_str());
                }
                let mut entries = entries.clone();
                entries.extend(opt_entries.iter().copied());
                next.push((names, entries));
            }
        }
        members = next;
    }
    let at = span_range(&c.func);
    let mut out: Vec<ConfigDef> = Vec::new();
    for (names, mut entries) in members {
        entries.extend(with.iter().copied());
        let name = if names.is_empty() {
            "default".to_string()
        } else {
            names.join("_")
        };
        let seen: Vec<ConfigDef> = earlier.iter().chain(&out).cloned().collect();
        out.push(build(name, &entries, Some(at), &seen, sink));
    }
    out
}

/// `name(opt = (…), …)` → the axis, or `None` after reporting why not.
fn axis_options<'e>(axis: &'e syn::ExprCall, sink: &mut ErrorSink) -> Option<Axis<'e>> {
    let mut options: Vec<(String, Vec<&Expr>)> = Vec::new();
    for opt in &axis.args {
        let Expr::Assign(a) = opt else {
            sink.push(
                span_range(opt),
                "expected `option = (CONST = value, …)` in a product axis",
            );
            continue;
        };
        let Some(name) = path_ident(&a.left) else {
            sink.push(
                span_range(&a.left),
                "an option's name must be an identifier",
            );
            continue;
        };
        let name = syn::ext::IdentExt::unraw(name).to_string();
        if options.iter().any(|(n, _)| *n == name) {
            sink.push(
                span_range(&a.left),
                format!("option `{name}` defined twice in this axis"),
            );
            continue;
        }
        options.push((name, tuple_elems(&a.right)));
    }
    if options.is_empty() {
        sink.push(span_range(axis), "a product axis needs at least one option");
        return None;
    }
    Some(Axis { options })
}

/// A config named `name` from `entries` (`C = v` expressions, in order). `earlier` are the
/// configs before it: a name must be the same kind in all of them.
fn build(
    name: String,
    entries: &[&Expr],
    product: Option<SpanRange>,
    earlier: &[ConfigDef],
    sink: &mut ErrorSink,
) -> ConfigDef {
    let mut config = ConfigDef {
        name,
        entries: Vec::new(),
        product,
    };
    for item in entries {
        let Expr::Assign(assign) = item else {
            sink.push(
                span_range(*item),
                "expected `CONST = value` in a config, e.g. `BM = 128`, `TA = f16` or `MB = mn`",
            );
            continue;
        };
        let Some(ident) = path_ident(&assign.left) else {
            sink.push(
                span_range(&assign.left),
                "a config constant's name must be an identifier",
            );
            continue;
        };
        let key = syn::ext::IdentExt::unraw(ident).to_string();
        if config.kind_of(&key).is_some() {
            sink.push(
                span_range(&assign.left),
                format!("constant `{key}` defined twice in this config"),
            );
            continue;
        }
        let value = entry_value(&key, &assign.right, &config, sink);
        let kind = value_kind(value);
        if let Some(other) = earlier
            .iter()
            .find(|c| c.kind_of(&key).is_some_and(|k| k != kind))
        {
            let was = other.kind_of(&key).map_or("", SymKind::describe);
            sink.push(
                span_range(&assign.right),
                format!(
                    "`{key}` is {was} in config `{}` but {} here; a config symbol is the same kind in every config",
                    other.name,
                    kind.describe()
                ),
            );
        }
        config.entries.push((key, value));
    }
    config
}

fn value_kind(v: ConfigValue) -> SymKind {
    match v {
        ConfigValue::Int(_) => SymKind::Int,
        ConfigValue::Elem(_) => SymKind::Type,
        ConfigValue::Major(_) => SymKind::Major,
    }
}

/// The value of entry `key = e` in `config` (whose earlier entries it may use). A bad value is
/// reported and replaced by the integer 1, which keeps later uses from reporting "unknown
/// name"; nothing is compiled while an error is pending.
fn entry_value(key: &str, e: &Expr, config: &ConfigDef, sink: &mut ErrorSink) -> ConfigValue {
    if let Some(id) = path_ident(e) {
        let id = id.to_string();
        match config.value(&id) {
            Some(v @ (ConfigValue::Elem(_) | ConfigValue::Major(_))) => return v,
            Some(ConfigValue::Int(_)) => {}
            None => {
                if let Some(elem) = ElemType::from_name(&id) {
                    return ConfigValue::Elem(elem);
                }
                if let Some(major) = Major::from_name(&id) {
                    return ConfigValue::Major(major);
                }
            }
        }
    }
    let ints = |s: &str| config.int(s);
    let elems = |s: &str| config.elem_type(s);
    match eval_const_with(e, &ints, &elems) {
        Ok(v) => ConfigValue::Int(v),
        Err((range, why)) => {
            sink.push(range, bad_value(key, e, why));
            ConfigValue::Int(1)
        }
    }
}

/// The message for a value that is none of the kinds.
fn bad_value(key: &str, e: &Expr, why: String) -> String {
    let why = match path_ident(e) {
        // A lowercase name reads as a type or layout name (`f8`), not a constant (`BQ`).
        Some(id) if id.to_string().starts_with(|c: char| c.is_ascii_lowercase()) => format!(
            "{why}; an element-type entry takes bf16, f16, f32 or an earlier element-type \
             entry, a majorness entry `k` or `mn`"
        ),
        _ => why,
    };
    format!("bad value for config constant `{key}`: {why}")
}

#[cfg(test)]
mod tests;
