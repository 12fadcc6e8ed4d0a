//! The node's parameters: fixed names (tools outside the package rely on them), typed lookup with
//! defaults, and range checks. ROS-free apart from the value type, so it can be unit-tested.

use crate::planner::{PlanError, PlannerConfig, StatusCode};

/// A parameter value as the ROS parameter file provides it.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Double(f64),
    /// A string.
    String(String),
    /// Any other type (arrays); always rejected.
    Other(&'static str),
}

/// Everything the node is configured with.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeParams {
    /// The planner's parameters (`robot_radius`, `min_turning_radius`, `allow_unknown`,
    /// `occupied_threshold`, `path_spacing`, `max_planning_time`, `max_map_cells`).
    pub planner: PlannerConfig,
    /// `global_frame`: the frame of the map, the goals and the published path (default `map`).
    pub global_frame: String,
    /// `map_file`: a map_server YAML (or Moving AI `.map`) loaded at start-up; empty for none.
    pub map_file: String,
    /// `publish_clearance`: publish the obstacle distance as an `OccupancyGrid` on `~/clearance`
    /// (scaled for RViz) whenever the map changes.
    pub publish_clearance: bool,
    /// `replan_period`: seconds between periodic replans of the current goal from the vehicle's
    /// latest pose (finite, >= 0); 0 replans only when the map changes.
    pub replan_period: f64,
    /// `robot_base_frame`: the vehicle's frame; its pose in `global_frame` through TF is the
    /// start of a plan when the request gives none (default `base_link`, Nav2's name).
    pub robot_base_frame: String,
    /// `transform_tolerance` (s, finite, >= 0; Nav2's name and default 0.1): how far a lookup
    /// may reach past the transforms TF holds, and how old the robot's pose may be.
    pub transform_tolerance: f64,
    /// `planner_id`: the name Nav2's actions may ask for (default `GridBased`, Nav2's default
    /// planner name); an empty `planner_id` in a request is served too.
    pub planner_id: String,
    /// `autostart`: configure and activate at start-up (default true). False leaves the node
    /// unconfigured for a lifecycle manager.
    pub autostart: bool,
    /// `map_topic`: the occupancy grid topic (default `map`, relative to the node's namespace);
    /// its updates are taken on `<map_topic>_updates`, costmap_2d's convention.
    pub map_topic: String,
}

/// Parameters that `ros2 param set` may change while the node runs. The others (frame, map file,
/// map size cap, clearance display) shape the node's topics or inputs and need a restart.
pub const RUNTIME_PARAMS: [&str; 11] = [
    "robot_radius",
    "robot_side",
    "min_turning_radius",
    "neighbourhood",
    "heading_bins",
    "path_spacing",
    "turn_penalty",
    "replan_period",
    "max_planning_time",
    "allow_unknown",
    "occupied_threshold",
];

impl Default for NodeParams {
    fn default() -> Self {
        Self {
            planner: PlannerConfig::default(),
            global_frame: "map".into(),
            map_file: String::new(),
            publish_clearance: false,
            replan_period: 0.0,
            robot_base_frame: "base_link".into(),
            transform_tolerance: 0.1,
            planner_id: "GridBased".into(),
            autostart: true,
            map_topic: "map".into(),
        }
    }
}

fn wrong(name: &str, expected: &str, got: &ParamValue) -> PlanError {
    PlanError::new(StatusCode::InvalidInput, format!("parameter {name} must be {expected}, got {got:?}"))
}

impl NodeParams {
    /// Reads every parameter through `lookup` (None = not set: the default stays), then checks
    /// ranges. Floating-point parameters accept integers (`robot_radius: 1`).
    ///
    /// Fails with `INVALID_INPUT` naming the parameter on a wrong type or an out-of-range value.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<ParamValue>) -> Result<Self, PlanError> {
        let mut p = NodeParams::default();
        let float = |name: &str, target: &mut f64| -> Result<(), PlanError> {
            match lookup(name) {
                None => Ok(()),
                Some(ParamValue::Double(v)) => {
                    *target = v;
                    Ok(())
                }
                Some(ParamValue::Integer(v)) => {
                    *target = v as f64;
                    Ok(())
                }
                Some(other) => Err(wrong(name, "a number", &other)),
            }
        };
        float("robot_radius", &mut p.planner.robot_radius)?;
        float("robot_side", &mut p.planner.robot_side)?;
        float("min_turning_radius", &mut p.planner.min_turning_radius)?;
        float("path_spacing", &mut p.planner.path_spacing)?;
        float("max_planning_time", &mut p.planner.max_planning_time)?;
        float("turn_penalty", &mut p.planner.turn_penalty)?;
        float("replan_period", &mut p.replan_period)?;
        float("transform_tolerance", &mut p.transform_tolerance)?;
        for (name, target) in
            [("heading_bins", &mut p.planner.heading_bins), ("neighbourhood", &mut p.planner.neighbourhood)]
        {
            match lookup(name) {
                None => {}
                Some(ParamValue::Integer(v)) if v > 0 => *target = v as usize,
                Some(other) => return Err(wrong(name, "a positive integer", &other)),
            }
        }
        for (name, target) in [
            ("allow_unknown", &mut p.planner.allow_unknown),
            ("publish_clearance", &mut p.publish_clearance),
            ("autostart", &mut p.autostart),
        ] {
            match lookup(name) {
                None => {}
                Some(ParamValue::Bool(b)) => *target = b,
                Some(other) => return Err(wrong(name, "a bool", &other)),
            }
        }
        match lookup("occupied_threshold") {
            None => {}
            Some(ParamValue::Integer(v)) if (0..=100).contains(&v) => p.planner.occupied_threshold = v as i8,
            Some(other) => return Err(wrong("occupied_threshold", "an integer in 0..=100", &other)),
        }
        match lookup("max_map_cells") {
            None => {}
            Some(ParamValue::Integer(v)) if v > 0 => p.planner.max_map_cells = v as usize,
            Some(other) => return Err(wrong("max_map_cells", "a positive integer", &other)),
        }
        for (name, target) in [
            ("global_frame", &mut p.global_frame),
            ("map_file", &mut p.map_file),
            ("robot_base_frame", &mut p.robot_base_frame),
            ("planner_id", &mut p.planner_id),
            ("map_topic", &mut p.map_topic),
        ] {
            match lookup(name) {
                None => {}
                Some(ParamValue::String(s)) => *target = s,
                Some(other) => return Err(wrong(name, "a string", &other)),
            }
        }
        p.validate()?;
        Ok(p)
    }

    /// Checks every range: the planner's (see [`PlannerConfig::validate`]) and `replan_period`.
    pub fn validate(&self) -> Result<(), PlanError> {
        for (name, value) in [
            ("global_frame", &self.global_frame),
            ("robot_base_frame", &self.robot_base_frame),
            ("map_topic", &self.map_topic),
        ] {
            if value.is_empty() {
                return Err(PlanError::new(StatusCode::InvalidInput, format!("parameter {name} must not be empty")));
            }
        }
        if !(self.transform_tolerance.is_finite() && (0.0..=3600.0).contains(&self.transform_tolerance)) {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!("transform_tolerance must be in 0..=3600 (s), got {}", self.transform_tolerance),
            ));
        }
        if !(self.replan_period.is_finite() && self.replan_period >= 0.0) {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!("replan_period must be >= 0 (s), got {}", self.replan_period),
            ));
        }
        self.planner.validate()
    }

    /// These parameters with `name` set to `value` at run time (`ros2 param set`).
    ///
    /// Fails with `INVALID_INPUT` and a reason naming the parameter when `name` is not in
    /// [`RUNTIME_PARAMS`], the value has the wrong type, or the result is out of range; `self` is
    /// never changed.
    pub fn with_change(&self, name: &str, value: &ParamValue) -> Result<NodeParams, PlanError> {
        if !RUNTIME_PARAMS.contains(&name) {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!("parameter {name} cannot be changed at run time (restart the node with it)"),
            ));
        }
        let mut next = self.clone();
        let c = &mut next.planner;
        let number = |v: &ParamValue| match v {
            ParamValue::Double(d) => Ok(*d),
            ParamValue::Integer(i) => Ok(*i as f64),
            other => Err(wrong(name, "a number", other)),
        };
        match name {
            "robot_radius" => c.robot_radius = number(value)?,
            "robot_side" => c.robot_side = number(value)?,
            "min_turning_radius" => c.min_turning_radius = number(value)?,
            "path_spacing" => c.path_spacing = number(value)?,
            "turn_penalty" => c.turn_penalty = number(value)?,
            "max_planning_time" => c.max_planning_time = number(value)?,
            "replan_period" => next.replan_period = number(value)?,
            "neighbourhood" | "heading_bins" => {
                let n = match value {
                    ParamValue::Integer(v) if *v > 0 => *v as usize,
                    other => return Err(wrong(name, "a positive integer", other)),
                };
                if name == "neighbourhood" {
                    c.neighbourhood = n;
                } else {
                    c.heading_bins = n;
                }
            }
            "allow_unknown" => match value {
                ParamValue::Bool(b) => c.allow_unknown = *b,
                other => return Err(wrong(name, "a bool", other)),
            },
            _ => match value {
                ParamValue::Integer(v) if (0..=100).contains(v) => c.occupied_threshold = *v as i8,
                other => return Err(wrong(name, "an integer in 0..=100", other)),
            },
        }
        next.validate()?;
        Ok(next)
    }

    /// The current value of a parameter of [`RUNTIME_PARAMS`] (None for other names).
    pub fn runtime_value(&self, name: &str) -> Option<ParamValue> {
        let c = &self.planner;
        Some(match name {
            "robot_radius" => ParamValue::Double(c.robot_radius),
            "robot_side" => ParamValue::Double(c.robot_side),
            "min_turning_radius" => ParamValue::Double(c.min_turning_radius),
            "path_spacing" => ParamValue::Double(c.path_spacing),
            "turn_penalty" => ParamValue::Double(c.turn_penalty),
            "max_planning_time" => ParamValue::Double(c.max_planning_time),
            "replan_period" => ParamValue::Double(self.replan_period),
            "neighbourhood" => ParamValue::Integer(c.neighbourhood as i64),
            "heading_bins" => ParamValue::Integer(c.heading_bins as i64),
            "allow_unknown" => ParamValue::Bool(c.allow_unknown),
            "occupied_threshold" => ParamValue::Integer(i64::from(c.occupied_threshold)),
            _ => return None,
        })
    }
}

impl NodeParams {
    /// Reads a ROS 2 parameters file (`<node>: ros__parameters: {...}`, the format of
    /// `--params-file`), taking the first node whose name is `node_name`, `/**` or ends with
    /// `/<node_name>`; missing parameters keep their defaults. Fails with `INVALID_INPUT` on an
    /// unreadable or malformed file, or a bad value (see [`NodeParams::from_lookup`]).
    pub fn from_yaml_file(path: &std::path::Path, node_name: &str) -> Result<Self, PlanError> {
        let bad = |m: String| PlanError::new(StatusCode::InvalidInput, format!("{}: {m}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let doc: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| bad(format!("YAML: {e}")))?;
        let nodes = doc.as_mapping().ok_or_else(|| bad("not a mapping of node names".into()))?;
        let suffix = format!("/{node_name}");
        let params = nodes
            .iter()
            .find(|(k, _)| k.as_str().is_some_and(|k| k == node_name || k == "/**" || k.ends_with(&suffix)))
            .and_then(|(_, v)| v.get("ros__parameters"))
            .and_then(|v| v.as_mapping())
            .ok_or_else(|| bad(format!("no `{node_name}: ros__parameters:` section")))?;
        Self::from_lookup(|name| {
            params.get(name).map(|v| match v {
                serde_yaml::Value::Bool(b) => ParamValue::Bool(*b),
                serde_yaml::Value::Number(n) if n.is_i64() => ParamValue::Integer(n.as_i64().unwrap_or_default()),
                serde_yaml::Value::Number(n) => ParamValue::Double(n.as_f64().unwrap_or(f64::NAN)),
                serde_yaml::Value::String(s) => ParamValue::String(s.clone()),
                serde_yaml::Value::Null => ParamValue::String(String::new()),
                _ => ParamValue::Other("a list or mapping"),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bundled_params_file_reads() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/planner.yaml");
        let p = super::NodeParams::from_yaml_file(&path, "planner_node").unwrap();
        assert_eq!(p.global_frame, "map");
        assert!(p.planner.robot_radius > 0.0);
        let dir = std::env::temp_dir().join(format!("blockstar-params-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.yaml");
        std::fs::write(&f, "/**:\n  ros__parameters:\n    robot_radius: 1\n    heading_bins: 16\n").unwrap();
        let p = super::NodeParams::from_yaml_file(&f, "planner_node").unwrap();
        assert_eq!((p.planner.robot_radius, p.planner.heading_bins), (1.0, 16));
        std::fs::write(&f, "planner_node:\n  ros__parameters:\n    robot_radius: [1]\n").unwrap();
        assert!(super::NodeParams::from_yaml_file(&f, "planner_node").is_err());
        std::fs::write(&f, "other:\n  ros__parameters: {}\n").unwrap();
        assert!(super::NodeParams::from_yaml_file(&f, "planner_node").is_err());
        std::fs::write(&f, "planner_node:\n  ros__parameters:\n    heading_bins: 12\n").unwrap();
        assert!(super::NodeParams::from_yaml_file(&f, "planner_node").is_err());
        assert!(super::NodeParams::from_yaml_file(&dir.join("missing.yaml"), "planner_node").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The bundled file and the Rust defaults are one set of defaults: `blockstar plan` without
    /// `--params`, the node without a parameters file and the node launched with the file must
    /// all plan alike.
    #[test]
    fn the_bundled_params_file_holds_the_defaults() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/planner.yaml");
        let p = super::NodeParams::from_yaml_file(&path, "planner_node").unwrap();
        assert_eq!(p, super::NodeParams::default(), "config/planner.yaml differs from NodeParams::default()");
        // Every key of the file is a parameter the reader asks for (one it ignored would escape
        // the comparison above).
        let doc: serde_yaml::Value = serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let keys: Vec<String> = doc["/**"]["ros__parameters"]
            .as_mapping()
            .unwrap()
            .keys()
            .map(|k| k.as_str().unwrap().to_string())
            .collect();
        let asked = std::cell::RefCell::new(Vec::new());
        super::NodeParams::from_lookup(|name| {
            asked.borrow_mut().push(name.to_string());
            None
        })
        .unwrap();
        let asked = asked.into_inner();
        for key in &keys {
            assert!(asked.contains(key), "config/planner.yaml sets {key}, which NodeParams does not read");
        }
        assert_eq!(keys.len(), asked.len(), "parameters missing from config/planner.yaml: {asked:?} vs {keys:?}");
    }
}

#[cfg(test)]
mod lookup_tests {
    use super::*;
    use std::collections::HashMap;

    fn from(pairs: &[(&str, ParamValue)]) -> Result<NodeParams, PlanError> {
        let m: HashMap<String, ParamValue> = pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        NodeParams::from_lookup(|n| m.get(n).cloned())
    }

    #[test]
    fn defaults_when_nothing_is_set() {
        assert_eq!(from(&[]).unwrap(), NodeParams::default());
    }

    #[test]
    fn every_fixed_name_is_read() {
        let p = from(&[
            ("robot_radius", ParamValue::Integer(1)),
            ("min_turning_radius", ParamValue::Double(0.75)),
            ("allow_unknown", ParamValue::Bool(true)),
            ("occupied_threshold", ParamValue::Integer(50)),
            ("global_frame", ParamValue::String("world".into())),
            ("path_spacing", ParamValue::Double(0.1)),
            ("max_planning_time", ParamValue::Double(3.5)),
            ("map_file", ParamValue::String("/x.yaml".into())),
            ("max_map_cells", ParamValue::Integer(1234)),
            ("replan_period", ParamValue::Integer(2)),
        ])
        .unwrap();
        assert_eq!(p.planner.robot_radius, 1.0);
        assert_eq!(p.planner.min_turning_radius, 0.75);
        assert!(p.planner.allow_unknown);
        assert_eq!(p.planner.occupied_threshold, 50);
        assert_eq!(p.global_frame, "world");
        assert_eq!(p.planner.path_spacing, 0.1);
        assert_eq!(p.planner.max_planning_time, 3.5);
        assert_eq!(p.map_file, "/x.yaml");
        assert_eq!(p.planner.max_map_cells, 1234);
        assert_eq!(p.replan_period, 2.0);
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let cases = [
            ("robot_radius", ParamValue::Double(-1.0)),
            ("robot_radius", ParamValue::String("big".into())),
            ("occupied_threshold", ParamValue::Integer(101)),
            ("allow_unknown", ParamValue::Integer(1)),
            ("max_map_cells", ParamValue::Integer(0)),
            ("path_spacing", ParamValue::Double(0.0)),
            ("global_frame", ParamValue::String(String::new())),
            ("map_file", ParamValue::Other("string array")),
            ("replan_period", ParamValue::Double(-0.5)),
            ("replan_period", ParamValue::Double(f64::INFINITY)),
        ];
        for (name, v) in cases {
            let e = from(&[(name, v)]).unwrap_err();
            assert!(e.message.contains(name), "{e}");
        }
    }
}

#[cfg(test)]
mod runtime_tests {
    use super::*;

    #[test]
    fn every_runtime_parameter_changes_and_reads_back() {
        let p = NodeParams::default();
        let changes = [
            ("robot_radius", ParamValue::Double(0.3)),
            ("robot_side", ParamValue::Double(0.4)),
            ("min_turning_radius", ParamValue::Integer(1)),
            ("neighbourhood", ParamValue::Integer(48)),
            ("heading_bins", ParamValue::Integer(16)),
            ("path_spacing", ParamValue::Double(0.1)),
            ("turn_penalty", ParamValue::Double(0.25)),
            ("replan_period", ParamValue::Double(1.5)),
            ("max_planning_time", ParamValue::Double(4.0)),
            ("allow_unknown", ParamValue::Bool(true)),
            ("occupied_threshold", ParamValue::Integer(40)),
        ];
        assert_eq!(changes.len(), RUNTIME_PARAMS.len());
        for (name, value) in changes {
            let next = p.with_change(name, &value).unwrap();
            let expected = match value {
                // Integers given for floating-point parameters read back as doubles.
                ParamValue::Integer(i) if name == "min_turning_radius" => ParamValue::Double(i as f64),
                v => v,
            };
            assert_eq!(next.runtime_value(name), Some(expected), "{name}");
            assert_ne!(next, p, "{name} changed nothing");
            // Only that parameter changed: setting it back restores the original.
            let back = next.with_change(name, &p.runtime_value(name).unwrap()).unwrap();
            assert_eq!(back, p, "{name}");
        }
    }

    #[test]
    fn invalid_runtime_changes_are_refused_with_the_name() {
        let p = NodeParams::default();
        let cases = [
            ("robot_radius", ParamValue::Double(-0.1)),
            ("robot_side", ParamValue::Double(f64::INFINITY)),
            ("min_turning_radius", ParamValue::Double(f64::NAN)),
            ("neighbourhood", ParamValue::Integer(12)),
            ("heading_bins", ParamValue::Integer(12)),
            ("heading_bins", ParamValue::Double(8.0)),
            ("path_spacing", ParamValue::Double(0.0)),
            ("turn_penalty", ParamValue::Double(-1.0)),
            ("replan_period", ParamValue::Double(-1.0)),
            ("replan_period", ParamValue::String("often".into())),
            ("allow_unknown", ParamValue::Integer(1)),
            ("occupied_threshold", ParamValue::Integer(101)),
            ("global_frame", ParamValue::String("odom".into())),
            ("map_file", ParamValue::String("x.yaml".into())),
            ("no_such_parameter", ParamValue::Bool(true)),
        ];
        for (name, value) in cases {
            let e = p.with_change(name, &value).unwrap_err();
            assert_eq!(e.code, StatusCode::InvalidInput);
            assert!(e.message.contains(name), "{name}: {e}");
        }
        assert_eq!(p.runtime_value("global_frame"), None);
    }
}
