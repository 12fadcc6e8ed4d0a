//! The tests' deterministic random numbers: splitmix64 (Steele, Lea & Flood 2014), so a failing
//! random case is the same case on every run and machine. Test builds only.

use crate::geometry::Pose2;
use std::f64::consts::PI;

/// The next number in [0, 1) from `seed` (53 random bits), advancing it.
pub(crate) fn splitmix(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// A pose in the square of side `span` centred on the origin, heading in [-pi, pi).
pub(crate) fn random_pose(seed: &mut u64, span: f64) -> Pose2 {
    Pose2::new((splitmix(seed) - 0.5) * span, (splitmix(seed) - 0.5) * span, (splitmix(seed) - 0.5) * 2.0 * PI)
}
