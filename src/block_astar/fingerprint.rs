//! A fingerprint of Block A* results (every path's points and length bits, and expansions) over
//! whole Moving AI scenario files, for both line-of-sight rules and all three metrics. Printed,
//! not asserted: run it before and after a change that must not alter results and compare:
//! `cargo test --release --no-default-features --lib block_astar::fingerprint -- --ignored --nocapture`.

use super::{BlockAStar, BlockGrid};
use crate::lddb::{Lddb, Metric};
use crate::map_io::{load_movingai_map, load_scenarios};
use crate::search::los::LosRule;
use std::path::PathBuf;

/// FNV-1a over 64-bit words.
fn mix(h: &mut u64, v: u64) {
    for b in v.to_le_bytes() {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

#[test]
#[ignore = "prints fingerprints to compare by hand across a change"]
fn print_fingerprints() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/movingai");
    let (lddb, _) = Lddb::load_or_build(None, 4, &|_, _| {}).expect("LDDB");
    let cases = [
        (Metric::AnyAngle, LosRule::MovingAi),
        (Metric::AnyAngle, LosRule::Conservative),
        (Metric::Octile, LosRule::MovingAi),
        (Metric::Tile, LosRule::MovingAi),
    ];
    for name in ["arena2", "lak303d", "AR0011SR", "random512-40-0", "den312d"] {
        let grid = load_movingai_map(&dir.join(format!("{name}.map"))).expect("map");
        let scens = load_scenarios(&dir.join(format!("{name}.map.scen"))).expect("scen");
        let blocks = BlockGrid::new(&grid, 4).expect("blocks");
        for (metric, rule) in cases {
            let mut search = BlockAStar::new();
            let (mut h, mut exp, mut len, mut solved) = (0xcbf2_9ce4_8422_2325u64, 0usize, 0f64, 0usize);
            for s in &scens {
                let (a, b) = ((s.start.0 as u32, s.start.1 as u32), (s.goal.0 as u32, s.goal.1 as u32));
                match search.find_path(&lddb, &blocks, a, b, metric, rule, || false) {
                    Ok(p) => {
                        solved += 1;
                        exp += p.expansions;
                        len += p.length;
                        mix(&mut h, p.length.to_bits());
                        mix(&mut h, p.expansions as u64);
                        for q in &p.points {
                            mix(&mut h, u64::from(q.0) << 32 | u64::from(q.1));
                        }
                    }
                    Err(e) => mix(&mut h, format!("{e:?}").len() as u64 | 1 << 40),
                }
            }
            println!(
                "fingerprint {name:16} {metric:?}/{rule:?}: solved {solved} expansions {exp} length_sum {len:.9} hash {h:016x}"
            );
        }
    }
}
