//! Build script, with the `ros` feature:
//! 1. Tells the code which optional interface packages r2r generates bindings for (cfgs
//!    `ros_tf2_msgs`, `ros_map_msgs`, `ros_nav2_msgs`), so a ROS installation without them still
//!    builds the node, without the parts that need them (ARCHITECTURE.md, "Interfaces the wheels
//!    lack").
//! 2. On a ROS 2 whose `librcl` needs libpython, links libpython into every binary, so the node
//!    runs without a hand-set `LD_PRELOAD`.
//!
//! Why libpython: the ROS 2 Jazzy wheels from PyPI (see `scripts/setup.sh`) ship a `librcl.so` that names
//! `libtype_description_interfaces__rosidl_generator_py.so` as a dependency, a Python extension
//! library whose undefined `PyExc_*` symbols only libpython defines. A Python process has them; a
//! Rust binary does not and dies at start-up with `symbol lookup error: ... undefined symbol:
//! PyExc_RuntimeError`. Recording libpython as a needed library of our own binaries (with
//! `--no-as-needed`, since no Rust code calls into it) puts its symbols in the process's global
//! scope before librcl's dependencies are resolved. An installation from `/opt/ros` (or any
//! `librcl.so` without that dependency) gets no extra link: the detection looks at the cause, not
//! at where ROS came from.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The marker of a Python extension library among a shared object's needed libraries.
const PYTHON_EXTENSION_MARKER: &[u8] = b"__rosidl_generator_py.so";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AMENT_PREFIX_PATH");
    println!("cargo:rerun-if-env-changed=IDL_PACKAGE_FILTER");
    println!("cargo:rerun-if-env-changed=BLOCKSTAR_WITHOUT_INTERFACES");
    for (_, cfg) in OPTIONAL_INTERFACES {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    if env::var_os("CARGO_FEATURE_ROS").is_none() {
        return;
    }
    let mut missing = Vec::new();
    for (package, cfg) in OPTIONAL_INTERFACES {
        if interface_package_available(package) {
            println!("cargo:rustc-cfg={cfg}");
        } else {
            missing.push(*package);
        }
    }
    // The node logs at start-up what it was built without.
    println!("cargo:rustc-env=BLOCKSTAR_MISSING_INTERFACES={}", missing.join(","));
    if !missing.is_empty() {
        println!(
            "cargo:warning=building planner_node without {} (not installed or not in IDL_PACKAGE_FILTER): \
             see README, \"Interfaces the wheels lack\"",
            missing.join(", ")
        );
    }
    let Some(librcl) = find_librcl() else {
        // r2r's own build script reports a missing ROS installation with its own message.
        return;
    };
    println!("cargo:rerun-if-changed={}", librcl.display());
    let Ok(bytes) = fs::read(&librcl) else { return };
    if !contains(&bytes, PYTHON_EXTENSION_MARKER) {
        return;
    }
    let prefix = librcl.parent().and_then(Path::parent).expect("<prefix>/lib/librcl.so");
    match libpython_for(prefix) {
        Ok((dir, soname)) => {
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-arg=-Wl,--push-state,--no-as-needed,-l:{soname},--pop-state");
        }
        Err(reason) => {
            println!("cargo:warning={} needs libpython ({reason}); binaries will need it preloaded", librcl.display())
        }
    }
}

/// Interface packages the node uses when they are installed, and the cfg each sets.
const OPTIONAL_INTERFACES: &[(&str, &str)] =
    &[("tf2_msgs", "ros_tf2_msgs"), ("map_msgs", "ros_map_msgs"), ("nav2_msgs", "ros_nav2_msgs")];

/// Whether r2r generates bindings for `package`: it looks where r2r looks, the `rosidl_interfaces`
/// index of every `AMENT_PREFIX_PATH` prefix, and honours `IDL_PACKAGE_FILTER` (semicolon
/// separated; unset means every package).
///
/// `BLOCKSTAR_WITHOUT_INTERFACES` (comma separated) names packages to build without even when
/// they are there: the test command checks the node compiles without them, as on an installation
/// that lacks them, without regenerating r2r's bindings.
fn interface_package_available(package: &str) -> bool {
    if env::var("BLOCKSTAR_WITHOUT_INTERFACES").is_ok_and(|v| v.split(',').any(|p| p.trim() == package)) {
        return false;
    }
    if let Some(filter) = env::var_os("IDL_PACKAGE_FILTER") {
        if !filter.to_string_lossy().split(';').any(|p| p.trim() == package) {
            return false;
        }
    }
    let Some(paths) = env::var_os("AMENT_PREFIX_PATH") else { return false };
    env::split_paths(&paths).any(|prefix| {
        let index = prefix.join("share/ament_index/resource_index/rosidl_interfaces");
        // A package installed later into a prefix already on the path changes the index folder
        // (cargo scans a folder's entries). A path that does not exist would rerun every build.
        if index.is_dir() {
            println!("cargo:rerun-if-changed={}", index.display());
        }
        index.join(package).is_file()
    })
}

/// The first `lib/librcl.so` along `AMENT_PREFIX_PATH`, the one r2r links.
fn find_librcl() -> Option<PathBuf> {
    let paths = env::var_os("AMENT_PREFIX_PATH")?;
    env::split_paths(&paths).map(|p| p.join("lib").join("librcl.so")).find(|p| p.is_file())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The directory and file name of the shared libpython of the Python version the ROS prefix was
/// built for (the `lib/pythonX.Y` folder of the prefix), as that interpreter reports them.
fn libpython_for(prefix: &Path) -> Result<(PathBuf, String), String> {
    let version = fs::read_dir(prefix.join("lib"))
        .map_err(|e| format!("cannot list {}: {e}", prefix.join("lib").display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| name.strip_prefix("python").map(str::to_owned))
        .find(|v| v.split('.').count() == 2 && v.split('.').all(|p| p.parse::<u32>().is_ok()))
        .ok_or_else(|| format!("no lib/pythonX.Y in {}", prefix.display()))?;
    let python = format!("python{version}");
    let out = Command::new(&python)
        .args(["-c", "import sysconfig as s; print(s.get_config_var('LIBDIR')); print(s.get_config_var('INSTSONAME'))"])
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    match (lines.next(), lines.next()) {
        (Some(dir), Some(soname)) if out.status.success() && Path::new(dir).join(soname).is_file() => {
            Ok((PathBuf::from(dir), soname.to_owned()))
        }
        _ => Err(format!("{python} reports no shared libpython")),
    }
}
