//! Parameters changed at run time (`ros2 param set`): r2r's parameter services call this
//! [`r2r::RosParams`] implementation, which validates each change with the range checks of
//! [`NodeParams::with_change`] and refuses a bad value with the reason (the old value stays).
//! Accepted changes reach the node's loop through r2r's parameter event stream.

use crate::params::{runtime_params, NodeParams, ParamValue};

/// The parameters the running node works with, shared with r2r's parameter services.
#[derive(Debug, Clone)]
pub struct LiveParams {
    /// The values in force (or about to be: the node applies them off the planning path).
    pub params: NodeParams,
    /// Whether the node runs on simulated time (fixed at start).
    pub use_sim_time: bool,
}

/// An r2r parameter value in the library's terms.
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

fn to_r2r(v: ParamValue) -> r2r::ParameterValue {
    match v {
        ParamValue::Bool(b) => r2r::ParameterValue::Bool(b),
        ParamValue::Integer(i) => r2r::ParameterValue::Integer(i),
        ParamValue::Double(d) => r2r::ParameterValue::Double(d),
        ParamValue::String(s) => r2r::ParameterValue::String(s),
        ParamValue::Strings(v) => r2r::ParameterValue::StringArray(v),
        ParamValue::Other(_) => r2r::ParameterValue::NotSet,
    }
}

/// ROS's standard parameter for simulated time. r2r lists it (with the value the node started
/// with); the node reads it once at start (`clock`), so a change is refused with that reason
/// rather than as an unknown name, and setting the value in force is accepted.
const USE_SIM_TIME: &str = "use_sim_time";

impl LiveParams {
    fn changed(&self, name: &str, value: &r2r::ParameterValue) -> r2r::Result<NodeParams> {
        if name == USE_SIM_TIME {
            return match *value == r2r::ParameterValue::Bool(self.use_sim_time) {
                true => Ok(self.params.clone()),
                false => Err(r2r::Error::ParameterValueConv {
                    name: name.to_string(),
                    msg: format!(
                        "use_sim_time is read when the node starts and stays {}: restart the node with the \
                         value you need (launch argument use_sim_time)",
                        self.use_sim_time
                    ),
                }),
            };
        }
        let v = from_r2r(value).ok_or_else(|| r2r::Error::ParameterValueConv {
            name: name.to_string(),
            msg: "a value is required".into(),
        })?;
        self.params
            .with_change(name, &v)
            .map_err(|e| r2r::Error::ParameterValueConv { name: name.to_string(), msg: e.message })
    }
}

impl r2r::RosParams for LiveParams {
    fn register_parameters(
        &mut self,
        _prefix: &str,
        _param: Option<r2r::Parameter>,
        params: &mut indexmap::IndexMap<String, r2r::Parameter>,
    ) -> r2r::Result<()> {
        // The values from the parameters file were read already (NodeParams::from_lookup); list
        // the run-time parameters with the values in force so `ros2 param get` shows them.
        // Each with its description from the parameter table, for `ros2 param describe`.
        for spec in runtime_params() {
            let parameter = r2r::Parameter { value: to_r2r(spec.read(&self.params)), description: spec.description() };
            params.insert(spec.name().to_string(), parameter);
        }
        // Each profile after the first: its own copy of every run-time planner parameter.
        for (name, description) in self.params.profile_runtime_names() {
            if let Some(value) = self.params.runtime_value(&name) {
                params.insert(name, r2r::Parameter { value: to_r2r(value), description });
            }
        }
        Ok(())
    }

    fn get_parameter(&mut self, name: &str) -> r2r::Result<r2r::ParameterValue> {
        self.params
            .runtime_value(name)
            .map(to_r2r)
            .ok_or_else(|| r2r::Error::InvalidParameterName { name: name.to_string() })
    }

    fn set_parameter(&mut self, name: &str, value: &r2r::ParameterValue) -> r2r::Result<()> {
        self.params = self.changed(name, value)?;
        Ok(())
    }

    fn check_parameter(&self, name: &str, value: &r2r::ParameterValue) -> r2r::Result<()> {
        self.changed(name, value).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::RosParams;

    #[test]
    fn use_sim_time_keeps_its_start_value_and_says_why() {
        let mut live = LiveParams { params: NodeParams::default(), use_sim_time: true };
        assert!(live.set_parameter(USE_SIM_TIME, &r2r::ParameterValue::Bool(true)).is_ok(), "the value in force");
        let refused = live.set_parameter(USE_SIM_TIME, &r2r::ParameterValue::Bool(false)).unwrap_err().to_string();
        assert!(refused.contains("read when the node starts and stays true"), "{refused}");
        assert!(live.check_parameter(USE_SIM_TIME, &r2r::ParameterValue::Integer(1)).is_err());
        // Other names still go through the parameter table.
        assert!(live.set_parameter("robot_radius", &r2r::ParameterValue::Double(0.3)).is_ok());
        assert!(live.set_parameter("robot_radius", &r2r::ParameterValue::Double(-1.0)).is_err());
    }
}
