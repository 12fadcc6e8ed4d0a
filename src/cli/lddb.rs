//! `blockstar lddb build|info`: compute (with progress) or inspect the Local Distance Database
//! cache.

use super::{CliError, CliResult};
use crate::lddb::{Lddb, LoadReport};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// `println!` that ignores a closed stdout (e.g. piped into `head`) instead of panicking.
macro_rules! emit {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// Arguments of `blockstar lddb`.
#[derive(Debug, clap::Args)]
pub struct LddbArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: LddbAction,
}

/// `lddb` actions.
#[derive(Debug, clap::Subcommand)]
pub enum LddbAction {
    /// Compute the database (always, printing progress) and write the cache file.
    Build(LddbCommon),
    /// Load the cache (building it when missing or invalid) and print what happened and timings.
    Info(LddbCommon),
}

/// Options shared by the `lddb` actions.
#[derive(Debug, clap::Args)]
pub struct LddbCommon {
    /// Cells per block side (2, 3 or 4).
    #[arg(long, allow_negative_numbers = true, default_value_t = 4)]
    pub side: usize,
    /// Cache file; default: $BLOCKSTAR_CACHE_DIR, $XDG_CACHE_HOME/blockstar or ~/.cache/blockstar.
    #[arg(long)]
    pub cache: Option<PathBuf>,
}

fn progress_bar(done: usize, total: usize) {
    let pct = done * 100 / total.max(1);
    let bar: String = (0..40).map(|i| if i * 100 < pct * 40 { '#' } else { '.' }).collect();
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "\rLDDB [{bar}] {pct:3}% ({done}/{total} tables)");
    if done == total {
        let _ = writeln!(e);
    }
    let _ = e.flush();
}

/// Runs `blockstar lddb`.
pub fn run(args: &LddbArgs) -> CliResult {
    match &args.action {
        LddbAction::Build(c) => {
            let path = match &c.cache {
                Some(p) => p.clone(),
                None => Lddb::default_cache_path(c.side)
                    .ok_or_else(|| CliError("no cache directory: pass --cache or set BLOCKSTAR_CACHE_DIR".into()))?,
            };
            let t = Instant::now();
            let db = Lddb::build(c.side, &progress_bar)?;
            let built = t.elapsed();
            db.save(&path)?;
            emit!(
                "built LDDB side {} ({} pattern classes, {:.1} MiB) in {:.3} s on {} threads; saved to {}",
                db.side(),
                db.classes(),
                db.memory_bytes() as f64 / (1 << 20) as f64,
                built.as_secs_f64(),
                rayon::current_num_threads(),
                path.display()
            );
            Ok(())
        }
        LddbAction::Info(c) => {
            let t = Instant::now();
            let (db, report) = Lddb::load_or_build(c.cache.as_deref(), c.side, &progress_bar)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            match report {
                LoadReport::Loaded { path } => emit!("loaded {} in {ms:.1} ms", path.display()),
                LoadReport::Built { path, reason, saved } => emit!(
                    "built in {ms:.1} ms ({reason}); cache {}: {}",
                    path.display(),
                    saved.map_or_else(|e| format!("not saved ({e})"), |_| "saved".into())
                ),
            }
            emit!("{db:?}");
            Ok(())
        }
    }
}
