//! The catalogue's kernels as the host sees them.

use super::*;
use crate::gemm::host::GemmLaunch;
use tirx::problem;

/// `build.rs`'s discovery of the family folders, tested below on a throwaway family.
#[path = "../../build/families.rs"]
#[allow(dead_code)]
mod families;

/// Every shipped artifact declares what it solves (one kernel may solve a problem in several
/// layouts: its `nn` configs take B given K×N), and every GEMM config takes a shipped type
/// combination (the host entries and the bench build inputs from these).
#[test]
fn every_kernel_declares_its_problem_and_types() {
    for k in all() {
        let kind = |p: problem::Problem| std::mem::discriminant(&p);
        let first = k
            .problem()
            .unwrap_or_else(|| panic!("{} declares no problem", k.name));
        for a in k.artifacts {
            let problem = a
                .problem
                .unwrap_or_else(|| panic!("{}/{} declares no problem", k.name, a.config));
            assert_eq!(
                kind(problem),
                kind(first),
                "{}/{}: one kind per kernel",
                k.name,
                a.config
            );
            if let problem::Problem::Gemm(g) = problem {
                let t = GemmLaunch::of(k).types(a.config).expect("a, d tensors");
                // The FP8 GEMMs (8-bit A and B, scales in the epilogue or per K block: their own problems in
                // the GEMM family, `gemm::check::check_fp8`, `bench::fp8`) and their split-K
                // partials (`gemm::fp8_splitk`: the reduce applies the scales); every other
                // GEMM takes a shipped 16-bit combination.
                // The block-scaled GEMMs (E4M3 or packed FP4 with factor images,
                // `gemm::factors`) likewise.
                let fp8 = (t.input.is_fp8()
                    && matches!(
                        g.epilogue,
                        problem::Epilogue::ScaleTensor
                            | problem::Epilogue::ScaleRows
                            | problem::Epilogue::ScaleBlocks
                            | problem::Epilogue::ScaleBlocksMn
                            | problem::Epilogue::Partial
                    ))
                    || matches!(g.epilogue, problem::Epilogue::ScaleFactors(_));
                assert!(t.is_shipped() || fp8, "{}/{}: {t}", k.name, a.config);
                assert!(
                    a.int("BM").is_some() && a.int("BN").is_some(),
                    "{}/{}",
                    k.name,
                    a.config
                );
                // The `nn` configs, and only they, take B given K×N.
                let nn = a.config == "nn" || a.config.starts_with("nn_");
                assert_eq!(g.b == problem::BLayout::Nn, nn, "{}/{}", k.name, a.config);
            }
        }
    }
}

/// Names are unique: `tirx run NAME` and the tune cache find kernels by them.
#[test]
fn kernel_names_are_unique() {
    let names: Vec<&str> = all().iter().map(|k| k.name).collect();
    for n in &names {
        assert_eq!(names.iter().filter(|m| *m == n).count(), 1, "{n}");
    }
    assert!(find("gemm_sm90_tma_epi").is_some());
    assert!(find("no_such_kernel").is_none());
}

/// The discovery `build.rs` runs (`kernels/build/families.rs`), here on a throwaway family
/// folder: the folder is a family because it holds a `family.rs`, every file in it becomes its
/// module, and its public `#[tile_kernel]`s and (non-library) `#[tile_module]`s become the
/// catalogue's lists — a new kernel is its file, a new family its folder (plus its line in
/// `FAMILIES`), and nothing else names them.
mod discovery {
    use super::families::{KernelList, discover, lists_rs, modules_rs};

    /// A scratch `src/` with one throwaway family, a folder that is not one, and a file of
    /// the family that does not parse.
    fn scratch_src() -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("tirx-families-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let fam = root.join("scratch");
        std::fs::create_dir_all(&fam).unwrap();
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(
            fam.join("family.rs"),
            "//! The scratch family.\npub struct Scratch;\n",
        )
        .unwrap();
        std::fs::write(
            fam.join("my_kernel.rs"),
            r#"//! A throwaway kernel file: a `#[tile_kernel]` in a doc comment is no kernel.
use tirx::prelude::*;

#[tile_kernel(solves = copy, target = sm_90a, threads = 128, grid = (1, 1))]
pub fn my_kernel(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {
    copy(dst.tile(0, 0), src.tile(0, 0));
}

#[tile_module(uses(super::pieces::lib))]
pub mod kernels {
    #[tile_kernel(solves = copy, target = sm_90a, threads = 128, grid = (1, 1))]
    pub fn inner(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {}
}

#[tile_module(library)]
pub mod pieces {}

#[tile_kernel(target = sm_90a, threads = 32, grid = (1, 1))]
fn private_helper() {}
"#,
        )
        .unwrap();
        std::fs::write(fam.join("broken.rs"), "pub fn (").unwrap();
        std::fs::write(root.join("tools").join("mod.rs"), "").unwrap();
        root
    }

    #[test]
    fn a_throwaway_family_folder_is_found_with_its_kernels() {
        let src = scratch_src();
        let found = discover(&src).unwrap();
        assert_eq!(
            found.len(),
            1,
            "only the folder with a family.rs: {found:?}"
        );
        let fam = &found[0];
        assert_eq!(fam.name, "scratch");
        let modules: Vec<&str> = fam.files.iter().map(|f| f.module.as_str()).collect();
        assert_eq!(modules, ["broken", "family", "my_kernel"]);
        let kernel = &fam.files[2];
        assert_eq!(
            kernel.lists,
            [
                KernelList::Kernel("my_kernel".into()),
                KernelList::Module("kernels".into())
            ]
        );
        assert!(fam.files[0].lists.is_empty(), "a file that does not parse");

        let mods = modules_rs(&found);
        assert!(mods.contains(&format!("#[path = {:?}]", fam.path.display().to_string())));
        assert!(mods.contains(
            "pub mod scratch {\n    pub mod broken;\n    pub mod family;\n    pub mod my_kernel;\n}"
        ));
        let lists = lists_rs(&found);
        assert!(lists.contains("    &[&crate::scratch::my_kernel::my_kernel::KERNEL],\n    crate::scratch::my_kernel::kernels::KERNELS,\n];"), "{lists}");
        assert!(!lists.contains("pieces") && !lists.contains("private_helper"));
        std::fs::remove_dir_all(&src).unwrap();
    }

    /// The shipped folders as `build.rs` sees them: the four families, and every kernel the
    /// catalogue holds defined in one of their files.
    #[test]
    fn the_shipped_families_are_the_folders_found() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let found = discover(&src).unwrap();
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["attention", "copy", "gemm", "row_kernels"]);
        let mut families: Vec<&str> = super::FAMILIES.iter().map(|f| f.name()).collect();
        families.sort();
        assert_eq!(families, ["attention", "copy", "gemm", "rows"]);
        let top_level: Vec<String> = found
            .iter()
            .flat_map(|f| &f.files)
            .flat_map(|f| &f.lists)
            .filter_map(|l| match l {
                KernelList::Kernel(k) => Some(k.clone()),
                KernelList::Module(_) => None,
            })
            .collect();
        for name in ["tma_copy", "softmax_staged", "gemm_sm90"] {
            assert!(top_level.iter().any(|k| k == name), "{name}");
            assert!(super::find(name).is_some(), "{name}");
        }
        // A tile module's kernels (`attention/hopper.rs`'s `pub mod kernels`, which uses the
        // `attention_pieces` library) come through the module's list.
        let hopper = found
            .iter()
            .filter(|f| f.name == "attention")
            .flat_map(|f| &f.files)
            .find(|f| f.module == "hopper")
            .expect("attention/hopper.rs");
        assert_eq!(hopper.lists, [KernelList::Module("kernels".into())]);
        assert!(super::find("attention_sm90").is_some());
    }
}

/// An artifact's kernel by address, for every shipped artifact; an artifact outside the
/// catalogue has none.
#[test]
fn every_artifact_knows_its_kernel_by_address() {
    for k in all() {
        for a in k.artifacts {
            assert!(
                kernel_of(a).is_some_and(|owner| std::ptr::eq(owner, k)),
                "{}",
                a.config
            );
        }
    }
    let reduce = &crate::gemm::splitk::reduce::splitk_reduce::KERNEL.artifacts[0];
    assert!(kernel_of(reduce).is_none(), "not in the catalogue");
}
