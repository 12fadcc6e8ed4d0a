//! A small reader of OMG CDR (XCDR1, plain and little/big endian), the serialisation rosbag2
//! stores: a 4-byte encapsulation header, then fields aligned to their size relative to the end
//! of that header. Every read checks bounds, and sequence lengths are checked against the bytes
//! left before anything is allocated, so corrupted input gives an error, never a panic.

use super::BagError;

/// Reads CDR fields in order from one serialised message.
#[derive(Debug)]
pub struct CdrReader<'a> {
    buf: &'a [u8],
    /// Position in `buf` (the body starts at 4, after the encapsulation header).
    pos: usize,
    little_endian: bool,
}

impl<'a> CdrReader<'a> {
    /// Starts reading `buf`, which begins with the encapsulation header.
    ///
    /// Fails on a short buffer or an encapsulation other than plain CDR (`00 00` big endian,
    /// `00 01` little endian).
    pub fn new(buf: &'a [u8]) -> Result<Self, BagError> {
        if buf.len() < 4 {
            return Err(BagError::Cdr(format!("{} bytes is too short for a CDR message", buf.len())));
        }
        let little_endian = match (buf[0], buf[1]) {
            (0, 0) => false,
            (0, 1) => true,
            (a, b) => return Err(BagError::Cdr(format!("unsupported CDR encapsulation {a:#04x} {b:#04x}"))),
        };
        Ok(Self { buf, pos: 4, little_endian })
    }

    fn take(&mut self, n: usize, align: usize, what: &str) -> Result<&'a [u8], BagError> {
        let body = self.pos - 4;
        let pad = (align - body % align) % align;
        let start = self.pos + pad;
        let end = start.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(|| {
            BagError::Cdr(format!("message ends inside {what} (offset {start}, {} bytes in all)", self.buf.len()))
        })?;
        self.pos = end;
        Ok(&self.buf[start..end])
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], BagError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, N, what)?);
        if self.little_endian != cfg!(target_endian = "little") {
            a.reverse();
        }
        Ok(a)
    }

    /// Reads a `uint32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, BagError> {
        Ok(u32::from_ne_bytes(self.array(what)?))
    }

    /// Reads an `int32`.
    pub fn i32(&mut self, what: &str) -> Result<i32, BagError> {
        Ok(i32::from_ne_bytes(self.array(what)?))
    }

    /// Reads a `float32`.
    pub fn f32(&mut self, what: &str) -> Result<f32, BagError> {
        Ok(f32::from_ne_bytes(self.array(what)?))
    }

    /// Reads a `float64`.
    pub fn f64(&mut self, what: &str) -> Result<f64, BagError> {
        Ok(f64::from_ne_bytes(self.array(what)?))
    }

    /// Reads a `string` (length with the terminating NUL, bytes, NUL).
    pub fn string(&mut self, what: &str) -> Result<String, BagError> {
        let n = self.u32(what)? as usize;
        let bytes = self.take(n, 1, what)?;
        let text = match bytes.split_last() {
            Some((0, s)) => s,
            Some(_) => return Err(BagError::Cdr(format!("{what} is not NUL-terminated"))),
            None => bytes,
        };
        String::from_utf8(text.to_vec()).map_err(|_| BagError::Cdr(format!("{what} is not UTF-8")))
    }

    /// Reads a sequence of `int8` (`int8[]`).
    pub fn i8_sequence(&mut self, what: &str) -> Result<Vec<i8>, BagError> {
        let n = self.u32(what)? as usize;
        Ok(self.take(n, 1, what)?.iter().map(|&b| b as i8).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_aligned_fields_in_both_byte_orders() {
        // int32 7, then a float64 at body offset 8 (4 bytes of padding), then "ab".
        let mut le = vec![0, 1, 0, 0];
        le.extend(7i32.to_le_bytes());
        le.extend([0; 4]);
        le.extend(1.5f64.to_le_bytes());
        le.extend(3u32.to_le_bytes());
        le.extend(b"ab\0");
        let mut r = CdrReader::new(&le).unwrap();
        assert_eq!(r.i32("a").unwrap(), 7);
        assert_eq!(r.f64("b").unwrap(), 1.5);
        assert_eq!(r.string("c").unwrap(), "ab");
        let mut be = vec![0, 0, 0, 0];
        be.extend(7i32.to_be_bytes());
        be.extend([0; 4]);
        be.extend(1.5f64.to_be_bytes());
        let mut r = CdrReader::new(&be).unwrap();
        assert_eq!(r.i32("a").unwrap(), 7);
        assert_eq!(r.f64("b").unwrap(), 1.5);
    }

    #[test]
    fn truncated_and_oversized_input_is_an_error() {
        assert!(CdrReader::new(&[0, 1]).is_err());
        assert!(CdrReader::new(&[9, 9, 0, 0]).is_err());
        let mut r = CdrReader::new(&[0, 1, 0, 0, 1, 0]).unwrap();
        assert!(r.u32("x").is_err());
        // A sequence claiming 4 billion elements in a 12-byte message.
        let mut r = CdrReader::new(&[0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]).unwrap();
        assert!(r.i8_sequence("data").is_err());
    }
}
