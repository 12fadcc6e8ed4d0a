//! The `blockstar` command-line tool: plan on map files and benchmark, with no ROS needed.

fn main() {
    eprintln!("blockstar: no subcommands yet");
    std::process::exit(2);
}
