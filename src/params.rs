//! The node's parameters: fixed names (tools outside the package rely on them), typed lookup with
//! defaults, and range checks. ROS-free apart from the value type, so it can be unit-tested.

use crate::param_table::{check_all, field, ParamSpec};
pub use crate::param_table::{Field, ParamValue, Range};
use crate::planner::{PlanError, PlannerConfig, StatusCode};

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
    /// `tolerance` (m, finite, >= 0; Nav2's name): a goal that is occupied or cannot be reached
    /// is answered with a plan to the reachable place nearest to it within this distance
    /// ([`crate::planner::Planner::plan_near`]); 0 plans to the goal itself or refuses it.
    pub tolerance: f64,
    /// `start_overlap` (m, finite, >= 0; default [`crate::planner::DEFAULT_START_OVERLAP`]): a
    /// start where obstacles reach at most this deep into the footprint is driven out of first
    /// ([`crate::planner::Planner::plan_near`]); deeper, or 0, is `START_OCCUPIED` with the depth.
    pub start_overlap: f64,
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
    /// `planner_plugins` (Nav2's name): the vehicle profiles served, by the names Nav2's actions'
    /// `planner_id` asks for (default `["GridBased"]`). The first is the default and its
    /// parameters are the unprefixed ones; `planner_id` is its name (a parameters file that sets
    /// only `planner_id` serves one profile of that name).
    pub planner_plugins: Vec<String>,
    /// The parameters of each profile after the first, in `planner_plugins` order: read from
    /// `<profile>.<parameter>`, each defaulting at start-up to the unprefixed value. The
    /// map-level ones ([`MAP_LEVEL_PARAMS`]) are the default profile's for all.
    pub profiles: Vec<PlannerConfig>,
    /// `<profile>.robot_base_frame` of each profile after the first, in `planner_plugins` order:
    /// that vehicle's frame, whose pose through TF its replans start from (start-up only; empty,
    /// the default: the node does not know where that vehicle is, and a map change that blocks
    /// its trajectory stops it instead of replanning from a guess).
    pub profile_base_frames: Vec<String>,
}

/// Planner parameters that describe the map, not a vehicle: one value for every profile, set
/// without a prefix (the clearance annotations are shared, so every profile reads the map alike).
pub const MAP_LEVEL_PARAMS: [&str; 2] = ["occupied_threshold", "max_map_cells"];

impl Default for NodeParams {
    fn default() -> Self {
        Self {
            planner: PlannerConfig::default(),
            global_frame: "map".into(),
            map_file: String::new(),
            publish_clearance: false,
            replan_period: 0.0,
            tolerance: 0.0,
            start_overlap: crate::planner::DEFAULT_START_OVERLAP,
            robot_base_frame: "base_link".into(),
            transform_tolerance: 0.1,
            planner_id: "GridBased".into(),
            autostart: true,
            map_topic: "map".into(),
            planner_plugins: vec!["GridBased".into()],
            profiles: Vec::new(),
            profile_base_frames: Vec::new(),
        }
    }
}

/// The node's own parameters (frames, topics, replanning, tolerance, lifecycle); the planner's
/// are [`PlannerConfig::PARAMS`].
pub const NODE_PARAMS: [ParamSpec<NodeParams>; 11] = [
    ParamSpec {
        name: "global_frame",
        field: field!(Text, global_frame),
        range: Range::NotEmpty,
        unit: "",
        runtime: false,
        description: "Frame of the map, the goals and the published path.",
    },
    ParamSpec {
        name: "robot_base_frame",
        field: field!(Text, robot_base_frame),
        range: Range::NotEmpty,
        unit: "",
        runtime: false,
        description: "The vehicle's frame; its TF pose starts a plan when the request gives none.",
    },
    ParamSpec {
        name: "transform_tolerance",
        field: field!(Double, transform_tolerance),
        range: Range::Within(0.0, 3600.0),
        unit: "s",
        runtime: false,
        description: "How far (s) a transform lookup may reach past what TF holds.",
    },
    ParamSpec {
        name: "planner_id",
        field: field!(Text, planner_id),
        range: Range::Any,
        unit: "",
        runtime: false,
        description: "The planner name Nav2's actions may ask for.",
    },
    ParamSpec {
        name: "map_topic",
        field: field!(Text, map_topic),
        range: Range::NotEmpty,
        unit: "",
        runtime: false,
        description: "The occupancy grid topic; updates on <map_topic>_updates.",
    },
    ParamSpec {
        name: "autostart",
        field: field!(Flag, autostart),
        range: Range::Any,
        unit: "",
        runtime: false,
        description: "Configure and activate at start-up (false: wait for a lifecycle manager).",
    },
    ParamSpec {
        name: "map_file",
        field: field!(Text, map_file),
        range: Range::Any,
        unit: "",
        runtime: false,
        description: "A map file loaded at start-up; empty for none.",
    },
    ParamSpec {
        name: "replan_period",
        field: field!(Double, replan_period),
        range: Range::AtLeast(0.0),
        unit: "s",
        runtime: true,
        description: "Seconds between replans of the current goal; 0 = only when the map changes.",
    },
    ParamSpec {
        name: "tolerance",
        field: field!(Double, tolerance),
        range: Range::AtLeast(0.0),
        unit: "m",
        runtime: true,
        description: "Goal tolerance: an occupied or unreachable goal is planned to the reachable place nearest to it within this distance; 0 = the goal itself.",
    },
    ParamSpec {
        name: "start_overlap",
        field: field!(Double, start_overlap),
        range: Range::AtLeast(0.0),
        unit: "m",
        runtime: true,
        description: "A start where obstacles reach at most this deep into the footprint is planned out of (never deeper) first; deeper is START_OCCUPIED with the depth; 0 = refuse any overlap.",
    },
    ParamSpec {
        name: "publish_clearance",
        field: field!(Flag, publish_clearance),
        range: Range::Any,
        unit: "",
        runtime: false,
        description: "Publish the obstacle distance on ~/clearance (for RViz).",
    },
];

fn invalid(message: String) -> PlanError {
    PlanError::new(StatusCode::InvalidInput, message)
}

/// One parameter of the node: the planner's (held in [`NodeParams::planner`]) or the node's own.
#[derive(Debug, Clone, Copy)]
pub enum Param {
    /// An entry of [`PlannerConfig::PARAMS`].
    Planner(&'static ParamSpec<PlannerConfig>),
    /// An entry of [`NODE_PARAMS`].
    Node(&'static ParamSpec<NodeParams>),
}

/// Applies the same expression to the spec of either kind, with the configuration it reads.
macro_rules! either {
    ($param:expr, $spec:ident => $e:expr) => {
        match $param {
            Param::Planner($spec) => $e,
            Param::Node($spec) => $e,
        }
    };
}

impl Param {
    /// The ROS parameter name.
    pub fn name(&self) -> &'static str {
        either!(self, s => s.name)
    }

    /// Whether `ros2 param set` may change it while the node runs ([`ParamSpec::runtime`]).
    pub fn runtime(&self) -> bool {
        either!(self, s => s.runtime)
    }

    /// One line for `ros2 param describe`.
    pub fn description(&self) -> &'static str {
        either!(self, s => s.description)
    }

    /// Its allowed values.
    pub fn range(&self) -> Range {
        either!(self, s => s.range)
    }

    /// Its unit (`m`, `s`; empty for none).
    pub fn unit(&self) -> &'static str {
        either!(self, s => s.unit)
    }

    /// True for a motion model (a string that names one).
    pub fn is_motion_model(&self) -> bool {
        either!(self, s => matches!(s.field, Field::Model(..)))
    }

    /// The value held in `params` ([`ParamSpec::read`]).
    pub fn read(&self, params: &NodeParams) -> ParamValue {
        match self {
            Param::Planner(s) => s.read(&params.planner),
            Param::Node(s) => s.read(params),
        }
    }

    /// Writes `value` into `params` ([`ParamSpec::write`]: the type, not the range).
    pub fn write(&self, params: &mut NodeParams, value: &ParamValue) -> Result<(), PlanError> {
        match self {
            Param::Planner(s) => s.write(&mut params.planner, value),
            Param::Node(s) => s.write(params, value),
        }
    }

    /// Writes `value` into a profile's planner parameters (nothing for a node parameter).
    fn write_planner(&self, config: &mut PlannerConfig, value: &ParamValue) -> Result<(), PlanError> {
        match self {
            Param::Planner(s) => s.write(config, value),
            Param::Node(_) => Ok(()),
        }
    }

    /// Parses a command line's text as a value of this parameter's type ([`ParamSpec::parse`]).
    pub fn parse(&self, text: &str) -> Result<ParamValue, PlanError> {
        either!(self, s => s.parse(text))
    }

    /// Checks the value in `params` against the range ([`ParamSpec::check`]).
    pub fn check(&self, params: &NodeParams) -> Result<(), PlanError> {
        match self {
            Param::Planner(s) => s.check(&params.planner),
            Param::Node(s) => s.check(params),
        }
    }
}

/// Every parameter of the node: the planner's, then the node's own.
pub fn all_params() -> impl Iterator<Item = Param> {
    PlannerConfig::PARAMS.iter().map(Param::Planner).chain(NODE_PARAMS.iter().map(Param::Node))
}

/// The parameter called `name`.
pub fn param_spec(name: &str) -> Option<Param> {
    all_params().find(|p| p.name() == name)
}

/// The parameters `ros2 param set` may change while the node runs.
pub fn runtime_params() -> impl Iterator<Item = Param> {
    all_params().filter(Param::runtime)
}

impl NodeParams {
    /// Reads every parameter of [`all_params`] through `lookup` (None = not set: the default stays),
    /// then `planner_plugins` and each extra profile's `<profile>.<parameter>`, then checks ranges.
    ///
    /// Fails with `INVALID_INPUT` naming the parameter on a wrong type or an out-of-range value.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<ParamValue>) -> Result<Self, PlanError> {
        let mut p = NodeParams::default();
        for spec in all_params() {
            if let Some(value) = lookup(spec.name()) {
                spec.write(&mut p, &value)?;
            }
        }
        match lookup(PLANNER_PLUGINS) {
            None => p.planner_plugins = vec![p.planner_id.clone()],
            Some(ParamValue::Strings(names)) => {
                let first = names.first().cloned().unwrap_or_default();
                // planner_id names the default profile: set both, they must agree.
                if lookup("planner_id").is_some() && first != p.planner_id {
                    return Err(invalid(format!(
                        "planner_id {:?} is not the first of {PLANNER_PLUGINS} {names:?}: the first profile is the \
                         default one and planner_id is its name (set one of them, or both alike)",
                        p.planner_id
                    )));
                }
                p.planner_id = first;
                p.planner_plugins = names;
            }
            Some(other) => {
                return Err(invalid(format!("parameter {PLANNER_PLUGINS} must be a list of names, got {other}")))
            }
        }
        p.check_profile_names()?;
        // Names the reader would otherwise pass over without a word: the first profile's
        // parameters under its name (Nav2's nesting; here they are the unprefixed ones), and a
        // profile's copy of a map-level parameter.
        for (i, name) in p.planner_plugins.iter().enumerate() {
            for spec in PlannerConfig::PARAMS.iter() {
                let prefixed = format!("{name}.{}", spec.name);
                let map_level = MAP_LEVEL_PARAMS.contains(&spec.name);
                if (i == 0 || map_level) && lookup(&prefixed).is_some() {
                    let why = if map_level {
                        format!("{} is the map's, one for all", spec.name)
                    } else {
                        format!("{name} is the default profile, whose parameters are the unprefixed ones")
                    };
                    return Err(invalid(format!(
                        "parameter {prefixed} is not read: {why} (set {} without a prefix)",
                        spec.name
                    )));
                }
            }
        }
        for name in p.planner_plugins.iter().skip(1) {
            let frame = match lookup(&format!("{name}.robot_base_frame")) {
                None => String::new(),
                Some(ParamValue::String(frame)) => frame,
                Some(other) => {
                    return Err(invalid(format!("parameter {name}.robot_base_frame must be a frame name, got {other}")))
                }
            };
            p.profile_base_frames.push(frame);
            let mut config = p.planner.clone();
            for spec in profile_params() {
                if let Some(value) = lookup(&format!("{name}.{}", spec.name)) {
                    spec.write(&mut config, &value).map_err(|e| in_profile(name, e))?;
                }
            }
            p.profiles.push(config);
        }
        p.validate()?;
        Ok(p)
    }

    /// Checks every parameter's range: the planner's ([`PlannerConfig::validate`]) and the
    /// node's own ([`ParamSpec::check`]), each profile's, and the profiles' names.
    pub fn validate(&self) -> Result<(), PlanError> {
        self.planner.validate()?;
        check_all(&NODE_PARAMS, self)?;
        self.check_profile_names()?;
        if self.profiles.len() + 1 != self.profile_names().len() {
            return Err(invalid(format!(
                "{} profiles named but {} configured",
                self.profile_names().len(),
                self.profiles.len() + 1
            )));
        }
        for (name, config) in self.planner_plugins.iter().skip(1).zip(&self.profiles) {
            config.validate().map_err(|e| in_profile(name, e))?;
            for level in MAP_LEVEL_PARAMS {
                let spec = PlannerConfig::PARAMS.iter().find(|s| s.name == level).expect("a planner parameter");
                if spec.read(config) != spec.read(&self.planner) {
                    return Err(invalid(format!("{name}.{level} differs from {level}: it is the map's, one for all")));
                }
            }
        }
        Ok(())
    }

    fn check_profile_names(&self) -> Result<(), PlanError> {
        let names = &self.planner_plugins;
        if names.first() != Some(&self.planner_id) {
            return Err(invalid(format!(
                "{PLANNER_PLUGINS} {names:?} must start with planner_id {:?} (the default profile)",
                self.planner_id
            )));
        }
        if names.len() > crate::planner::fleet::MAX_PROFILES {
            let max = crate::planner::fleet::MAX_PROFILES;
            return Err(invalid(format!("{PLANNER_PLUGINS} names {} profiles; at most {max} are served", names.len())));
        }
        for (i, name) in names.iter().enumerate() {
            let ok = !name.is_empty() && !name.contains(['.', '/', ' ']) && !names[..i].contains(name);
            if !ok {
                return Err(invalid(format!(
                    "{PLANNER_PLUGINS}: {name:?} is empty, repeated, or holds '.', '/' or a space"
                )));
            }
            // Every profile after the first publishes its plans under ~/<profile>/: a ROS name
            // token.
            let token = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if i > 0 && !token {
                return Err(invalid(format!(
                    "{PLANNER_PLUGINS}: {name:?} must be a ROS name token (letters, digits and '_', not starting \
                     with a digit): its plans are published under ~/{name}/"
                )));
            }
        }
        Ok(())
    }

    /// The profiles' names, the default first (`planner_plugins`).
    pub fn profile_names(&self) -> Vec<String> {
        self.planner_plugins.clone()
    }

    /// Every profile: its name and parameters, the default first.
    pub fn profile_configs(&self) -> Vec<(String, PlannerConfig)> {
        let configs = std::iter::once(&self.planner).chain(&self.profiles);
        self.profile_names().into_iter().zip(configs.cloned()).collect()
    }

    /// `<profile>.<parameter>` of a profile after the first: its index in [`NodeParams::profiles`]
    /// and the parameter.
    fn profile_param(&self, name: &str) -> Option<(usize, &'static ParamSpec<PlannerConfig>)> {
        let (profile, param) = name.split_once('.')?;
        let index = self.planner_plugins.iter().skip(1).position(|n| n == profile)?;
        profile_params().find(|s| s.name == param).map(|s| (index, s))
    }

    /// These parameters with `name` set to `value`, whether or not it may change at run time (a
    /// command line's `--set NAME=VALUE`): a node or default-profile parameter, or
    /// `<profile>.<parameter>` of another profile. A map-level parameter
    /// ([`MAP_LEVEL_PARAMS`]) changes for every profile. Fails with `INVALID_INPUT` naming the
    /// parameter on an unknown name, a wrong type or an out-of-range value; `self` is never
    /// changed.
    pub fn with_value(&self, name: &str, value: &ParamValue) -> Result<NodeParams, PlanError> {
        self.with_values(&[(name, value)])
    }

    /// These parameters with every `(name, value)` written in order, then checked together once:
    /// [`NodeParams::with_value`] for several at once, so parameters checked against each other
    /// (`footprint` and `footprint_padding`) may change together in any order. Fails with
    /// `INVALID_INPUT` naming the parameter; `self` is never changed.
    pub fn with_values(&self, values: &[(&str, &ParamValue)]) -> Result<NodeParams, PlanError> {
        let mut next = self.clone();
        for (name, value) in values {
            next.write(name, value)?;
        }
        next.validate()?;
        Ok(next)
    }

    /// Writes `value` to `name` with the checks of its type and its own range only (the caller
    /// checks the whole).
    fn write(&mut self, name: &str, value: &ParamValue) -> Result<(), PlanError> {
        if let Some((index, spec)) = self.profile_param(name) {
            return spec.write(&mut self.profiles[index], value);
        }
        let spec = param_spec(name).ok_or_else(|| invalid(self.unknown(name)))?;
        spec.write(self, value)?;
        if name == "planner_id" {
            // The default profile's name.
            self.planner_plugins[0] = self.planner_id.clone();
        }
        if MAP_LEVEL_PARAMS.contains(&name) {
            for config in &mut self.profiles {
                spec.write_planner(config, value)?;
            }
        }
        Ok(())
    }

    /// Why `name` is no parameter here.
    fn unknown(&self, name: &str) -> String {
        match name.split_once('.') {
            Some((_, param)) if MAP_LEVEL_PARAMS.contains(&param) => {
                format!("there is no parameter {name}: {param} is the map's, one for all (set it without a prefix)")
            }
            Some((profile, _)) if !self.planner_plugins.iter().skip(1).any(|n| n == profile) => format!(
                "there is no parameter {name}: {profile:?} is not a profile after the first of {PLANNER_PLUGINS} {:?}",
                self.profile_names()
            ),
            _ => format!("there is no parameter {name}"),
        }
    }

    /// These parameters with `name` set to `value` at run time (`ros2 param set`).
    ///
    /// Fails with `INVALID_INPUT` and a reason naming the parameter when it may not change at run
    /// time ([`ParamSpec::runtime`]), the value has the wrong type, or the result is out of range;
    /// `self` is never changed.
    pub fn with_change(&self, name: &str, value: &ParamValue) -> Result<NodeParams, PlanError> {
        self.with_changes(&[(name, value)])
    }

    /// These parameters with several run-time changes at once (`set_parameters_atomically`):
    /// each name and value checked as [`NodeParams::with_change`] checks it, the result checked
    /// as a whole once ([`NodeParams::with_values`]). Fails naming the parameter; `self` is
    /// never changed.
    pub fn with_changes(&self, changes: &[(&str, &ParamValue)]) -> Result<NodeParams, PlanError> {
        for (name, _) in changes {
            let runtime = match (self.profile_param(name), param_spec(name)) {
                (Some((_, spec)), _) => spec.runtime,
                (None, Some(spec)) => spec.runtime(),
                (None, None) => return Err(invalid(self.unknown(name))),
            };
            if !runtime {
                return Err(invalid(format!(
                    "parameter {name} cannot be changed at run time (restart the node with it)"
                )));
            }
        }
        self.with_values(changes)
    }

    /// Every parameter these values hold, as `ros2 param list`, `get` and `describe` show them:
    /// the planner's and the node's ([`all_params`]), [`PLANNER_PLUGINS`], then for each profile
    /// after the first its `<profile>.<parameter>` and `<profile>.robot_base_frame`.
    pub fn listing(&self) -> Vec<Listed> {
        let mut out: Vec<Listed> = all_params()
            .map(|p| Listed {
                name: p.name().to_string(),
                value: p.read(self),
                description: p.description(),
                range: p.range(),
                unit: p.unit(),
                runtime: p.runtime(),
            })
            .collect();
        out.push(Listed {
            name: PLANNER_PLUGINS.into(),
            value: ParamValue::Strings(self.planner_plugins.clone()),
            description: "The vehicle profiles served, by the names Nav2's actions ask for; the first is the default.",
            range: Range::Any,
            unit: "",
            runtime: false,
        });
        for (index, profile) in self.planner_plugins.iter().skip(1).enumerate() {
            for spec in profile_params() {
                out.push(Listed {
                    name: format!("{profile}.{}", spec.name),
                    value: spec.read(&self.profiles[index]),
                    description: spec.description,
                    range: spec.range,
                    unit: spec.unit,
                    runtime: spec.runtime,
                });
            }
            out.push(Listed {
                name: format!("{profile}.robot_base_frame"),
                value: ParamValue::String(self.profile_base_frames.get(index).cloned().unwrap_or_default()),
                description: "This vehicle's frame, whose TF pose its replans start from; empty: unknown.",
                range: Range::Any,
                unit: "",
                runtime: false,
            });
        }
        out
    }

    /// The current value of a run-time parameter (None for other names).
    pub fn runtime_value(&self, name: &str) -> Option<ParamValue> {
        if let Some((index, spec)) = self.profile_param(name) {
            return spec.runtime.then(|| spec.read(&self.profiles[index]));
        }
        param_spec(name).filter(Param::runtime).map(|s| s.read(self))
    }
}

/// One parameter as `ros2 param list`, `get` and `describe` show it ([`NodeParams::listing`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The ROS parameter name (`robot_radius`, `Forklift.min_turning_radius`).
    pub name: String,
    /// The value in force.
    pub value: ParamValue,
    /// One line for `ros2 param describe`.
    pub description: &'static str,
    /// Its allowed values beyond its type.
    pub range: Range,
    /// Its unit (`m`, `s`; empty for none).
    pub unit: &'static str,
    /// Whether `ros2 param set` may change it while the node runs ([`ParamSpec::runtime`]).
    pub runtime: bool,
}

/// The name of the profile list parameter (Nav2's).
pub const PLANNER_PLUGINS: &str = "planner_plugins";

/// The planner parameters each profile has of its own (all but [`MAP_LEVEL_PARAMS`]).
fn profile_params() -> impl Iterator<Item = &'static ParamSpec<PlannerConfig>> {
    PlannerConfig::PARAMS.iter().filter(|s| !MAP_LEVEL_PARAMS.contains(&s.name))
}

/// `e` with the profile it is about in front.
fn in_profile(name: &str, e: PlanError) -> PlanError {
    PlanError::new(e.code, format!("profile {name}: {}", e.message))
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
        // Nav2 writes a profile's parameters nested (`Forklift: {footprint: ...}`); ROS flattens
        // them to `Forklift.footprint`. Either form is read.
        let find = |name: &str| {
            params.get(name).or_else(|| {
                let (profile, param) = name.split_once('.')?;
                params.get(profile)?.as_mapping()?.get(param)
            })
        };
        Self::from_lookup(|name| {
            find(name).map(|v| match v {
                serde_yaml::Value::Bool(b) => ParamValue::Bool(*b),
                serde_yaml::Value::Number(n) if n.is_i64() => ParamValue::Integer(n.as_i64().unwrap_or_default()),
                serde_yaml::Value::Number(n) => ParamValue::Double(n.as_f64().unwrap_or(f64::NAN)),
                serde_yaml::Value::String(s) => ParamValue::String(s.clone()),
                serde_yaml::Value::Null => ParamValue::String(String::new()),
                serde_yaml::Value::Sequence(items) if items.iter().all(|i| i.is_string()) => {
                    ParamValue::Strings(items.iter().filter_map(|i| i.as_str().map(String::from)).collect())
                }
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
        // The prefixed names asked for are the checks for parameters the reader would pass over.
        let asked: Vec<String> = asked.into_inner().into_iter().filter(|n| !n.contains('.')).collect();
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
            ("tolerance", ParamValue::Double(-0.1)),
            ("tolerance", ParamValue::Double(f64::NAN)),
        ];
        for (name, v) in cases {
            let e = from(&[(name, v)]).unwrap_err();
            assert!(e.message.contains(name), "{e}");
        }
        // `ros2 param set ... footprint "[]"` sends an empty bool array: the refusal says how to
        // quote it.
        let e = from(&[("footprint", ParamValue::Other("a bool array"))]).unwrap_err();
        assert!(
            e.message.ends_with(
                "got a bool array (ros2 param set reads an unquoted list as an array: quote the string, \"'[]'\")"
            ),
            "{e}"
        );
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
            ("footprint", ParamValue::String("[[0.5, 0.2], [0.5, -0.2], [-0.1, -0.2], [-0.1, 0.2]]".into())),
            ("footprint_padding", ParamValue::Double(0.02)),
            ("min_turning_radius", ParamValue::Integer(1)),
            ("neighbourhood", ParamValue::Integer(48)),
            ("heading_bins", ParamValue::Integer(16)),
            ("path_spacing", ParamValue::Double(0.1)),
            ("turn_penalty", ParamValue::Double(0.25)),
            ("replan_period", ParamValue::Double(1.5)),
            ("tolerance", ParamValue::Double(0.25)),
            ("start_overlap", ParamValue::Double(0.02)),
            ("max_planning_time", ParamValue::Double(4.0)),
            ("allow_unknown", ParamValue::Bool(true)),
            ("occupied_threshold", ParamValue::Integer(40)),
            ("motion_model", ParamValue::String("reeds_shepp".into())),
            ("reverse_penalty", ParamValue::Double(2.0)),
            ("change_penalty", ParamValue::Double(0.5)),
            ("cost_penalty", ParamValue::Double(3.0)),
            ("preferred_clearance", ParamValue::Double(0.5)),
            ("hierarchy_min_distance", ParamValue::Double(40.0)),
        ];
        assert_eq!(changes.len(), runtime_params().count());
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
            ("motion_model", ParamValue::String("reverse".into())),
            ("motion_model", ParamValue::Integer(1)),
            ("reverse_penalty", ParamValue::Double(0.5)),
            ("change_penalty", ParamValue::Double(f64::NAN)),
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

#[cfg(test)]
mod table_tests {
    use super::*;
    use crate::directional::MotionModel;

    /// A value of `spec`'s type other than the default, within its range.
    fn another_value(spec: Param, current: &ParamValue) -> ParamValue {
        match (current, spec.range()) {
            (ParamValue::Strings(_), _) => unreachable!("no table parameter is a list"),
            (ParamValue::Double(v), Range::Within(lo, hi)) => ParamValue::Double(if *v == hi { lo } else { hi }),
            (ParamValue::Double(v), _) => ParamValue::Double(v + 0.25),
            (ParamValue::Integer(v), Range::OneOf(values)) => {
                ParamValue::Integer(*values.iter().find(|&&x| x != *v).expect("two choices"))
            }
            (ParamValue::Integer(v), _) => ParamValue::Integer(if *v == 100 { 40 } else { (v + 1).min(100) }),
            (ParamValue::Bool(b), _) => ParamValue::Bool(!b),
            (ParamValue::String(_), _) if spec.is_motion_model() => {
                ParamValue::String(MotionModel::ReedsShepp.name().into())
            }
            (ParamValue::String(_), _) if spec.name() == "footprint" => {
                ParamValue::String("[[0.7, 0.25], [0.7, -0.25], [-0.2, -0.25], [-0.2, 0.25]]".into())
            }
            (ParamValue::String(s), _) => ParamValue::String(format!("{s}x")),
            (ParamValue::Other(_), _) => unreachable!(),
        }
    }

    #[test]
    fn names_are_unique_and_described() {
        let mut names: Vec<&str> = all_params().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all_params().count());
        assert!(all_params().all(|p| !p.description().is_empty()));
        assert!(NodeParams::default().validate().is_ok());
    }

    /// Each entry writes its own field and no other (a table entry pointing at the wrong field,
    /// or a setter falling through to another parameter, fails here), reads back what it wrote,
    /// and parses its own printed value.
    #[test]
    fn every_parameter_writes_only_its_own_field() {
        let defaults = NodeParams::default();
        for spec in all_params() {
            let value = another_value(spec, &spec.read(&defaults));
            let next = defaults.with_value(spec.name(), &value).unwrap_or_else(|e| panic!("{}: {e}", spec.name()));
            assert_eq!(spec.read(&next), value, "{}", spec.name());
            for other in all_params().filter(|o| o.name() != spec.name()) {
                let (name, other_name) = (spec.name(), other.name());
                assert_eq!(other.read(&next), other.read(&defaults), "setting {name} changed {other_name}");
            }
            let printed = match &value {
                ParamValue::Double(v) => v.to_string(),
                ParamValue::Integer(v) => v.to_string(),
                ParamValue::Bool(b) => b.to_string(),
                ParamValue::String(s) => s.clone(),
                ParamValue::Strings(_) | ParamValue::Other(_) => unreachable!("no table parameter is a list"),
            };
            assert_eq!(spec.parse(&printed).unwrap(), value, "{}", spec.name());
            // Run-time parameters change through with_change too; the others are refused there.
            assert_eq!(defaults.with_change(spec.name(), &value).is_ok(), spec.runtime(), "{}", spec.name());
        }
        assert!(defaults
            .with_value("no_such_parameter", &ParamValue::Bool(true))
            .unwrap_err()
            .message
            .contains("no_such_parameter"));
    }

    #[test]
    fn range_messages_name_the_unit() {
        let p = NodeParams::default();
        let e = p.with_value("robot_radius", &ParamValue::Double(-1.0)).unwrap_err();
        assert_eq!(e.message, "robot_radius must be >= 0 m, got -1 m");
        let e = p.with_value("heading_bins", &ParamValue::Integer(12)).unwrap_err();
        assert_eq!(e.message, "heading_bins must be one of 8, 16, got 12");
        let e = param_spec("allow_unknown").unwrap().parse("yes").unwrap_err();
        assert!(e.message.contains("true or false"), "{e}");
        // A value of the wrong type is written as a parameters file writes it, not as Rust's
        // debug form (`String("nan")`).
        let e = p.with_value("robot_radius", &ParamValue::String("nan".into())).unwrap_err();
        assert!(e.message.ends_with(r#"got "nan""#), "{e}");
        let e = p.with_value("heading_bins", &ParamValue::Double(8.0)).unwrap_err();
        assert!(e.message.ends_with("got 8.0"), "{e}");
        assert_eq!(ParamValue::Strings(vec!["GridBased".into()]).to_string(), r#"["GridBased"]"#);
        assert_eq!(
            (ParamValue::Double(f64::NAN).to_string(), ParamValue::Double(f64::NEG_INFINITY).to_string()),
            (".nan".into(), "-.inf".into())
        );
    }
}

#[cfg(test)]
mod profile_tests {
    use super::*;
    use std::collections::HashMap;

    fn from(pairs: &[(&str, ParamValue)]) -> Result<NodeParams, PlanError> {
        let m: HashMap<String, ParamValue> = pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        NodeParams::from_lookup(|n| m.get(n).cloned())
    }

    fn names(list: &[&str]) -> ParamValue {
        ParamValue::Strings(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn the_listing_names_every_parameter_once_with_the_value_in_force_and_what_may_change() {
        let p = from(&[
            (PLANNER_PLUGINS, names(&["Amr", "Forklift"])),
            ("Forklift.min_turning_radius", ParamValue::Double(1.2)),
            ("Forklift.robot_base_frame", ParamValue::String("forklift/base".into())),
        ])
        .unwrap();
        let listing = p.listing();
        let mut seen = std::collections::HashSet::new();
        for l in &listing {
            assert!(seen.insert(l.name.clone()), "{} listed twice", l.name);
            // Exactly the names `ros2 param set` may change are listed as run-time ones, and a
            // run-time one reads back as the value in force.
            assert_eq!(p.with_change(&l.name, &l.value).is_ok(), l.runtime, "{}", l.name);
            if l.runtime {
                assert_eq!(p.runtime_value(&l.name).as_ref(), Some(&l.value), "{}", l.name);
            }
        }
        // Every name a parameters file may set is listed, the profiles' too.
        for spec in all_params() {
            assert!(seen.contains(spec.name()), "{}", spec.name());
        }
        let find = |name: &str| listing.iter().find(|l| l.name == name).unwrap();
        assert_eq!(find("Forklift.min_turning_radius").value, ParamValue::Double(1.2));
        assert_eq!(find("Forklift.robot_base_frame").value, ParamValue::String("forklift/base".into()));
        assert_eq!(find(PLANNER_PLUGINS).value, names(&["Amr", "Forklift"]));
        assert_eq!((find("robot_radius").range, find("robot_radius").unit), (Range::AtLeast(0.0), "m"));
        assert!(!find("global_frame").runtime);
        assert_eq!(find("heading_bins").range.wanted(find("heading_bins").unit), "one of 8, 16");
    }

    #[test]
    fn profiles_inherit_the_unprefixed_values_and_override_their_own() {
        let p = from(&[
            (PLANNER_PLUGINS, names(&["Amr", "Forklift"])),
            ("robot_radius", ParamValue::Double(0.2)),
            ("path_spacing", ParamValue::Double(0.1)),
            ("occupied_threshold", ParamValue::Integer(50)),
            ("Forklift.robot_radius", ParamValue::Double(0.5)),
            ("Forklift.min_turning_radius", ParamValue::Double(1.0)),
        ])
        .unwrap();
        assert_eq!(p.planner_id, "Amr");
        assert_eq!(p.profile_names(), ["Amr", "Forklift"]);
        let configs = p.profile_configs();
        assert_eq!((configs[0].1.robot_radius, configs[1].1.robot_radius), (0.2, 0.5));
        assert_eq!(configs[1].1.min_turning_radius, 1.0);
        assert_eq!(configs[1].1.path_spacing, 0.1);
        assert_eq!(configs[1].1.occupied_threshold, 50);
        // Without planner_plugins: one profile named planner_id.
        let p = from(&[("planner_id", ParamValue::String("Smac".into()))]).unwrap();
        assert_eq!(p.profile_names(), ["Smac"]);
    }

    #[test]
    fn a_profiles_parameter_changes_that_profile_only() {
        let p = from(&[(PLANNER_PLUGINS, names(&["GridBased", "Forklift"]))]).unwrap();
        let next = p.with_change("Forklift.min_turning_radius", &ParamValue::Double(1.2)).unwrap();
        assert_eq!(next.profiles[0].min_turning_radius, 1.2);
        assert_eq!(next.planner, p.planner);
        assert_eq!(next.runtime_value("Forklift.min_turning_radius"), Some(ParamValue::Double(1.2)));
        assert!(next.listing().iter().any(|l| l.name == "Forklift.footprint" && l.runtime));
        // The map's parameters are one for all.
        let e = p.with_change("Forklift.occupied_threshold", &ParamValue::Integer(30)).unwrap_err();
        assert!(e.message.contains("the map's"), "{e}");
        let next = p.with_change("occupied_threshold", &ParamValue::Integer(30)).unwrap();
        assert_eq!((next.planner.occupied_threshold, next.profiles[0].occupied_threshold), (30, 30));
        // Unknown profiles and bad values are named.
        let e = p.with_change("Tugger.robot_radius", &ParamValue::Double(0.3)).unwrap_err();
        assert!(e.message.contains("Tugger") && e.message.contains("Forklift"), "{e}");
        let e = p.with_change("Forklift.robot_radius", &ParamValue::Double(-1.0)).unwrap_err();
        assert!(e.message.contains("robot_radius"), "{e}");
    }

    #[test]
    fn bad_profile_lists_are_refused() {
        for list in [vec![], vec!["A", "A"], vec!["A", "B.c"], vec!["", "B"], vec!["A", "b-2"], vec!["A", "2b"]] {
            assert!(from(&[(PLANNER_PLUGINS, names(&list))]).is_err(), "{list:?}");
        }
        // Another vehicle's frame, start-up only, empty unless given.
        let p = from(&[
            (PLANNER_PLUGINS, names(&["A", "B", "C"])),
            ("B.robot_base_frame", ParamValue::String("b/base".into())),
        ])
        .unwrap();
        assert_eq!(p.profile_base_frames, ["b/base", ""]);
        let e =
            from(&[(PLANNER_PLUGINS, names(&["A", "B"])), ("B.robot_base_frame", ParamValue::Integer(1))]).unwrap_err();
        assert!(e.message.contains("B.robot_base_frame"), "{e}");
        // The default profile's name is only a planner_id; the others' are topic name tokens.
        let (list, id) = (names(&["grid-based", "Tug_2"]), ParamValue::String("grid-based".into()));
        assert!(from(&[(PLANNER_PLUGINS, list), ("planner_id", id)]).is_ok());
        assert!(from(&[(PLANNER_PLUGINS, ParamValue::String("A".into()))]).is_err());
        // planner_id and planner_plugins disagree; names the reader would pass over.
        let e =
            from(&[(PLANNER_PLUGINS, names(&["A", "B"])), ("planner_id", ParamValue::String("C".into()))]).unwrap_err();
        assert!(e.message.contains("planner_id"), "{e}");
        assert!(from(&[(PLANNER_PLUGINS, names(&["A", "B"])), ("planner_id", ParamValue::String("A".into()))]).is_ok());
        for name in ["A.robot_radius", "B.occupied_threshold", "B.max_map_cells"] {
            let e = from(&[(PLANNER_PLUGINS, names(&["A", "B"])), (name, ParamValue::Integer(1))]).unwrap_err();
            assert!(e.message.contains(name) && e.message.contains("without a prefix"), "{e}");
        }
        let e = from(&[(PLANNER_PLUGINS, names(&["A", "B"])), ("B.robot_radius", ParamValue::String("x".into()))])
            .unwrap_err();
        assert!(e.message.contains("profile B"), "{e}");
    }

    #[test]
    fn a_params_file_nests_a_profiles_parameters_as_nav2_does() {
        let dir = std::env::temp_dir().join(format!("blockstar-profiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.yaml");
        std::fs::write(
            &f,
            "planner_node:\n  ros__parameters:\n    planner_plugins: [\"GridBased\", \"Forklift\"]\n    \
             robot_radius: 0.25\n    Forklift:\n      plugin: \"ignored\"\n      min_turning_radius: 1.5\n      \
             footprint: \"[[1.0, 0.4], [1.0, -0.4], [-0.3, -0.4], [-0.3, 0.4]]\"\n",
        )
        .unwrap();
        let p = NodeParams::from_yaml_file(&f, "planner_node").unwrap();
        assert_eq!(p.profiles[0].min_turning_radius, 1.5);
        assert!(p.profiles[0].footprint.is_some());
        assert_eq!(p.profiles[0].robot_radius, 0.25);
        std::fs::remove_dir_all(&dir).ok();
    }
}
