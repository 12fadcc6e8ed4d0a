//! The two rosbag2 storage formats: MCAP files and sqlite3 databases.

use super::BagError;
use std::path::{Path, PathBuf};

/// One recorded message: receive time and serialised bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct BagMessage {
    /// Recording time (nanoseconds since the epoch, as rosbag2 stores it).
    pub time_ns: u64,
    /// The message type (`nav_msgs/msg/OccupancyGrid`).
    pub type_name: String,
    /// The CDR bytes, encapsulation header included.
    pub data: Vec<u8>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BagError + '_ {
    move |source| BagError::Io { path: path.display().to_string(), source }
}

/// The storage files of a bag: the file itself, or the `.mcap` / `.db3` files of a directory in
/// name order (rosbag2 names split files `<bag>_0`, `<bag>_1`, ...).
fn storage_files(bag: &Path) -> Result<Vec<PathBuf>, BagError> {
    let meta = std::fs::metadata(bag).map_err(io(bag))?;
    if !meta.is_dir() {
        return Ok(vec![bag.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(bag)
        .map_err(io(bag))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("mcap" | "db3")))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(BagError::Layout(format!("{}: no .mcap or .db3 file in this directory", bag.display())));
    }
    Ok(files)
}

/// Every message recorded on `topic`, in recording order, from a bag directory or file.
///
/// Fails when a file is unreadable, is neither MCAP nor a rosbag2 sqlite3 database, or is
/// corrupted.
pub fn read_topic(bag: &Path, topic: &str) -> Result<Vec<BagMessage>, BagError> {
    let mut out = Vec::new();
    for file in storage_files(bag)? {
        match file.extension().and_then(|e| e.to_str()) {
            Some("mcap") => read_mcap(&file, topic, &mut out)?,
            Some("db3") => read_sqlite(&file, topic, &mut out)?,
            _ => return Err(BagError::Layout(format!("{}: unknown storage (expected .mcap or .db3)", file.display()))),
        }
    }
    out.sort_by_key(|m| m.time_ns);
    Ok(out)
}

fn read_mcap(file: &Path, topic: &str, out: &mut Vec<BagMessage>) -> Result<(), BagError> {
    let bytes = std::fs::read(file).map_err(io(file))?;
    let stream = mcap::MessageStream::new(&bytes).map_err(|e| BagError::Mcap(format!("{}: {e}", file.display())))?;
    for m in stream {
        let m = m.map_err(|e| BagError::Mcap(format!("{}: {e}", file.display())))?;
        if m.channel.topic != topic {
            continue;
        }
        if m.channel.message_encoding != "cdr" {
            return Err(BagError::Mcap(format!(
                "topic {topic} is encoded as {:?}, not cdr",
                m.channel.message_encoding
            )));
        }
        let type_name = m.channel.schema.as_ref().map(|s| s.name.clone()).unwrap_or_default();
        out.push(BagMessage { time_ns: m.log_time, type_name, data: m.data.into_owned() });
    }
    Ok(())
}

fn read_sqlite(file: &Path, topic: &str, out: &mut Vec<BagMessage>) -> Result<(), BagError> {
    let err = |e: rusqlite::Error| BagError::Sqlite(format!("{}: {e}", file.display()));
    let db = rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(err)?;
    let mut q = db
        .prepare(
            "SELECT m.timestamp, t.type, m.data FROM messages m JOIN topics t ON m.topic_id = t.id \
             WHERE t.name = ?1 ORDER BY m.timestamp",
        )
        .map_err(err)?;
    let rows = q
        .query_map([topic], |row| {
            let t: i64 = row.get(0)?;
            Ok(BagMessage { time_ns: t.max(0) as u64, type_name: row.get(1)?, data: row.get(2)? })
        })
        .map_err(err)?;
    for r in rows {
        out.push(r.map_err(err)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_garbage_files_are_errors() {
        let dir = std::env::temp_dir().join(format!("blockstar-bag-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(matches!(read_topic(&dir, "/map"), Err(BagError::Layout(_))));
        let mcap = dir.join("x.mcap");
        std::fs::write(&mcap, b"not an mcap file at all").unwrap();
        assert!(matches!(read_topic(&mcap, "/map"), Err(BagError::Mcap(_))));
        let db = dir.join("x.db3");
        std::fs::write(&db, vec![7u8; 4096]).unwrap();
        assert!(matches!(read_topic(&db, "/map"), Err(BagError::Sqlite(_))));
        assert!(matches!(read_topic(&dir.join("nope"), "/map"), Err(BagError::Io { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
