//! Samples along a segment at the spacing of the sweep rule, and the cells a sweep covers.

use super::{disk_runs, polygon_runs, sampled_radius, square_runs, Shape, Span, SAMPLE_SPACING};
use crate::geometry::Point2;
use crate::trajectory::{PointsAlong, Segment};

/// `x.ceil()` as an index, for finite `x >= 0` (see [`crate::geometry::ceil_i64`]).
#[inline]
pub(super) fn ceil_index(x: f64) -> usize {
    crate::geometry::ceil_i64(x).max(0) as usize
}

/// The sample points of one segment, `0..=n`, computed as [`Segment::pose_at`] computes them
/// (by [`Segment::points_along`]: the same points, the trigonometry of the segment's start done
/// once instead of once per sample), and the heading only when asked for: a sweep evaluates many
/// samples of one segment, and a disk needs no heading.
pub(super) struct SamplePoints {
    points: PointsAlong,
    seg: Segment,
    n: f64,
}

impl SamplePoints {
    pub(super) fn new(seg: &Segment, n: usize) -> Self {
        Self { points: seg.points_along(), seg: *seg, n: n as f64 }
    }

    /// Arc length of sample `i`.
    #[inline]
    fn s(&self, i: usize) -> f64 {
        self.seg.length * i as f64 / self.n
    }

    #[inline]
    pub(super) fn point(&self, i: usize) -> Point2 {
        self.points.at(self.s(i))
    }

    #[inline]
    pub(super) fn yaw(&self, i: usize) -> f64 {
        crate::geometry::normalize_angle(self.seg.start.yaw + self.seg.curvature * self.points.signed(self.s(i)))
    }
}

/// Calls `f` with the sample points of `seg` (both ends included, spacing at most
/// [`SAMPLE_SPACING`], to within the 1e-9 of it that `sample_count` allows); stops early when
/// `f` returns false.
pub fn sample_segment(seg: &Segment, mut f: impl FnMut(Point2) -> bool) {
    let n = sample_count(seg);
    for i in 0..=n {
        if !f(seg.pose_at(seg.length * i as f64 / n as f64).point()) {
            return;
        }
    }
}

/// Number of sample intervals of `seg` (samples `0..=n`).
///
/// A length within [`COUNT_TOLERANCE`] (relative) above a whole number of spacings counts that
/// many: the same segment rebuilt elsewhere (a curve solved again from its two poses, or taken to
/// metres and back) differs from it by a few ulps, and where its length is a whole number of
/// spacings (the hybrid search's 1.5-cell primitives are six) one more sample would move every
/// sample, so the same segment could pass one check and touch a cell in another. The spacing then
/// exceeds [`SAMPLE_SPACING`] by at most that fraction (a few 1e-10 cells).
#[inline]
pub(super) fn sample_count(seg: &Segment) -> usize {
    ((seg.length / SAMPLE_SPACING * (1.0 - COUNT_TOLERANCE)).ceil() as usize).max(1)
}

/// See [`sample_count`].
const COUNT_TOLERANCE: f64 = 1e-9;

/// The cells swept by the footprint `shape` (a plain radius means a disk) along `segments` (with
/// `margin` extra), by the sampling rule of this module, as disjoint spans sorted by row then
/// column.
pub fn swept_spans(segments: &[Segment], shape: impl Into<Shape>, margin: f64) -> Vec<Span> {
    let shape = shape.into();
    let mut raw = Vec::new();
    let mut push = |y: i64, x0: i64, x1: i64| {
        raw.push(Span { y: y as i32, x0: x0 as i32, x1: x1 as i32 });
        true
    };
    for seg in segments {
        if seg.rotation != 0.0 {
            // A turn on the spot sweeps the footprint's circumscribed disk.
            disk_runs(seg.start.point(), shape.sampled_circumradius(0.0) + margin, &mut push);
            continue;
        }
        let n = sample_count(seg);
        for i in 0..=n {
            let pose = seg.pose_at(seg.length * i as f64 / n as f64);
            match &shape {
                Shape::Disk(r) => disk_runs(pose.point(), sampled_radius(*r) + margin, &mut push),
                Shape::Square(_) => {
                    let half = shape.sampled_half_side(seg.curvature) + margin;
                    square_runs(pose.x, pose.y, pose.yaw, half, &mut push)
                }
                Shape::Polygon(p) => polygon_runs(p, pose, shape.sampled_growth(seg.curvature) + margin, &mut push),
            }
        }
    }
    merge_spans(raw)
}

fn merge_spans(mut raw: Vec<Span>) -> Vec<Span> {
    raw.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(raw.len() / 4 + 1);
    for s in raw {
        match out.last_mut() {
            Some(last) if last.y == s.y && s.x0 <= last.x1 + 1 => last.x1 = last.x1.max(s.x1),
            _ => out.push(s),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Pose2;
    use crate::map::MapInfo;
    use crate::trajectory::{Trajectory, Turn};

    /// A segment sampled in the planner and the same segment taken to metres and back (as
    /// bench-nav and every consumer of the published trajectory see it) get the same samples,
    /// also where its length is a whole number of spacings; a length well beyond one gets one
    /// more.
    #[test]
    fn a_segment_through_metres_and_back_is_sampled_alike() {
        let info = MapInfo {
            width: 600,
            height: 300,
            resolution: 0.05,
            origin: Pose2::new(-3.7, 1.3, 0.0),
            frame_id: "map".into(),
        };
        let mut seed = 21;
        let mut flips_without_tolerance = 0;
        for i in 0..4000 {
            let start = Pose2::new(
                crate::test_rng::splitmix(&mut seed) * 500.0,
                crate::test_rng::splitmix(&mut seed) * 250.0,
                crate::test_rng::splitmix(&mut seed) * 6.0 - 3.0,
            );
            let length = SAMPLE_SPACING * (1 + i % 40) as f64;
            let seg = match i % 3 {
                0 => Segment::line(start, length),
                1 => Segment::arc(start, length, 16.0, Turn::Left),
                _ => Segment::arc(start, length, 9.5, Turn::Right),
            };
            let there = Trajectory { segments: vec![seg], min_turning_radius: 9.5 }.to_world(&info).to_cells(&info);
            let back = there.segments[0];
            assert_eq!(sample_count(&back), sample_count(&seg), "{seg:?} came back as {back:?}");
            assert_eq!(sample_count(&seg), 1 + i % 40);
            if (back.length / SAMPLE_SPACING).ceil() != (seg.length / SAMPLE_SPACING).ceil() {
                flips_without_tolerance += 1;
            }
        }
        // The round trip does move such lengths across a whole number of spacings.
        assert!(flips_without_tolerance > 0);
        let long = Segment::line(Pose2::default(), SAMPLE_SPACING * 6.0 * (1.0 + 1e-6));
        assert_eq!(sample_count(&long), 7);
    }
}
