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
//!
//! Second, for a release build on x86_64 Linux (where Rust links with its own LLD): the functions
//! start-up and the first request run are placed first in the code, in the order they run
//! (`build/startup-order.txt`, written by scripts/order-file.py), so the few hundred kilobytes of
//! code a session starts with lie together instead of across 18 MB of text, where every 64 KiB
//! run the kernel maps around a fault counts in RSS. Names the binary no longer has are skipped,
//! so a stale list costs only the effect. `WORKBENCH_NO_ORDER=1` leaves the order to the linker
//! (e.g. with a linker other than LLD). Measured in docs/footprint.md.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=WORKBENCH_PIE");
    println!("cargo:rerun-if-env-changed=WORKBENCH_NO_ORDER");
    println!("cargo:rerun-if-changed=build/startup-order.txt");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let pie = std::env::var_os("WORKBENCH_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    if os == "linux" && !pie {
        // rustc passes `-pie` to the C compiler driver that links; a later `-no-pie` wins.
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    let target = std::env::var("TARGET").unwrap_or_default();
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let order = std::env::var_os("WORKBENCH_NO_ORDER").is_none_or(|v| v.is_empty() || v == "0");
    if target == "x86_64-unknown-linux-gnu" && release && order {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        let file = std::path::Path::new(&dir).join("build").join("startup-order.txt");
        if file.is_file() {
            println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", file.display());
            println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
        }
    }
}
