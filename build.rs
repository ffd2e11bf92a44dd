//! Build script: on Linux, link the `workbench` binary as a position-dependent executable.
//!
//! The catalogue's static data (tool names, descriptions, keyword lists, schemas' and runners'
//! function pointers, vtables) holds tens of thousands of pointers. In a position-independent
//! executable the dynamic loader rewrites every one of them at each start, before `main`, and each
//! page it writes becomes private memory of the process. Linked at a fixed address, those pointers
//! are final in the file: nothing to rewrite, and the pages are read from the page cache only when
//! used. Measured in docs/footprint.md (cold start and RSS after `initialize`).
//!
//! The price: the executable's own code and data are not address-randomised (shared libraries,
//! stack, heap and mmap still are). `WORKBENCH_PIE=1 cargo build --release` keeps a PIE.
//! The objects stay position-independent code; only the final link changes, so nothing else
//! (build scripts, proc-macros, tests) is affected. macOS and Windows are left as they are.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=WORKBENCH_PIE");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let pie = std::env::var_os("WORKBENCH_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    if os == "linux" && !pie {
        // rustc passes `-pie` to the C compiler driver that links; a later `-no-pie` wins.
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
