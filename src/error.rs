//! Error types. Every fallible public function returns one of these; none of them panics on bad
//! input.

use thiserror::Error;

/// Errors building or editing a [`crate::grid::Grid`].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GridError {
    /// A side is zero or the grid would exceed [`crate::grid::Grid::MAX_CELLS`] cells.
    #[error("invalid grid size {width}x{height}")]
    BadSize {
        /// Requested columns.
        width: usize,
        /// Requested rows.
        height: usize,
    },
    /// The cell data does not hold exactly `width * height` values.
    #[error("grid data has {actual} values, expected {expected}")]
    DataLength {
        /// `width * height`.
        expected: usize,
        /// What was given.
        actual: usize,
    },
    /// A cell outside the grid was addressed.
    #[error("cell ({x}, {y}) is outside the grid")]
    OutOfBounds {
        /// Column.
        x: i64,
        /// Row.
        y: i64,
    },
    /// A grid given to update a structure has another size than the structure.
    #[error("the grid is {width}x{height} cells, the structure it updates {expected_width}x{expected_height}")]
    SizeMismatch {
        /// Columns of the grid given.
        width: usize,
        /// Rows of the grid given.
        height: usize,
        /// Columns of the structure.
        expected_width: usize,
        /// Rows of the structure.
        expected_height: usize,
    },
    /// A changed rectangle reaches beyond the grid.
    #[error("the rectangle {rect:?} leaves the {width}x{height} grid")]
    RectOutside {
        /// The rectangle (cells).
        rect: crate::grid::CellRect,
        /// Columns of the grid.
        width: usize,
        /// Rows of the grid.
        height: usize,
    },
}

/// Errors reading or validating a map (file or message).
#[derive(Debug, Error)]
pub enum MapError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The image a `map_server` YAML file names could not be read.
    #[error("{yaml}: image {image:?} (resolved to {resolved}): {source}")]
    Image {
        /// The YAML file, as given.
        yaml: String,
        /// The image as the YAML file names it.
        image: String,
        /// The absolute path it was resolved to (against the YAML file's folder).
        resolved: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The content is malformed; the message says where and why.
    #[error("malformed map: {0}")]
    Format(String),
    /// The map's geometry is invalid (size, resolution, data length).
    #[error("invalid map: {0}")]
    Invalid(String),
    /// The map is larger than the configured cell cap.
    #[error("map of {cells} cells exceeds the cap of {cap} cells")]
    TooLarge {
        /// Cells in the map.
        cells: usize,
        /// The configured cap.
        cap: usize,
    },
}

impl From<GridError> for MapError {
    fn from(e: GridError) -> Self {
        MapError::Invalid(e.to_string())
    }
}
