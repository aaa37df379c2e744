//! Element types as config entries: `TA = f16` in a config, `Tensor<TA>` / `smem::<TA>` in the
//! kernel, a generic launcher, and the errors at the user's token.

use super::*;
use tirx_ir::abi::ElemType;

/// A copy kernel whose element type is a config entry.
const ATTR: &str = "target = sm_90a, threads = 128, grid = (cdiv(N, BN), cdiv(M, BM)), \
                    configs(default = (BM = 64, BN = 64, T = bf16), half = (BM = 64, BN = 64, T = f16), \
                    wide = (BM = 64, BN = 32, T = f32))";
const COPY: &str = r#"
pub fn copy_t(#[shape(M, N)] src: Tensor<T>, #[shape(M, N)] dst: Tensor<T>) {
    let tile = smem::<T>([BM, BN], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(tile, src.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
    #[scope(thread = 0)]
    {
        tma::store(dst.tile(cta.y, cta.x), tile);
        tma::commit_group();
        tma::wait_group(0);
    }
}
"#;

#[test]
fn each_config_resolves_its_element_types() {
    let (def, mut sink) = def(ATTR, COPY);
    let all = expand::lower_configs(&def, &TileFns::default(), &mut sink).ok;
    assert!(sink.is_empty());
    let elems: Vec<(String, ElemType, ElemType)> = all
        .iter()
        .map(|(c, low)| {
            let buf = low.kernel.buffers.iter().next().expect("a buffer").1;
            (c.name.clone(), low.kernel.sig.tensors[1].elem, buf.elem)
        })
        .collect();
    assert_eq!(
        elems,
        [
            ("default".into(), ElemType::Bf16, ElemType::Bf16),
            ("half".into(), ElemType::F16, ElemType::F16),
            ("wide".into(), ElemType::F32, ElemType::F32),
        ]
    );
    // Type entries stay out of the integer constants the IR prints.
    assert!(all[0].1.kernel.consts.iter().all(|(n, _)| n != "T"));
}

#[test]
fn a_type_entry_may_name_an_earlier_one() {
    let attr = ATTR.replace("T = f16)", "U = f16, T = U)");
    let (def, mut sink) = def(&attr, COPY);
    let all = expand::lower_configs(&def, &TileFns::default(), &mut sink).ok;
    assert!(sink.is_empty());
    assert_eq!(all[1].1.kernel.sig.tensors[0].elem, ElemType::F16);
}

#[test]
fn the_launcher_is_generic_over_each_symbol_once() {
    let item: TokenStream = COPY.parse().unwrap();
    let out = expand::tile_kernel(ATTR.parse().unwrap(), item);
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    for needle in [
        "pub fn launch < T : :: tirx :: Element > (",
        "src : & :: tirx :: Tensor < T >",
        "dst : & mut :: tirx :: Tensor < T >",
        "`default`: T = bf16; `half`: T = f16; `wide`: T = f32",
        "elem : :: tirx :: abi :: ElemType :: F16",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in {text}");
    }
    syn::parse2::<syn::File>(out).expect("valid Rust");
}

#[test]
fn two_symbols_give_two_type_parameters() {
    let attr =
        "target = sm_90a, threads = 128, grid = (1), configs(default = (TA = bf16, TD = f32))";
    let item = "fn k(#[shape(M, N)] a: Tensor<TA>, #[shape(M, N)] b: Tensor<TA>, #[shape(M, N)] d: Tensor<TD>, #[shape(M, N)] e: Tensor<bf16>) {}";
    let out = expand::tile_kernel(attr.parse().unwrap(), item.parse().unwrap());
    let text = out.to_string();
    assert!(
        text.contains("pub fn launch < TA : :: tirx :: Element , TD : :: tirx :: Element > ("),
        "{text}"
    );
    assert!(
        text.contains("e : & :: tirx :: Tensor < :: tirx :: bf16 >"),
        "{text}"
    );
}

#[test]
fn a_literal_typed_kernel_keeps_a_plain_launcher() {
    let item: TokenStream = super::lower::COPY.parse().unwrap();
    let text = expand::tile_kernel(STD_ATTR.parse().unwrap(), item).to_string();
    assert!(text.contains("pub fn launch ("), "{text}");
}

#[test]
fn a_symbol_missing_from_a_config_is_an_error_at_the_parameter() {
    let attr = ATTR.replace(", T = f32)", ")");
    assert_eq!(
        errors(&attr, COPY),
        [
            // At the parameters (identical messages are reported once)…
            "`T` is not defined there: config `wide` needs `T = bf16`, `f16` or `f32`",
            // … and at the body's use.
            "`T` is not defined in config `wide`: it needs `T = bf16`, `f16` or `f32` (in config `wide`)",
        ]
    );
}

#[test]
fn a_symbol_no_config_defines_is_an_unknown_type() {
    let item = COPY.replace(
        "Tensor<T>, #[shape(M, N)] dst",
        "Tensor<Q>, #[shape(M, N)] dst",
    );
    let errs = errors(ATTR, &item);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].starts_with("unknown element type `Q`"), "{errs:#?}");
}

#[test]
fn a_symbol_is_one_kind_in_every_config() {
    let attr = ATTR.replace("BN = 32, T = f32", "BN = 32, T = 4");
    let errs = errors(&attr, COPY);
    assert!(
        errs.contains(&"`T` is an element type in config `default` but an integer here; a config symbol is the same kind in every config".to_string()),
        "{errs:#?}"
    );
    let attr = ATTR.replace("(BM = 64, BN = 64, T = bf16)", "(BM = 64, BN = 64, T = 2)");
    let errs = errors(&attr, COPY);
    assert!(
        errs.contains(&"`T` is an integer in config `default` but an element type here; a config symbol is the same kind in every config".to_string()),
        "{errs:#?}"
    );
}

#[test]
fn a_type_used_as_a_value_and_an_integer_used_as_a_type_are_errors() {
    let item = COPY.replace("let bar = mbarrier();", "let bar = mbarrier(count = T);");
    let errs = errors(ATTR, &item);
    assert!(
        errs.iter().any(|e| e.starts_with(
            "`T` is an element type in config `default` (bf16), not a value; use it as a type"
        )),
        "{errs:#?}"
    );
    let item = COPY.replace("smem::<T>", "smem::<BM>");
    let errs = errors(ATTR, &item);
    assert!(
        errs.iter().any(|e| e
            .starts_with("`BM` is an integer constant of config `default`, not an element type")),
        "{errs:#?}"
    );
    let item = COPY.replace("let bar = mbarrier();", "let T = 3; let bar = mbarrier();");
    let errs = errors(ATTR, &item);
    assert!(
        errs.iter()
            .any(|e| e == "`T` is a config element type; choose another name"),
        "{errs:#?}"
    );
}

#[test]
fn a_bad_type_value_says_what_a_type_entry_takes() {
    let attr = ATTR.replace("T = f16", "T = f8");
    let errs = errors(&attr, COPY);
    assert!(
        errs.iter().any(|e| e.contains(
            "an element-type entry takes bf16, f16, f32 or an earlier element-type entry"
        )),
        "{errs:#?}"
    );
}
