//! The managed-node interface of `lifecycle_msgs` over the ROS-free state machine
//! [`crate::lifecycle`]: the services `~/change_state`, `~/get_state`, `~/get_available_states`,
//! `~/get_available_transitions` and `~/get_transition_graph`, and the `~/transition_event`
//! topic, as rclcpp's lifecycle nodes offer them, so `nav2_lifecycle_manager` and
//! `ros2 lifecycle` manage the node. The transitions' work is the node state's
//! ([`NodeState::configure`], [`NodeState::activate`], ...).

use super::responder::Responder;
use super::state::NodeState;
use crate::lifecycle::{
    CallbackResult, LifecycleCallbacks, LifecycleMachine, State, TransitionDescription, TransitionRequest,
};
use futures::Stream;
use r2r::lifecycle_msgs::{msg as lc, srv};
use r2r::QosProfile;

/// The lifecycle services' request streams.
pub struct Services {
    /// `~/change_state`.
    pub change_state: Box<dyn Stream<Item = r2r::ServiceRequest<srv::ChangeState::Service>> + Unpin + Send>,
    /// `~/get_state`.
    pub get_state: Box<dyn Stream<Item = r2r::ServiceRequest<srv::GetState::Service>> + Unpin + Send>,
    /// `~/get_available_states`.
    pub get_available_states:
        Box<dyn Stream<Item = r2r::ServiceRequest<srv::GetAvailableStates::Service>> + Unpin + Send>,
    /// `~/get_available_transitions`.
    pub get_available_transitions:
        Box<dyn Stream<Item = r2r::ServiceRequest<srv::GetAvailableTransitions::Service>> + Unpin + Send>,
    /// `~/get_transition_graph`.
    pub get_transition_graph:
        Box<dyn Stream<Item = r2r::ServiceRequest<srv::GetAvailableTransitions::Service>> + Unpin + Send>,
}

/// The machine and its event publisher.
pub struct Lifecycle {
    machine: LifecycleMachine,
    events: r2r::Publisher<lc::TransitionEvent>,
    clock: r2r::Clock,
    logger: String,
    responder: Responder,
}

/// The services, relative to the node (`~/`): named once here for their creation and for the
/// node's Fast DDS profile (`dds_profile`).
pub const SERVICES: [&str; 5] = [
    "~/change_state",
    "~/get_state",
    "~/get_available_states",
    "~/get_available_transitions",
    "~/get_transition_graph",
];

/// Creates the services and the `~/transition_event` publisher on `node`.
pub fn create(node: &mut r2r::Node, logger: &str, responder: Responder) -> r2r::Result<(Lifecycle, Services)> {
    let qos = super::node::service_qos;
    let [change_state, get_state, get_available_states, get_available_transitions, get_transition_graph] = SERVICES;
    let services = Services {
        change_state: Box::new(node.create_service::<srv::ChangeState::Service>(change_state, qos())?),
        get_state: Box::new(node.create_service::<srv::GetState::Service>(get_state, qos())?),
        get_available_states: Box::new(
            node.create_service::<srv::GetAvailableStates::Service>(get_available_states, qos())?,
        ),
        get_available_transitions: Box::new(
            node.create_service::<srv::GetAvailableTransitions::Service>(get_available_transitions, qos())?,
        ),
        get_transition_graph: Box::new(
            node.create_service::<srv::GetAvailableTransitions::Service>(get_transition_graph, qos())?,
        ),
    };
    let events = node.create_publisher("~/transition_event", QosProfile::default().reliable().keep_last(10))?;
    let clock = r2r::Clock::create(r2r::ClockType::SystemTime)?;
    let logger = logger.to_owned();
    Ok((Lifecycle { machine: LifecycleMachine::new(), events, clock, logger, responder }, services))
}

fn state_msg(s: State) -> lc::State {
    lc::State { id: s.id(), label: s.label().into() }
}

fn description_msg(d: &TransitionDescription) -> lc::TransitionDescription {
    lc::TransitionDescription {
        transition: lc::Transition { id: d.id(), label: d.label().into() },
        start_state: state_msg(d.start),
        goal_state: state_msg(d.goal),
    }
}

/// The node state as the machine's callbacks.
struct Callbacks<'a>(&'a mut NodeState, &'a str);

impl LifecycleCallbacks for Callbacks<'_> {
    fn on_configure(&mut self) -> CallbackResult {
        match self.0.configure() {
            Ok(()) => CallbackResult::Success,
            Err(e) => {
                r2r::log_error!(self.1, "configure failed: {e}");
                CallbackResult::Failure
            }
        }
    }

    fn on_cleanup(&mut self) -> CallbackResult {
        self.0.cleanup();
        CallbackResult::Success
    }

    fn on_activate(&mut self) -> CallbackResult {
        self.0.activate();
        CallbackResult::Success
    }

    fn on_deactivate(&mut self) -> CallbackResult {
        self.0.deactivate("inactive");
        CallbackResult::Success
    }

    fn on_shutdown(&mut self, _from: State) -> CallbackResult {
        self.0.deactivate("finalized");
        self.0.cleanup();
        CallbackResult::Success
    }

    fn on_error(&mut self, _from: State) -> CallbackResult {
        self.0.deactivate("unconfigured");
        self.0.cleanup();
        CallbackResult::Success
    }
}

impl Lifecycle {
    /// The current primary state.
    pub fn state(&self) -> State {
        self.machine.state()
    }

    /// Runs `request` on `node`, publishing one `~/transition_event` per state change. Returns
    /// whether the transition's callback succeeded (the `ChangeState` response); a request not
    /// available from the current state is refused with a logged reason and changes nothing.
    pub fn change(&mut self, request: TransitionRequest, node: &mut NodeState) -> bool {
        let logger = self.logger.clone();
        match self.machine.change(request, &mut Callbacks(node, &logger)) {
            Ok(outcome) => {
                let timestamp = self.clock.get_now().map(|d| d.as_nanos() as u64).unwrap_or_default();
                for e in &outcome.events {
                    let d = description_msg(e);
                    let msg = lc::TransitionEvent {
                        timestamp,
                        transition: d.transition,
                        start_state: d.start_state,
                        goal_state: d.goal_state,
                    };
                    if let Err(err) = self.events.publish(&msg) {
                        r2r::log_warn!(&logger, "could not publish a transition event: {err}");
                    }
                }
                r2r::log_info!(&logger, "lifecycle: {} -> {}", outcome.transition.label(), outcome.state.label());
                outcome.success()
            }
            Err(e) => {
                r2r::log_warn!(&logger, "lifecycle: {e}");
                false
            }
        }
    }

    /// Answers a `~/change_state` request.
    pub fn on_change_state(&mut self, req: r2r::ServiceRequest<srv::ChangeState::Service>, node: &mut NodeState) {
        let t = &req.message.transition;
        let request = TransitionRequest::from_msg(t.id, &t.label);
        let success = self.change(request, node);
        self.responder.respond("a change_state request", req, srv::ChangeState::Response { success });
    }

    /// Answers a `~/get_state` request.
    pub fn on_get_state(&self, req: r2r::ServiceRequest<srv::GetState::Service>) {
        let response = srv::GetState::Response { current_state: state_msg(self.state()) };
        self.responder.respond("a get_state request", req, response);
    }

    /// Answers a `~/get_available_states` request.
    pub fn on_get_available_states(&self, req: r2r::ServiceRequest<srv::GetAvailableStates::Service>) {
        let available_states = LifecycleMachine::available_states().iter().map(|&s| state_msg(s)).collect();
        self.responder.respond(
            "a get_available_states request",
            req,
            srv::GetAvailableStates::Response { available_states },
        );
    }

    /// Answers `~/get_available_transitions` (`all`: false) or `~/get_transition_graph` (true).
    pub fn on_get_transitions(&self, req: r2r::ServiceRequest<srv::GetAvailableTransitions::Service>, all: bool) {
        let available_transitions = match all {
            true => LifecycleMachine::transition_graph().iter().map(description_msg).collect(),
            false => self.machine.available_transitions().iter().map(description_msg).collect(),
        };
        let response = srv::GetAvailableTransitions::Response { available_transitions };
        self.responder.respond("a get_available_transitions request", req, response);
    }
}
