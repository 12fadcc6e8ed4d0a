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

/// `blockstar plan` on the bundled map with `extra` arguments, under a budget no loaded machine
/// runs out of: the outcomes these tests expect must not depend on the machine's load (a loaded
/// clean-checkout run, fc82, timed out a cold 16-heading plan under the bundled 2 s). A test
/// about the budget sets its own `max_planning_time` in `extra`; the last `--set` wins.
fn plan(extra: &[&str]) -> Output {
    let map = repo("config/tb3_sandbox.yaml");
    let mut args = vec!["plan", "--map", map.to_str().expect("a UTF-8 path"), "--set", "max_planning_time=600"];
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

/// A fresh directory under the system's temporary directory for one test.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blockstar-cli-plan-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir
}

/// The run failed with exit code 1, printed nothing on stdout and exactly `want` (one line) on
/// stderr.
fn assert_one_error(out: &Output, want: &str) {
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "an error on stdout");
    assert_eq!(text(&out.stderr), format!("blockstar: {want}\n"));
}

#[test]
fn errors_are_printed_once_on_stderr_in_the_users_units() {
    let start = ["--start", "-1.5,0.5,0"];
    // The centre pillar of the bundled map; unknown space outside the walls.
    let out = plan(&[&start[..], &["--goal", "-0.075,-0.025"]].concat());
    assert_one_error(&out, "GOAL_OCCUPIED: goal (-0.075, -0.025) m is in an obstacle (occupancy 100)");
    let out = plan(&["--start", "-8,-8,0", "--goal", "0.5,1.5"]);
    assert_one_error(
        &out,
        "START_OCCUPIED: start (-8.000, -8.000) m is in unknown space (occupancy -1, allow_unknown is false); \
         obstacles reach 0.150 m into its footprint (start_overlap allows 0.050 m)",
    );
    let out = plan(&[&start[..], &["--goal", "100,1.5"]].concat());
    assert_one_error(&out, "GOAL_OUTSIDE_MAP: goal (100.000, 1.500) m is outside the map");
    // With --json the outcome is also the JSON record on stdout, which scripts read.
    let out = plan(&[&start[..], &["--goal", "-0.075,-0.025", "--json"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(v["status"], "GOAL_OCCUPIED");
    assert_eq!(text(&out.stderr).lines().count(), 1, "{}", text(&out.stderr));

    // A Moving AI map is in cells.
    let dir = scratch_dir("units");
    let map = dir.join("ring.map");
    std::fs::write(&map, "type octile\nheight 5\nwidth 6\nmap\n......\n.@@@..\n.@.@..\n.@@@..\n......\n").unwrap();
    let out = blockstar(&["plan", "--map", map.to_str().unwrap(), "--start", "0.5,0.5,0", "--goal", "2.5,1.5"]);
    assert_one_error(&out, "GOAL_OCCUPIED: goal (2.500, 1.500) cells is in an obstacle (occupancy 100)");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn negative_numbers_are_values_whatever_the_spelling() {
    let request = ["--start", "-1.5,0.5,0", "--goal", "0.5,1.5"];
    for option in ["--robot-radius", "--robot-side", "--min-turning-radius"] {
        let spaced = plan(&[&request[..], &[option, "-1"]].concat());
        let joined = plan(&[&request[..], &[&format!("{option}=-1")]].concat());
        assert_one_error(&spaced, &format!("{option} must be >= 0 m, got -1 m"));
        assert_eq!((spaced.status.code(), text(&spaced.stderr)), (joined.status.code(), text(&joined.stderr)));
    }
    // The same in the other subcommands with lengths.
    let map = repo("config/tb3_sandbox.yaml");
    let nav = |radius: &[&str]| blockstar(&[&["bench-nav", "--map", map.to_str().unwrap()][..], radius].concat());
    let (spaced, joined) = (nav(&["--robot-radius", "-0.5"]), nav(&["--robot-radius=-0.5"]));
    assert_one_error(&spaced, "--robot-radius must be >= 0 m, got -0.5 m");
    assert_eq!(text(&spaced.stderr), text(&joined.stderr));
}

#[test]
fn a_missing_map_image_names_the_yaml_and_the_resolved_path() {
    let dir = scratch_dir("image");
    let yaml = dir.join("map.yaml");
    std::fs::write(
        &yaml,
        "image: missing.pgm\nresolution: 0.05\norigin: [0, 0, 0]\nnegate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.2\n",
    )
    .unwrap();
    let out = blockstar(&["plan", "--map", yaml.to_str().unwrap(), "--start", "0,0,0", "--goal", "1,1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    let err = text(&out.stderr);
    let want = format!(
        "blockstar: {}: image \"missing.pgm\" (resolved to {}): ",
        yaml.display(),
        dir.join("missing.pgm").display()
    );
    assert!(err.starts_with(&want) && err.lines().count() == 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn curve_prints_the_shortest_curve_with_its_gears_or_names_the_bad_input() {
    // Three metres straight back: one reverse line.
    let out = blockstar(&["curve", "--radius", "1", "--from", "0,0,0", "--to", "-3,0,0", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((v["length"].as_f64().unwrap() - 3.0).abs() < 1e-9, "{v}");
    let segments = v["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 1);
    assert_eq!(segments[0]["reverse"], true);
    assert_eq!(segments[0]["kind"], "line");
    // Forwards only, the same goal needs a loop.
    let out = blockstar(&["curve", "--motion-model", "forward", "--radius", "1", "--from", "0,0,0", "--to", "-3,0,0"]);
    assert!(out.status.success() && text(&out.stdout).contains("0 cusps"), "{}", text(&out.stdout));
    // Bad inputs: one message on stderr, exit code 1.
    for (args, says) in [
        (vec!["curve", "--radius", "0", "--from", "0,0,0", "--to", "1,0,0"], "--radius must be"),
        (vec!["curve", "--radius", "-1", "--from", "0,0,0", "--to", "1,0,0"], "--radius must be"),
        (
            vec!["curve", "--motion-model", "forward", "--radius", "1e8", "--from", "0,0,0", "--to", "1,0,0"],
            "--radius 100000000.000 is too large",
        ),
        (vec!["curve", "--radius", "1", "--pairs", "/nonexistent/pairs.txt"], "cannot read /nonexistent/pairs.txt"),
    ] {
        let out = blockstar(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }
    let dir = std::env::temp_dir().join(format!("blockstar-curve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pairs = dir.join("pairs.txt");
    std::fs::write(&pairs, "# comment\n0 0 0 -3 0 0\n0 0 0 1 2\n").unwrap();
    let out = blockstar(&["curve", "--radius", "1", "--pairs", pairs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("pairs.txt:3: expected six finite numbers"), "{}", text(&out.stderr));
    // The good line before it was answered.
    assert_eq!(text(&out.stdout).lines().count(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn set_changes_any_parameter_by_the_node_s_table() {
    let request = ["--start", "-1.5,0.5,0", "--goal", "0.5,1.5", "--json"];
    let out = plan(&[&request[..], &["--set", "heading_bins=16", "--set", "turn_penalty=0.5"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (set, says) in [
        ("heading_bins=12", "heading_bins must be one of 8, 16, got 12"),
        ("robot_radius=-1", "robot_radius must be >= 0 m, got -1 m"),
        ("allow_unknown=yes", "allow_unknown must be true or false"),
        ("no_such=1", "there is no parameter \"no_such\""),
        ("heading_bins", "--set takes NAME=VALUE"),
    ] {
        let out = plan(&[&request[..], &["--set", set]].concat());
        assert_eq!(out.status.code(), Some(1), "{set}");
        assert!(text(&out.stderr).contains(says), "{set}: {}", text(&out.stderr));
    }
}

#[test]
fn at_radius_zero_turns_on_the_spot_are_rotate_segments_in_json() {
    let out = plan(&["--start", "-1.5,0.5,3.0", "--goal", "0.5,1.5,-1.57", "--min-turning-radius", "0", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let segments = v["trajectory"]["segments"].as_array().unwrap();
    let rotations: Vec<&serde_json::Value> = segments.iter().filter(|s| s["kind"] == "rotate").collect();
    assert!(rotations.len() >= 2, "{segments:?}");
    for r in &rotations {
        let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["angle", "kind", "length", "start"], "{r}");
        assert_eq!(r["length"], 0.0);
        assert!(r["angle"].as_f64().unwrap().abs() <= std::f64::consts::PI + 1e-12);
    }
    // The first turns from the start heading; the last ends facing the goal's.
    assert_eq!(segments[0]["kind"], "rotate");
    assert!((segments[0]["start"][2].as_f64().unwrap() - 3.0).abs() < 1e-9);
    let last = segments.last().unwrap();
    let end_yaw = last["start"][2].as_f64().unwrap() + last["angle"].as_f64().unwrap();
    assert!(
        ((end_yaw + 1.57 + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI) - std::f64::consts::PI).abs()
            < 1e-9,
        "{last}"
    );
}

/// A start facing a wall 0.1 m ahead (its disk 0.1 m from it): forwards only (the bundled default) it is refused by proof;
/// with `--motion-model reeds_shepp` (or `--set motion_model=reeds_shepp`) the plan backs out,
/// each JSON segment saying its gear, with the cusps and reverse length counted; a bad model or
/// penalty is named in the error.
#[test]
fn reeds_shepp_backs_out_of_what_traps_the_forward_model() {
    let request = ["--start", "-2.45,-0.25,3.14159", "--goal", "0.5,1.5", "--json"];
    let forward = plan(&request);
    assert_eq!(forward.status.code(), Some(1));
    assert!(text(&forward.stderr).contains("obstacle ahead"), "{}", text(&forward.stderr));
    for flags in [&["--motion-model", "reeds_shepp"][..], &["--set", "motion_model=reeds_shepp"][..]] {
        let out = plan(&[&request[..], flags].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = &v["trajectory"];
        let segments = t["segments"].as_array().unwrap();
        assert_eq!(segments[0]["reverse"], true, "{:?}", segments[0]);
        let reverse: f64 =
            segments.iter().filter(|s| s["reverse"] == true).map(|s| s["length"].as_f64().unwrap()).sum();
        assert!((reverse - t["reverse_length"].as_f64().unwrap()).abs() < 1e-9);
        let gears: Vec<bool> = segments.iter().map(|s| s["reverse"] == true).collect();
        let cusps = gears.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(t["cusps"].as_u64(), Some(cusps as u64));
        assert!(cusps >= 1);
    }
    for (flags, says) in [
        (&["--motion-model", "sideways"][..], "motion_model must be one of forward, reeds_shepp"),
        (&["--reverse-penalty", "0.5"][..], "reverse_penalty must be >= 1"),
        (&["--change-penalty", "-1"][..], "change_penalty must be >= 0 m, got -1 m"),
    ] {
        let out = plan(&[&request[..], flags].concat());
        assert_eq!(out.status.code(), Some(1), "{flags:?}");
        assert!(text(&out.stderr).contains(says), "{flags:?}: {}", text(&out.stderr));
    }
}

#[test]
fn tolerance_plans_to_the_nearest_reachable_place_and_says_so() {
    let request = ["--start", "-1.5,0.5,0", "--goal", "-0.075,-0.025", "--json"];
    // The goal on the centre pillar: refused exactly, answered within 0.6 m.
    let out = plan(&request);
    assert_eq!(out.status.code(), Some(1));
    let out = plan(&[&request[..], &["--tolerance", "0.6"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    let end = v["trajectory"]["poses"].as_array().unwrap().last().unwrap().as_array().unwrap().clone();
    let d = (end[0].as_f64().unwrap() + 0.075).hypot(end[1].as_f64().unwrap() + 0.025);
    assert!(d <= 0.6 + 1e-9, "ended {d} m from the goal");
    let note = v["note"].as_str().unwrap();
    assert!(note.starts_with("goal (-0.075, -0.025) m not reached (GOAL_OCCUPIED): planned to"), "{note}");
    assert!(note.contains(&format!("{d:.3} m from it (tolerance 0.600 m)")), "{note}");
    // Too small to leave the pillar: the error says the tolerance did not help either.
    let out = plan(&["--start", "-1.5,0.5,0", "--goal", "-0.075,-0.025", "--tolerance", "0.01"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no reachable place within the tolerance of 0.010 m either"),
        "{}",
        text(&out.stderr)
    );
    // A negative tolerance is refused by name.
    let out = plan(&["--start", "-1.5,0.5,0", "--goal", "0.5,1.5", "--tolerance", "-1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--tolerance"), "{}", text(&out.stderr));
}

#[test]
fn a_start_a_little_inside_a_wall_is_driven_out_of_and_a_deeper_one_refused_with_the_depth() {
    // Beside the sandbox's west wall, facing it, with reversing: 9 mm of the footprint in the wall.
    let request = ["--start", "-2.4,-0.5,3.14", "--goal", "1.5,1.8", "--motion-model", "reeds_shepp", "--json"];
    let out = plan(&request);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    let depth = v["start_overlap"]["depth"].as_f64().expect("the stretch out of the overlap");
    assert!(depth > 0.0 && depth <= 0.05, "{depth}");
    assert!(v["start_overlap"]["segments"].as_u64().unwrap() >= 1);
    let first = v["trajectory"]["poses"][0].as_array().unwrap().clone();
    assert!((first[0].as_f64().unwrap() + 2.4).abs() < 1e-9 && (first[1].as_f64().unwrap() + 0.5).abs() < 1e-9);
    let note = v["note"].as_str().unwrap();
    assert!(note.starts_with(&format!("start (-2.400, -0.500) m overlaps obstacles by {depth:.3} m")), "{note}");
    // The same start with start_overlap 0 (flag, or parameter through --set): refused with its depth.
    for flags in [&["--start-overlap", "0"][..], &["--set", "start_overlap=0"][..]] {
        let out = plan(&[&request[..], flags].concat());
        assert_eq!(out.status.code(), Some(1), "{flags:?}");
        let says = format!("START_OCCUPIED: the vehicle does not fit at start (-2.400, -0.500) m: obstacles reach {depth:.3} m into its footprint (start_overlap allows 0.000 m)");
        assert!(text(&out.stderr).contains(&says), "{flags:?}: {}", text(&out.stderr));
    }
    // Deeper than the default 0.05 m.
    let out = plan(&["--start", "-2.5,-0.5,3.14", "--goal", "1.5,1.8", "--motion-model", "reeds_shepp"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("(start_overlap allows 0.050 m)"), "{}", text(&out.stderr));
    let out = plan(&[&request[..], &["--start-overlap", "-0.1"]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--start-overlap"), "{}", text(&out.stderr));
}

/// `--footprint` takes Nav2's string: a rear-axle rectangle plans, its picture is written, and a
/// polygon that crosses itself is refused naming the flag and the reason.
#[test]
fn footprint_takes_nav2_polygons() {
    let rect = "[[0.3, 0.12], [0.3, -0.12], [-0.08, -0.12], [-0.08, 0.12]]";
    let dir = scratch_dir("footprint");
    let png = dir.join("rect.png");
    let request = ["--start", "-1.5,0.5,0", "--goal", "0.5,1.5", "--json", "--footprint", rect];
    let out = plan(&[&request[..], &["--png", png.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(v["status"], "SUCCESS");
    assert!(std::fs::metadata(&png).map(|m| m.len() > 1000).unwrap_or(false), "picture written");
    // A picture that cannot be written: the plan's record is still on stdout, the error on
    // stderr, exit code 1.
    let nowhere = dir.join("no/such/dir/rect.png");
    let out = plan(&[&request[..], &["--png", nowhere.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the plan's JSON record on stdout");
    assert_eq!(record["trajectory"], v["trajectory"]);
    assert!(text(&out.stderr).contains("rect.png"), "{}", text(&out.stderr));
    // The rectangle reaches 0.32 m from base_link; the default disk is 0.15 m: a different plan.
    let disk = plan(&request[..5]);
    let d: serde_json::Value = serde_json::from_slice(&disk.stdout).unwrap();
    assert_ne!(v["trajectory"], d["trajectory"]);
    let bad = plan(&["--start", "-1.5,0.5,0", "--goal", "0.5,1.5", "--footprint", "[[0,0],[1,1],[1,0],[0,1]]"]);
    assert_eq!(bad.status.code(), Some(1));
    let said = text(&bad.stderr);
    assert!(said.contains("--footprint") && said.contains("not a simple polygon"), "{said}");
}

/// `--warm-tables` fills Directional A*'s tables before the plan's clock starts, as the node does
/// when its map arrives: the same plan, the fill reported. A cold plan fills what it looks up
/// itself, says how long that took, and does not count it against its budget.
#[test]
fn warm_tables_fills_before_the_clock_and_changes_no_plan() {
    // A reversing rectangle between pillars: the lattice and the hybrid search look tables up.
    let request = [
        "--start=1.478,0.638,0.371",
        "--goal=-2.198,-0.124,-0.616",
        "--footprint",
        "[[0.7, 0.25], [0.7, -0.25], [-0.2, -0.25], [-0.2, 0.25]]",
        "--min-turning-radius",
        "0.8",
        "--motion-model",
        "reeds_shepp",
        "--set",
        "max_planning_time=60",
        "--json",
    ];
    let [cold, warm] = [plan(&request), plan(&[&request[..], &["--warm-tables"]].concat())].map(|out| {
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON object on stdout")
    });
    assert_eq!(cold["status"], "SUCCESS", "{cold}");
    assert!(cold["tables_warmed"].is_null(), "{cold}");
    assert!(warm["tables_warmed"]["edges"].as_u64().unwrap() > 0, "{warm}");
    assert_eq!(cold["trajectory"], warm["trajectory"]);
    let ms = |v: &serde_json::Value, key: &str| v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"));
    let filling = ms(&cold, "table_filling_ms");
    assert!(filling > 0.0 && filling <= ms(&cold, "planning_time_ms"), "{cold}");
    assert_eq!(ms(&warm, "table_filling_ms"), 0.0, "{warm}");
    // A budget no plan here meets: TIMEOUT, cold or warm (filling is not planning, but the
    // search itself outlasts a millisecond).
    let tight = [&request[..request.len() - 3], &["--set", "max_planning_time=0.001"]].concat();
    for flags in [&[][..], &["--warm-tables"][..]] {
        let out = plan(&[&tight[..], flags].concat());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("blockstar: TIMEOUT"), "{err}");
    }
}
