//! The parameters the running node works with, and the one rule for changing them at run time
//! (`ros2 param set`): each change is checked with the range checks of
//! [`NodeParams::with_change`] and refused with the reason (the old value stays). The parameter
//! services (`param_services`) list, read and change them here; the node state applies what
//! they accept.

use crate::params::{Listed, NodeParams, ParamValue, Range};

/// The parameters the running node works with, shared by the parameter services and the node
/// state.
#[derive(Debug, Clone)]
pub struct LiveParams {
    /// The values in force (or about to be: the node applies them off the planning path).
    pub params: NodeParams,
    /// Whether the node runs on simulated time (fixed at start).
    pub use_sim_time: bool,
}

/// An r2r parameter value in the library's terms (None: not set).
pub fn from_r2r(v: &r2r::ParameterValue) -> Option<ParamValue> {
    match v {
        r2r::ParameterValue::NotSet => None,
        r2r::ParameterValue::Bool(b) => Some(ParamValue::Bool(*b)),
        r2r::ParameterValue::Integer(i) => Some(ParamValue::Integer(*i)),
        r2r::ParameterValue::Double(d) => Some(ParamValue::Double(*d)),
        r2r::ParameterValue::String(s) => Some(ParamValue::String(s.clone())),
        r2r::ParameterValue::StringArray(v) => Some(ParamValue::Strings(v.clone())),
        _ => Some(ParamValue::Other("an array")),
    }
}

/// ROS's standard parameter for simulated time. The node lists it (with the value it started
/// with) and reads it once at start (`clock`), so a change is refused with that reason rather
/// than as an unknown name, and setting the value in force is accepted.
const USE_SIM_TIME: &str = "use_sim_time";

impl LiveParams {
    /// Every parameter, as `ros2 param list`, `get` and `describe` show it:
    /// [`NodeParams::listing`] and `use_sim_time`.
    pub fn listing(&self) -> Vec<Listed> {
        let mut listing = self.params.listing();
        listing.push(Listed {
            name: USE_SIM_TIME.into(),
            value: ParamValue::Bool(self.use_sim_time),
            description: "Take time from /clock (read at start; restart the node to change it).",
            range: Range::Any,
            unit: "",
            runtime: false,
        });
        listing
    }

    /// The parameters with `name` set to `value` at run time; `self` is never changed. Fails
    /// with the reason, naming the parameter, when the name is unknown, the value is missing, of
    /// the wrong type or out of range, or the parameter is read only at start.
    pub fn changed(&self, name: &str, value: Option<&ParamValue>) -> Result<NodeParams, String> {
        if name == USE_SIM_TIME {
            return match value == Some(&ParamValue::Bool(self.use_sim_time)) {
                true => Ok(self.params.clone()),
                false => Err(format!(
                    "use_sim_time is read when the node starts and stays {}: restart the node with the value you \
                     need (launch argument use_sim_time)",
                    self.use_sim_time
                )),
            };
        }
        let value = value.ok_or_else(|| format!("parameter {name}: a value is required"))?;
        self.params.with_change(name, value).map_err(|e| e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_sim_time_keeps_its_start_value_and_says_why() {
        let live = LiveParams { params: NodeParams::default(), use_sim_time: true };
        assert!(live.changed(USE_SIM_TIME, Some(&ParamValue::Bool(true))).is_ok(), "the value in force");
        let refused = live.changed(USE_SIM_TIME, Some(&ParamValue::Bool(false))).unwrap_err();
        assert!(refused.contains("read when the node starts and stays true"), "{refused}");
        assert!(live.changed(USE_SIM_TIME, Some(&ParamValue::Integer(1))).is_err());
        assert!(live.changed(USE_SIM_TIME, None).is_err());
        // Other names go through the parameter table.
        assert!(live.changed("robot_radius", Some(&ParamValue::Double(0.3))).is_ok());
        assert!(live.changed("robot_radius", Some(&ParamValue::Double(-1.0))).is_err());
        assert!(live.changed("robot_radius", None).unwrap_err().contains("robot_radius"));
        let listed = live.listing();
        let sim = listed.iter().find(|l| l.name == USE_SIM_TIME).unwrap();
        assert_eq!((sim.value.clone(), sim.runtime), (ParamValue::Bool(true), false));
    }
}
