//! The on-disk cache of the database: a versioned, checksummed binary file that is rebuilt when
//! missing, stale or corrupt, and never trusted blindly (header, sizes, checksum, index ranges and
//! a recomputation of sample classes are all checked before use).
//!
//! Default location: `$BLOCKSTAR_CACHE_DIR`, else `$XDG_CACHE_HOME/blockstar`, else
//! `$HOME/.cache/blockstar`; the file is `lddb-v<FORMAT_VERSION>-s<side>.bin`.
//!
//! Layout (little endian): magic `BSLDDB\r\n`, u32 format version, u32 side, u32 class count,
//! u32 zero, u64 payload length, u64 checksum of the payload; then the payload: pattern->class
//! map (u32 each), canonical patterns (u32), per rule any-angle distances (u16), octile (u8),
//! tile (u8). Next hops are derived from the distances (see [`Lddb::next_hop`]), never stored.
//!
//! Loading reads the sections in 1 MiB pieces on all rayon threads (positioned reads straight
//! into the final arrays) and hashes each piece while it is still in cache, so the file is
//! touched once.

use super::{build, Lddb, Metric};
use crate::search::los::LosRule;
use rayon::prelude::*;
use std::borrow::Cow;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"BSLDDB\r\n";
/// Version of the file layout and of the table semantics; bump it whenever either changes.
pub const FORMAT_VERSION: u32 = 3;
const HEADER: usize = 40;

/// Errors of building, loading or saving the database.
#[derive(Debug, thiserror::Error)]
pub enum LddbError {
    /// The block side is not supported.
    #[error("unsupported LDDB block side {0} (supported: 2, 3, 4 cells)")]
    BadSide(usize),
    /// A cache file could not be read or written.
    #[error("LDDB cache {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A cache file is not a valid database; the message says what is wrong.
    #[error("LDDB cache {path} is invalid: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What check failed.
        reason: String,
    },
}

/// What [`Lddb::load_or_build`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadReport {
    /// The cache file was valid and loaded.
    Loaded {
        /// The file.
        path: PathBuf,
    },
    /// The database was computed; `reason` says why the cache was not used, `saved` whether the
    /// new cache file was written (a read-only cache directory is not an error).
    Built {
        /// The file.
        path: PathBuf,
        /// Why (missing, corrupt, ...).
        reason: String,
        /// Whether the cache was written.
        saved: Result<(), String>,
    },
}

/// The `reason` of [`LoadReport::Built`] when there was no cache file yet.
pub const REASON_MISSING: &str = "missing";

/// How the database was obtained, for logs: the distinction a user needs is whether an existing
/// cache file had to be thrown away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadOutcome {
    /// A valid cache file was loaded.
    Loaded,
    /// There was no cache file (or no cache directory): built for the first time.
    BuiltFresh,
    /// A cache file existed but was unusable (truncated, corrupted, wrong version or side, or
    /// unreadable): rebuilt and, when possible, rewritten.
    Rebuilt,
}

impl LoadReport {
    /// Whether the database was loaded, built for the first time, or rebuilt over a bad file.
    pub fn outcome(&self) -> LoadOutcome {
        match self {
            LoadReport::Loaded { .. } => LoadOutcome::Loaded,
            LoadReport::Built { path, reason, .. } if reason == REASON_MISSING || path.as_os_str().is_empty() => {
                LoadOutcome::BuiltFresh
            }
            LoadReport::Built { .. } => LoadOutcome::Rebuilt,
        }
    }

    /// One line for a log: what happened, to which file, why, and whether the cache was written.
    pub fn summary(&self) -> String {
        let saved = |saved: &Result<(), String>| match saved {
            Ok(()) => "cache written".to_string(),
            Err(e) => format!("cache not written: {e}"),
        };
        match (self.outcome(), self) {
            (_, LoadReport::Loaded { path }) => format!("LDDB loaded from cache {}", path.display()),
            (LoadOutcome::Rebuilt, LoadReport::Built { path, reason, saved: s }) => format!(
                "LDDB cache {} was corrupt or unusable and has been rebuilt ({reason}); {}",
                path.display(),
                saved(s)
            ),
            (_, LoadReport::Built { path, reason, saved: s }) => {
                format!("LDDB built (cache {}: {reason}); {}", path.display(), saved(s))
            }
        }
    }
}

/// The default cache directory (see the module doc), `None` when no variable gives one.
pub fn default_cache_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("BLOCKSTAR_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|p| p.join("blockstar")))
        .or_else(|| var("HOME").map(|p| p.join(".cache").join("blockstar")))
}

/// File name of the cache for blocks of `side` cells.
pub fn cache_file_name(side: usize) -> String {
    format!("lddb-v{FORMAT_VERSION}-s{side}.bin")
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;
/// Bytes per independently hashed (and, when loading, independently read) piece.
const PIECE: usize = 1 << 20;

/// Hash of one piece of at most [`PIECE`] bytes.
fn piece_hash(chunk: &[u8]) -> u64 {
    let mut lanes = [0x243F_6A88_85A3_08D3u64, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89];
    let mut words = chunk.chunks_exact(32);
    for w in &mut words {
        for (l, lane) in lanes.iter_mut().enumerate() {
            let v = u64::from_le_bytes(w[l * 8..l * 8 + 8].try_into().unwrap_or([0; 8]));
            *lane = (*lane ^ v).wrapping_mul(K).rotate_left(29);
        }
    }
    let mut h = lanes.iter().fold(chunk.len() as u64, |h, &l| (h ^ l).wrapping_mul(K).rotate_left(31));
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K);
    }
    h
}

/// Chains the piece hashes of a byte string of `len` bytes.
fn combine_pieces(len: usize, pieces: impl Iterator<Item = u64>) -> u64 {
    pieces.fold(len as u64 ^ K, |h, p| (h ^ p).wrapping_mul(K).rotate_left(23))
}

/// 64-bit checksum of `bytes`: a multiply-rotate hash per 1 MiB piece (in parallel), chained.
/// Not cryptographic; it detects truncation, bit rot and partial writes.
pub fn checksum(bytes: &[u8]) -> u64 {
    let parts: Vec<u64> = bytes.par_chunks(PIECE).map(piece_hash).collect();
    combine_pieces(bytes.len(), parts.into_iter())
}

impl Lddb {
    /// The default cache file for `side`, `None` when no cache directory is known.
    pub fn default_cache_path(side: usize) -> Option<PathBuf> {
        default_cache_dir().map(|d| d.join(cache_file_name(side)))
    }

    /// Loads the database for `side` from `cache_path` (or the default path when `None`), or
    /// builds it when the file is missing, stale or invalid and then tries to save it (writing
    /// a temporary file and renaming it, so readers never see a partial file).
    ///
    /// Fails only for an unsupported side; cache problems are reported in the [`LoadReport`].
    pub fn load_or_build(
        cache_path: Option<&Path>,
        side: usize,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<(Lddb, LoadReport), LddbError> {
        if !Self::SIDES.contains(&side) {
            return Err(LddbError::BadSide(side));
        }
        let path = match cache_path {
            Some(p) => Some(p.to_path_buf()),
            None => Self::default_cache_path(side),
        };
        let Some(path) = path else {
            let db = Self::build(side, progress)?;
            return Ok((
                db,
                LoadReport::Built {
                    path: PathBuf::new(),
                    reason: "no cache directory (set BLOCKSTAR_CACHE_DIR)".into(),
                    saved: Err("no cache path".into()),
                },
            ));
        };
        let reason = match Self::load(&path, side) {
            Ok(db) => return Ok((db, LoadReport::Loaded { path })),
            Err(LddbError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                REASON_MISSING.to_string()
            }
            Err(e) => e.to_string(),
        };
        let db = Self::build(side, progress)?;
        let saved = db.save(&path).map_err(|e| e.to_string());
        Ok((db, LoadReport::Built { path, reason, saved }))
    }

    /// Writes the database to `path` atomically (temporary file, then rename), creating the
    /// directory when needed.
    pub fn save(&self, path: &Path) -> Result<(), LddbError> {
        let io = |source| LddbError::Io { path: path.display().to_string(), source };
        let sections = self.sections_le();
        let payload_len: usize = sections.iter().map(|s| s.len()).sum();
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        header.extend_from_slice(&(self.side as u32).to_le_bytes());
        header.extend_from_slice(&(self.canon.len() as u32).to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes());
        header.extend_from_slice(&(payload_len as u64).to_le_bytes());
        header.extend_from_slice(&checksum_sections(&sections).to_le_bytes());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&header)?;
            for section in &sections {
                f.write_all(section)?;
            }
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }

    /// The payload sections in file order, as little-endian bytes (borrowed on little-endian
    /// machines).
    fn sections_le(&self) -> Vec<Cow<'_, [u8]>> {
        vec![
            le_bytes(&self.canon_of),
            le_bytes(&self.canon),
            le_bytes(&self.aa_dist[0]),
            le_bytes(&self.aa_dist[1]),
            Cow::Borrowed(&self.oct[..]),
            Cow::Borrowed(&self.tile[..]),
        ]
    }

    /// Reads and validates the cache file at `path` for blocks of `side` cells. The sections are
    /// read straight into their final arrays in 1 MiB pieces on all rayon threads, each piece
    /// hashed right after it is read (one pass over the data, no intermediate copy).
    pub fn load(path: &Path, side: usize) -> Result<Lddb, LddbError> {
        let shown = || path.display().to_string();
        let io = |source| LddbError::Io { path: shown(), source };
        let corrupt = |reason: String| LddbError::Corrupt { path: shown(), reason };
        let f = std::fs::File::open(path).map_err(io)?;
        let file_len = f.metadata().map_err(io)?.len();
        let mut header = [0u8; HEADER];
        f.read_exact_at(&mut header, 0).map_err(|_| corrupt("not an LDDB file (shorter than its header)".into()))?;
        let u32_at = |o: usize| u32::from_le_bytes([header[o], header[o + 1], header[o + 2], header[o + 3]]);
        let u64_at = |o: usize| u64::from_le_bytes(header[o..o + 8].try_into().unwrap_or([0; 8]));
        if &header[..8] != MAGIC {
            return Err(corrupt("not an LDDB file (bad magic)".into()));
        }
        if u32_at(8) != FORMAT_VERSION {
            return Err(corrupt(format!("format version {} (expected {FORMAT_VERSION})", u32_at(8))));
        }
        if u32_at(12) as usize != side || !Self::SIDES.contains(&side) {
            return Err(corrupt(format!("block side {} (expected {side})", u32_at(12))));
        }
        let (patterns, nv, nc) = (1usize << (side * side), (side + 1) * (side + 1), side * side);
        // The class count is bounded by the pattern count; check before allocating anything.
        let k = u32_at(16) as usize;
        if k == 0 || k > patterns {
            return Err(corrupt(format!("class count {k} out of range")));
        }
        let expected = patterns * 4 + k * 4 + 2 * k * nv * nv * 2 + 2 * k * nc * nc;
        if u64_at(24) != expected as u64 || file_len != (HEADER + expected) as u64 {
            return Err(corrupt(format!(
                "payload is {} bytes, header says {}, expected {expected}",
                file_len.saturating_sub(HEADER as u64),
                u64_at(24)
            )));
        }
        let mut canon_of = vec![0u32; patterns];
        let mut canon = vec![0u32; k];
        let mut aa_dist = [vec![0u16; k * nv * nv], vec![0u16; k * nv * nv]];
        let mut oct = vec![0u8; k * nc * nc];
        let mut tile = vec![0u8; k * nc * nc];
        let checksum = {
            let [d0, d1] = &mut aa_dist;
            let sections: [&mut [u8]; 6] = [
                bytemuck::cast_slice_mut(&mut canon_of[..]),
                bytemuck::cast_slice_mut(&mut canon[..]),
                bytemuck::cast_slice_mut(&mut d0[..]),
                bytemuck::cast_slice_mut(&mut d1[..]),
                &mut oct[..],
                &mut tile[..],
            ];
            let lens: Vec<usize> = sections.iter().map(|s| s.len()).collect();
            // (section, file offset, piece) for every piece of every section.
            let mut pieces = vec![];
            let mut offset = HEADER as u64;
            for (i, section) in sections.into_iter().enumerate() {
                for piece in section.chunks_mut(PIECE) {
                    let len = piece.len() as u64;
                    pieces.push((i, offset, piece));
                    offset += len;
                }
            }
            let hashes: Vec<(usize, u64)> = pieces
                .into_par_iter()
                .map(|(i, at, piece)| {
                    f.read_exact_at(piece, at).map(|()| (i, piece_hash(piece))).map_err(|e| format!("truncated: {e}"))
                })
                .collect::<Result<_, String>>()
                .map_err(corrupt)?;
            let per_section = lens
                .iter()
                .enumerate()
                .map(|(i, &len)| combine_pieces(len, hashes.iter().filter(|h| h.0 == i).map(|h| h.1)));
            per_section.fold(FORMAT_VERSION as u64, |h, c| (h ^ c).wrapping_mul(K).rotate_left(17))
        };
        if checksum != u64_at(32) {
            return Err(corrupt("checksum mismatch".into()));
        }
        from_le_in_place(&mut canon_of);
        from_le_in_place(&mut canon);
        aa_dist.iter_mut().for_each(|d| from_le_in_place(d));
        let db = Lddb::assemble(side, canon_of, canon, aa_dist, oct, tile);
        db.validate().map_err(corrupt)?;
        Ok(db)
    }

    /// Semantic checks of loaded tables: index ranges, the pattern-to-class map, and a fresh
    /// recomputation of sample classes (a file written by an older or buggy builder is not
    /// trusted even when its checksum matches).
    fn validate(&self) -> Result<(), String> {
        let side = self.side;
        let (patterns, k) = (1usize << (side * side), self.canon.len());
        // Range checks as branch-free folds over large chunks (they vectorise; a per-element
        // early-exit `any` costs more than reading the file).
        let k32 = k as u32;
        let bad_class = |c: &[u32]| c.iter().fold(false, |bad, &v| bad | ((v >> 3) >= k32));
        if self.canon_of.par_chunks(1 << 14).any(bad_class) || self.canon.iter().any(|&p| p as usize >= patterns) {
            return Err("class index out of range".into());
        }
        for p in (0..patterns as u32).step_by((patterns / 64).max(1)) {
            let (c, t) = self.class_of(p);
            if symmetry_image(side, p, t) != self.canon[c] {
                return Err(format!("pattern {p} maps to the wrong class"));
            }
        }
        for c in (0..k).step_by((k / 8).max(1)) {
            if !self.class_matches_fresh_build(c) {
                return Err(format!("class {c} differs from a fresh computation"));
            }
        }
        Ok(())
    }

    /// True when the stored tables of class `c` equal a fresh computation.
    pub(crate) fn class_matches_fresh_build(&self, c: usize) -> bool {
        let (side, p) = (self.side, self.canon[c]);
        let (nv, nc) = ((side + 1) * (side + 1), side * side);
        let mut d = vec![0u16; nv * nv];
        let mut n = vec![0u8; nv * nv];
        for rule in LosRule::ALL {
            build::any_angle_table(side, p, rule, &mut d, &mut n);
            let r = rule.index();
            if d[..] != self.aa_dist[r][c * nv * nv..(c + 1) * nv * nv] {
                return false;
            }
        }
        let mut t = vec![0u8; nc * nc];
        build::octile_table(side, p, &mut t);
        let oct_ok = t[..] == self.oct[c * nc * nc..(c + 1) * nc * nc];
        build::tile_table(side, p, &mut t);
        oct_ok && t[..] == self.tile[c * nc * nc..(c + 1) * nc * nc] && self.nodes(Metric::Tile) == nc
    }
}

/// Checksum of the payload sections, in order.
fn checksum_sections(sections: &[Cow<'_, [u8]>]) -> u64 {
    sections.iter().fold(FORMAT_VERSION as u64, |h, s| (h ^ checksum(s)).wrapping_mul(K).rotate_left(17))
}

/// Little-endian bytes of a slice of integers (borrowed on little-endian machines).
fn le_bytes<T: bytemuck::Pod + LittleEndian>(v: &[T]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        Cow::Borrowed(bytemuck::cast_slice(v))
    } else {
        Cow::Owned(v.iter().flat_map(|x| x.le_vec()).collect())
    }
}

/// Converts integers read as little-endian bytes to native order (a no-op on little-endian).
fn from_le_in_place<T: LittleEndian>(v: &mut [T]) {
    if cfg!(target_endian = "big") {
        v.iter_mut().for_each(|x| *x = x.le_to_native());
    }
}

/// Byte-order conversions of the table integer types.
trait LittleEndian: Copy {
    fn le_vec(self) -> Vec<u8>;
    fn le_to_native(self) -> Self;
}

impl LittleEndian for u16 {
    fn le_vec(self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
    fn le_to_native(self) -> Self {
        u16::from_le(self)
    }
}

impl LittleEndian for u32 {
    fn le_vec(self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
    fn le_to_native(self) -> Self {
        u32::from_le(self)
    }
}

fn symmetry_image(side: usize, pattern: u32, t: usize) -> u32 {
    super::symmetry::apply(pattern, &super::symmetry::permutation(t, side))
}
