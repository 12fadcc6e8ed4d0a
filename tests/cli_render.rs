//! `blockstar render` as a user runs it: a small generated map_server map and a path file give a
//! PNG of the expected size with the trajectory drawn along the path; bad path files are refused
//! with the offending line named.

use blockstar_planner::render::scene::{GUIDE, MARGIN, MIN_WIDTH, TITLE_HEIGHT, TRAJECTORY};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const W: usize = 60;
const H: usize = 40;
const RES: f64 = 0.05;

/// A `W` x `H` map of `RES` m cells with origin (0, 0): walls on the border and a pillar.
fn write_map(dir: &Path) -> PathBuf {
    let mut pgm = format!("P5\n{W} {H}\n255\n").into_bytes();
    for row in 0..H {
        for col in 0..W {
            let wall = row == 0 || col == 0 || row == H - 1 || col == W - 1;
            let pillar = (28..32).contains(&col) && (4..10).contains(&row);
            pgm.push(if wall || pillar { 0 } else { 254 });
        }
    }
    std::fs::write(dir.join("map.pgm"), pgm).unwrap();
    let yaml = "image: map.pgm\nresolution: 0.05\norigin: [0.0, 0.0, 0.0]\nnegate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.196\n";
    std::fs::write(dir.join("map.yaml"), yaml).unwrap();
    dir.join("map.yaml")
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blockstar-cli-render-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn render(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blockstar")).arg("render").args(args).output().expect("run blockstar")
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn renders_a_generated_map_with_the_trajectory_along_the_path() {
    let dir = tempdir("ok");
    let map = write_map(&dir);
    // Along y = 0.5 m from x = 0.4 to 2.6 m, below the pillar; the guide runs above it.
    let path: String = (0..=22).map(|i| format!("{:.2} 0.5\n", 0.4 + 0.1 * f64::from(i))).collect();
    std::fs::write(dir.join("path.txt"), format!("# x y\n{path}")).unwrap();
    std::fs::write(dir.join("guide.txt"), "0.4 0.5\n1.5 1.2\n2.6 0.5\n").unwrap();
    let out = dir.join("pic.png");
    let scale = 10;
    let o = render(&[
        "--map",
        map.to_str().unwrap(),
        "--path",
        dir.join("path.txt").to_str().unwrap(),
        "--guide",
        dir.join("guide.txt").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--scale",
        &scale.to_string(),
        "--robot-radius",
        "0.1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (width, height, rgb) = decode(&out);
    let s = scale as u32;
    assert_eq!(width, (W as u32 * s + 2 * MARGIN).max(MIN_WIDTH));
    // Title band, the map, then one to seven legend rows under it.
    let below = height - (TITLE_HEIGHT + H as u32 * s);
    assert!((40..=240).contains(&below), "legend band of {below} pixels");
    let pixel = |x: f64, y: f64| {
        let (px, py) = (x as usize, y as usize);
        let i = 3 * (py * width as usize + px);
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    };
    let to_px = |x: f64, y: f64| {
        (f64::from(MARGIN) + x / RES * f64::from(s), f64::from(TITLE_HEIGHT) + (H as f64 - y / RES) * f64::from(s))
    };
    // Away from the start and goal marks, every sampled point of the path is trajectory red.
    for i in 0..=40 {
        let x = 0.9 + 1.2 * f64::from(i) / 40.0;
        let (px, py) = to_px(x, 0.5);
        assert_eq!(pixel(px, py), TRAJECTORY, "at x = {x} m ({px}, {py})");
    }
    // The guide (dashed, about 520 pixels long, 3 wide) shows above the path.
    let guide_px = (0..H as u32 * s)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .filter(|&(x, y)| pixel(f64::from(x), f64::from(TITLE_HEIGHT + y)) == GUIDE)
        .count();
    assert!(guide_px > 500, "{guide_px} guide pixels on the map");
    // Nothing red 0.4 m below the path.
    let (qx, qy) = to_px(1.5, 0.1);
    assert_ne!(pixel(qx, qy), TRAJECTORY);
    if std::env::var_os("KEEP_PICTURE").is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn bad_path_files_are_refused_with_the_line_named() {
    let dir = tempdir("bad");
    let map = write_map(&dir);
    let out = dir.join("pic.png");
    for (text, expect) in [
        ("0 0\n1 oops\n", "line 2"),
        ("0 0 0 0\n", "line 1"),
        ("# only a comment\n", "no points"),
        ("0 0\nnan 1\n", "line 2"),
    ] {
        std::fs::write(dir.join("path.txt"), text).unwrap();
        let o = render(&[
            "--map",
            map.to_str().unwrap(),
            "--path",
            dir.join("path.txt").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{text:?}: {err}");
        assert!(err.contains("path.txt") && err.contains(expect), "{text:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let o =
        render(&["--map", map.to_str().unwrap(), "--path", "/nonexistent/path.txt", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/path.txt"));
    assert!(!out.exists(), "no picture written for a refused input");
    std::fs::remove_dir_all(&dir).ok();
}
