//! The `log` records of the node's Rust dependencies, forwarded into the ROS log.
//!
//! r2r reports some faults only through the `log` facade, which prints nothing until a program
//! installs a logger: a service request it could not queue (its per-service channel is 10 deep)
//! is dropped with `log::error!`, and the client never hears back. [`install`] makes such records
//! warnings and errors of the node's ROS logger, so they reach the console, `/rosout` and the
//! tests that read the node's log.

/// Forwards records at warning level and above to the ROS logger it names.
struct Forward {
    logger: String,
}

impl log::Log for Forward {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        match record.level() {
            log::Level::Error => r2r::log_error!(&self.logger, "{}: {}", record.target(), record.args()),
            _ => r2r::log_warn!(&self.logger, "{}: {}", record.target(), record.args()),
        }
    }

    fn flush(&self) {}
}

/// Installs the forwarding logger for ROS logger `logger`; once per process (a second call,
/// or one after another logger was installed, changes nothing).
pub fn install(logger: &str) {
    if log::set_boxed_logger(Box::new(Forward { logger: logger.to_string() })).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
}
