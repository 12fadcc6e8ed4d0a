//! Build script: with the `ros` feature on a ROS 2 whose `librcl` needs libpython, links
//! libpython into every binary, so the node runs without a hand-set `LD_PRELOAD`.
//!
//! Why: the ROS 2 Jazzy wheels from PyPI (see `scripts/setup.sh`) ship a `librcl.so` that names
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
    if env::var_os("CARGO_FEATURE_ROS").is_none() {
        return;
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
