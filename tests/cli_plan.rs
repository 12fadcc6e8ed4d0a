//! `blockstar plan` as a user runs it: the defaults are those of `config/planner.yaml`, and every
//! error is printed once, on stderr, in the units the user typed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn blockstar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blockstar")).args(args).output().expect("run blockstar")
}

/// `blockstar plan` on the bundled map with `extra` arguments.
fn plan(extra: &[&str]) -> Output {
    let map = repo("config/tb3_sandbox.yaml");
    let mut args = vec!["plan", "--map", map.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(extra);
    blockstar(&args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn plan_without_params_uses_the_bundled_params_file() {
    // A request with turns: both the robot radius and the turning radius shape the trajectory.
    let request = ["--start", "-1.5,0.5,0", "--goal", "0.5,1.5", "--json"];
    let params = repo("config/planner.yaml");
    let runs = [plan(&request), plan(&[&request[..], &["--params", params.to_str().unwrap()]].concat())];
    let [a, b] = runs.map(|out| {
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
        // Only the timings may differ.
        let o = v.as_object_mut().unwrap();
        o.remove("planning_time_ms");
        o.remove("timing_ms");
        v
    });
    assert_eq!(a["status"], "SUCCESS");
    assert_eq!(a, b);
}
