//! Block A* over the Local Distance Database: the block grid (pattern codes kept current as the
//! map changes) and the search.
//!
//! Typical use (one database and one grid shared by all threads, one searcher per thread):
//! ```no_run
//! use blockstar_planner::block_astar::{BlockAStar, BlockGrid};
//! use blockstar_planner::lddb::{Lddb, Metric};
//! use blockstar_planner::search::los::LosRule;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let grid = blockstar_planner::grid::Grid::from_rows(&["....", ".@..", "...."])?;
//! let (lddb, _report) = Lddb::load_or_build(None, 4, &|_, _| {})?;
//! let blocks = BlockGrid::new(&grid, lddb.side())?;
//! let mut search = BlockAStar::new();
//! let path = search.find_path(&lddb, &blocks, (0, 0), (4, 3), Metric::AnyAngle, LosRule::Conservative, || false)?;
//! println!("{:?} {}", path.points, path.length);
//! # Ok(()) }
//! ```

mod block_grid;
#[cfg(test)]
mod fingerprint;
mod search;

pub use block_grid::BlockGrid;
pub use search::BlockAStar;
