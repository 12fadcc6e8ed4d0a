//! Parameter tables: a configuration's parameters described once (name, field, type, range,
//! unit), so reading a parameters file, setting a value at run time, the CLI's `--set` and the
//! configuration's own validation share one owner per range. The planner's table is
//! [`crate::planner::PlannerConfig::PARAMS`]; the node adds its own (`crate::params`).

use crate::directional::MotionModel;
use crate::planner::{PlanError, StatusCode};
use crate::polygon::Polygon;

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
    /// A list of strings (`planner_plugins`).
    Strings(Vec<String>),
    /// Any other type (other arrays, mappings); always rejected.
    Other(&'static str),
}

/// The value as a parameters file writes it: `true`, `8`, `8.0`, `.nan`, `"odom"` (quoted, so a
/// string reads as one), `["GridBased"]`; another type by its kind (`an array`).
impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Integer(i) => write!(f, "{i}"),
            ParamValue::Double(d) if d.is_nan() => f.write_str(".nan"),
            ParamValue::Double(d) if d.is_infinite() => f.write_str(if *d > 0.0 { ".inf" } else { "-.inf" }),
            ParamValue::Double(d) => write!(f, "{d:?}"),
            ParamValue::String(s) => write!(f, "{s:?}"),
            ParamValue::Strings(v) => write!(f, "{v:?}"),
            ParamValue::Other(kind) => f.write_str(kind),
        }
    }
}

/// Where a parameter lives in a configuration `T`, and so its type: a reader and a writer of
/// the field.
pub enum Field<T> {
    /// A floating-point number (an integer is accepted and converted: `robot_radius: 1`).
    Double(fn(&T) -> &f64, fn(&mut T) -> &mut f64),
    /// A positive integer.
    Count(fn(&T) -> &usize, fn(&mut T) -> &mut usize),
    /// An integer occupancy value, 0 to 100.
    Occupancy(fn(&T) -> &i8, fn(&mut T) -> &mut i8),
    /// `true` or `false`.
    Flag(fn(&T) -> &bool, fn(&mut T) -> &mut bool),
    /// A string.
    Text(fn(&T) -> &String, fn(&mut T) -> &mut String),
    /// A motion model, by name (`forward` or `reeds_shepp`).
    Model(fn(&T) -> &MotionModel, fn(&mut T) -> &mut MotionModel),
    /// A polygon or none, in Nav2's footprint string form (`[[x, y], ...]`; `[]`: none).
    Polygon(fn(&T) -> &Option<Polygon>, fn(&mut T) -> &mut Option<Polygon>),
}

/// The values a parameter may take, beyond its type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Any value of the type.
    Any,
    /// A finite number at least this.
    AtLeast(f64),
    /// A finite number above this.
    Above(f64),
    /// A finite number in this closed interval.
    Within(f64, f64),
    /// One of these integers.
    OneOf(&'static [i64]),
    /// A string that is not empty.
    NotEmpty,
}

/// One parameter of a configuration `T`: the single description that the parameters file, `ros2
/// param set`/`get`/`describe`, the defaults test, the CLI's `--set` and `T`'s own validation all
/// read.
pub struct ParamSpec<T: 'static> {
    /// The ROS parameter name (fixed: tools outside the package rely on it).
    pub name: &'static str,
    /// Its field and type.
    pub field: Field<T>,
    /// Its allowed values.
    pub range: Range,
    /// Its unit in messages (`m`, `s`, ...; empty for none).
    pub unit: &'static str,
    /// Whether `ros2 param set` may change it while the node runs. The others (frames, topics,
    /// map file, map size cap, clearance display, lifecycle start) shape the node's topics or
    /// inputs and need a restart.
    pub runtime: bool,
    /// One line for `ros2 param describe`.
    pub description: &'static str,
}

impl<T> std::fmt::Debug for ParamSpec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamSpec").field("name", &self.name).field("runtime", &self.runtime).finish()
    }
}

impl<T> Clone for Field<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Field<T> {}

impl<T> Clone for ParamSpec<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ParamSpec<T> {}

/// `Field::Kind(getter, setter)` of a field path of the configuration: `field!(Double, a.b)`.
macro_rules! field {
    ($kind:ident, $($path:ident).+) => {
        $crate::param_table::Field::$kind(|p| &p.$($path).+, |p| &mut p.$($path).+)
    };
}
pub(crate) use field;

/// Checks every value of `config` against `specs` ([`ParamSpec::check`]): the first failure.
pub fn check_all<T>(specs: &[ParamSpec<T>], config: &T) -> Result<(), PlanError> {
    specs.iter().try_for_each(|spec| spec.check(config))
}

fn invalid(message: String) -> PlanError {
    PlanError::new(StatusCode::InvalidInput, message)
}

fn wrong(name: &str, expected: &str, got: &ParamValue) -> PlanError {
    invalid(format!("parameter {name} must be {expected}, got {got}"))
}

impl<T> ParamSpec<T> {
    /// The value held in `config`.
    pub fn read(&self, config: &T) -> ParamValue {
        match self.field {
            Field::Double(get, _) => ParamValue::Double(*get(config)),
            Field::Count(get, _) => ParamValue::Integer(*get(config) as i64),
            Field::Occupancy(get, _) => ParamValue::Integer(i64::from(*get(config))),
            Field::Flag(get, _) => ParamValue::Bool(*get(config)),
            Field::Text(get, _) => ParamValue::String(get(config).clone()),
            Field::Model(get, _) => ParamValue::String(get(config).name().to_string()),
            Field::Polygon(get, _) => ParamValue::String(Polygon::to_nav2(get(config).as_ref())),
        }
    }

    /// Writes `value` into `config` when its type fits (an integer for a number is converted);
    /// the range is checked by [`ParamSpec::check`]. Fails with `INVALID_INPUT` naming the
    /// parameter and the type it takes.
    pub fn write(&self, config: &mut T, value: &ParamValue) -> Result<(), PlanError> {
        match (self.field, value) {
            (Field::Double(_, set), ParamValue::Double(v)) => *set(config) = *v,
            (Field::Double(_, set), ParamValue::Integer(v)) => *set(config) = *v as f64,
            (Field::Double(..), other) => return Err(wrong(self.name, "a number", other)),
            (Field::Count(_, set), ParamValue::Integer(v)) if *v > 0 => *set(config) = *v as usize,
            (Field::Count(..), other) => return Err(wrong(self.name, "a positive integer", other)),
            (Field::Occupancy(_, set), ParamValue::Integer(v)) if (0..=100).contains(v) => *set(config) = *v as i8,
            (Field::Occupancy(..), other) => return Err(wrong(self.name, "an integer in 0..=100", other)),
            (Field::Flag(_, set), ParamValue::Bool(b)) => *set(config) = *b,
            (Field::Flag(..), other) => return Err(wrong(self.name, "a bool", other)),
            (Field::Text(_, set), ParamValue::String(s)) => *set(config) = s.clone(),
            (Field::Text(..), other) => return Err(wrong(self.name, "a string", other)),
            (Field::Model(_, set), ParamValue::String(s)) if MotionModel::parse(s).is_some() => {
                *set(config) = MotionModel::parse(s).expect("just parsed")
            }
            (Field::Model(..), other) => {
                let names: Vec<&str> = MotionModel::ALL.iter().map(|m| m.name()).collect();
                return Err(wrong(self.name, &format!("one of {}", names.join(", ")), other));
            }
            (Field::Polygon(_, set), ParamValue::String(s)) => match Polygon::parse_nav2(s) {
                Ok(polygon) => *set(config) = polygon,
                Err(e) => return Err(invalid(format!("parameter {} is not a usable footprint: {e}", self.name))),
            },
            (Field::Polygon(..), other) => {
                let e = wrong(
                    self.name,
                    "a footprint string such as \"[[0.5, 0.3], [0.5, -0.3], [-0.2, -0.3], [-0.2, 0.3]]\"",
                    other,
                );
                // The ros2 CLI reads `footprint "[]"` as an empty bool array: say how to quote it.
                return Err(invalid(format!(
                    "{} (ros2 param set reads an unquoted list as an array: quote the string, \"'[]'\")",
                    e.message
                )));
            }
        }
        Ok(())
    }

    /// Parses `text` as a value of this parameter's type (as a command line gives it: `0.3`,
    /// `16`, `true`, `map`); the range is not checked.
    pub fn parse(&self, text: &str) -> Result<ParamValue, PlanError> {
        let bad = |what: &str| invalid(format!("parameter {} must be {what}, got {text:?}", self.name));
        match self.field {
            Field::Double(..) => text.trim().parse().map(ParamValue::Double).map_err(|_| bad("a number")),
            Field::Count(..) | Field::Occupancy(..) => {
                text.trim().parse().map(ParamValue::Integer).map_err(|_| bad("an integer"))
            }
            Field::Flag(..) => match text.trim() {
                "true" => Ok(ParamValue::Bool(true)),
                "false" => Ok(ParamValue::Bool(false)),
                _ => Err(bad("true or false")),
            },
            Field::Text(..) => Ok(ParamValue::String(text.to_string())),
            Field::Model(..) | Field::Polygon(..) => Ok(ParamValue::String(text.trim().to_string())),
        }
    }

    /// Checks the value in `config` against the range. Fails with `INVALID_INPUT`: the message
    /// names the parameter, the range and the value, in the parameter's unit.
    pub fn check(&self, config: &T) -> Result<(), PlanError> {
        let unit = if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) };
        let value = self.read(config);
        let number = match value {
            ParamValue::Double(v) => v,
            ParamValue::Integer(v) => v as f64,
            ParamValue::String(s) => {
                return if self.range == Range::NotEmpty && s.is_empty() {
                    Err(invalid(format!("parameter {} must not be empty", self.name)))
                } else {
                    Ok(())
                };
            }
            _ => return Ok(()),
        };
        let fits = match self.range {
            Range::AtLeast(lo) => number.is_finite() && number >= lo,
            Range::Above(lo) => number.is_finite() && number > lo,
            Range::Within(lo, hi) => number.is_finite() && (lo..=hi).contains(&number),
            Range::OneOf(values) => values.iter().any(|&v| v as f64 == number),
            Range::Any | Range::NotEmpty => true,
        };
        if fits {
            Ok(())
        } else {
            // A double as the user may have written it far from 1 (`1e308`); an integer whole.
            let got = match value {
                ParamValue::Integer(v) => v.to_string(),
                _ => crate::geometry::Number(number).to_string(),
            };
            Err(invalid(format!("{} must be {}, got {got}{unit}", self.name, self.range.wanted(self.unit))))
        }
    }
}

impl Range {
    /// What the range asks for, in words and `unit` (`>= 0 m`, `in 0..=1`, `one of 8, 16`,
    /// `not empty`; empty for [`Range::Any`]): the refusal's words and `ros2 param describe`'s
    /// constraints.
    pub fn wanted(&self, unit: &str) -> String {
        let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
        match *self {
            Range::AtLeast(lo) => format!(">= {lo}{unit}"),
            Range::Above(lo) => format!("> {lo}{unit}"),
            Range::Within(lo, hi) => format!("in {lo}..={hi}{unit}"),
            Range::OneOf(values) => {
                let list: Vec<String> = values.iter().map(i64::to_string).collect();
                format!("one of {}", list.join(", "))
            }
            Range::NotEmpty => "not empty".into(),
            Range::Any => String::new(),
        }
    }
}
