//! CDR decoding of `nav_msgs/msg/OccupancyGrid` into an [`OccupancyMap`].

use super::cdr::CdrReader;
use super::BagError;
use crate::geometry::{yaw_from_quaternion, Pose2};
use crate::map::{MapInfo, OccupancyMap};

/// Decodes one serialised `nav_msgs/msg/OccupancyGrid` (CDR with its encapsulation header).
///
/// Fails on truncated or malformed bytes, a non-unit origin quaternion, or a map that
/// [`OccupancyMap::new`] rejects (data length, resolution, more than `max_cells` cells).
pub fn decode_occupancy_grid(bytes: &[u8], max_cells: usize) -> Result<OccupancyMap, BagError> {
    let mut r = CdrReader::new(bytes)?;
    // std_msgs/Header: stamp (sec, nanosec), frame_id.
    r.i32("header.stamp.sec")?;
    r.u32("header.stamp.nanosec")?;
    let frame_id = r.string("header.frame_id")?;
    // nav_msgs/MapMetaData.
    r.i32("info.map_load_time.sec")?;
    r.u32("info.map_load_time.nanosec")?;
    let resolution = f64::from(r.f32("info.resolution")?);
    let width = r.u32("info.width")? as usize;
    let height = r.u32("info.height")? as usize;
    let (x, y) = (r.f64("info.origin.position.x")?, r.f64("info.origin.position.y")?);
    r.f64("info.origin.position.z")?;
    let q = [r.f64("qx")?, r.f64("qy")?, r.f64("qz")?, r.f64("qw")?];
    let yaw = yaw_from_quaternion(q[0], q[1], q[2], q[3])
        .ok_or_else(|| BagError::Map(format!("origin orientation {q:?} is not a unit quaternion")))?;
    // Check the geometry before reading (and allocating) the cells.
    let info = MapInfo { width, height, resolution, origin: Pose2::new(x, y, yaw), frame_id };
    info.validate(max_cells).map_err(|e| BagError::Map(e.to_string()))?;
    let data = r.i8_sequence("data")?;
    OccupancyMap::new(info, data, max_cells).map_err(|e| BagError::Map(e.to_string()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Serialises a map as little-endian CDR, the way rosbag2 stores it (reference encoder for
    /// the tests; the bags the `rosbags` library writes are checked in the Python test suite).
    pub(crate) fn encode(map: &OccupancyMap) -> Vec<u8> {
        let mut b = vec![0u8, 1, 0, 0];
        let align = |b: &mut Vec<u8>, n: usize| {
            while (b.len() - 4) % n != 0 {
                b.push(0);
            }
        };
        b.extend(5i32.to_le_bytes());
        b.extend(6u32.to_le_bytes());
        b.extend(((map.info.frame_id.len() + 1) as u32).to_le_bytes());
        b.extend(map.info.frame_id.as_bytes());
        b.push(0);
        align(&mut b, 4);
        b.extend(0i32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend((map.info.resolution as f32).to_le_bytes());
        b.extend((map.info.width as u32).to_le_bytes());
        b.extend((map.info.height as u32).to_le_bytes());
        align(&mut b, 8);
        let (qx, qy, qz, qw) = crate::geometry::quaternion_from_yaw(map.info.origin.yaw);
        for v in [map.info.origin.x, map.info.origin.y, 0.0, qx, qy, qz, qw] {
            b.extend(v.to_le_bytes());
        }
        b.extend((map.data.len() as u32).to_le_bytes());
        b.extend(map.data.iter().map(|&v| v as u8));
        b
    }

    fn sample() -> OccupancyMap {
        let info = MapInfo {
            width: 3,
            height: 2,
            resolution: 0.25,
            origin: Pose2::new(-1.0, 2.0, 0.0),
            frame_id: "map".into(),
        };
        OccupancyMap::new(info, vec![0, 100, -1, 0, 50, 0], 100).unwrap()
    }

    #[test]
    fn decodes_what_was_encoded() {
        let m = sample();
        assert_eq!(decode_occupancy_grid(&encode(&m), 100).unwrap(), m);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = encode(&sample());
        for n in 0..bytes.len() {
            assert!(decode_occupancy_grid(&bytes[..n], 100).is_err(), "prefix of {n} bytes");
        }
    }

    #[test]
    fn maps_over_the_cap_or_with_wrong_length_are_rejected() {
        let m = sample();
        assert!(matches!(decode_occupancy_grid(&encode(&m), 5), Err(BagError::Map(_))));
        let mut bad = m.clone();
        bad.data.pop();
        assert!(decode_occupancy_grid(&encode(&bad), 100).is_err());
    }
}
