//! A strict reader for binary and ASCII greymaps (PGM `P5` / `P2`), the format `map_saver` writes.

use crate::error::MapError;

/// A decoded greyscale image: `pixels[row * width + col]`, row 0 at the top, values
/// `0..=maxval`.
pub(crate) struct GrayImage {
    pub width: usize,
    pub height: usize,
    pub maxval: u16,
    pub pixels: Vec<u16>,
}

fn fmt(msg: impl Into<String>) -> MapError {
    MapError::Format(msg.into())
}

/// Splits the header into whitespace-separated tokens, skipping `#` comments; returns the tokens
/// and the offset just past the single whitespace byte that ends the last one.
fn header_tokens(bytes: &[u8], count: usize) -> Result<(Vec<u64>, usize), MapError> {
    let mut pos = 2; // past the magic
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        match bytes.get(pos) {
            None => return Err(fmt("PGM header is truncated")),
            Some(b'#') => {
                while bytes.get(pos).is_some_and(|&b| b != b'\n') {
                    pos += 1;
                }
            }
            Some(b) if b.is_ascii_whitespace() => pos += 1,
            Some(b) if b.is_ascii_digit() => {
                let start = pos;
                while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
                    pos += 1;
                }
                let text = std::str::from_utf8(&bytes[start..pos]).map_err(|_| fmt("PGM header is not ASCII"))?;
                let v: u64 = text.parse().map_err(|_| fmt(format!("PGM header number {text:?} is out of range")))?;
                out.push(v);
            }
            Some(b) => return Err(fmt(format!("unexpected byte 0x{b:02x} in PGM header"))),
        }
    }
    // Exactly one whitespace byte separates the header from binary data.
    match bytes.get(pos) {
        Some(b) if b.is_ascii_whitespace() => Ok((out, pos + 1)),
        None => Ok((out, pos)),
        Some(_) => Err(fmt("PGM header is not followed by whitespace")),
    }
}

/// Decodes a PGM file of at most `max_pixels` pixels (checked before any allocation).
pub(crate) fn decode_pgm(bytes: &[u8], max_pixels: usize) -> Result<GrayImage, MapError> {
    let binary = match bytes.get(..2) {
        Some(b"P5") => true,
        Some(b"P2") => false,
        _ => return Err(fmt("not a PGM file (expected magic P5 or P2)")),
    };
    let (h, data_start) = header_tokens(bytes, 3)?;
    let (width, height, maxval) = (h[0] as usize, h[1] as usize, h[2]);
    if width == 0 || height == 0 || width > super::MAX_IMAGE_SIDE || height > super::MAX_IMAGE_SIDE {
        return Err(fmt(format!("PGM size {width}x{height} is out of range")));
    }
    if maxval == 0 || maxval > 65535 {
        return Err(fmt(format!("PGM maxval {maxval} is out of range 1..=65535")));
    }
    let n = width * height;
    if n > max_pixels {
        return Err(MapError::TooLarge { cells: n, cap: max_pixels });
    }
    let pixels: Vec<u16> = if binary {
        let bpp = if maxval > 255 { 2 } else { 1 };
        let data = &bytes[data_start..];
        if data.len() < n * bpp {
            return Err(fmt(format!("PGM pixel data is truncated: {} bytes, expected {}", data.len(), n * bpp)));
        }
        if bpp == 1 {
            data[..n].iter().map(|&b| u16::from(b)).collect()
        } else {
            data[..2 * n].chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect()
        }
    } else {
        let text = std::str::from_utf8(&bytes[data_start..]).map_err(|_| fmt("ASCII PGM data is not text"))?;
        let mut px = Vec::with_capacity(n.min(text.len() / 2 + 1));
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            for tok in line.split_ascii_whitespace() {
                if px.len() == n {
                    break;
                }
                let v: u64 = tok.parse().map_err(|_| fmt(format!("bad ASCII PGM value {tok:?}")))?;
                px.push(v.min(u64::from(u16::MAX)) as u16);
            }
        }
        if px.len() < n {
            return Err(fmt(format!("ASCII PGM has {} values, expected {n}", px.len())));
        }
        px
    };
    if pixels.iter().any(|&p| u64::from(p) > maxval) {
        return Err(fmt("PGM pixel value exceeds maxval"));
    }
    Ok(GrayImage { width, height, maxval: maxval as u16, pixels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_binary_and_ascii_with_comments() {
        let mut b = b"P5\n# made by hand\n3 2\n255\n".to_vec();
        b.extend_from_slice(&[0, 128, 255, 10, 20, 30]);
        let img = decode_pgm(&b, 100).unwrap();
        assert_eq!((img.width, img.height, img.maxval), (3, 2, 255));
        assert_eq!(img.pixels, vec![0, 128, 255, 10, 20, 30]);
        let a = decode_pgm(b"P2 2 2 15\n0 15 # c\n7 3\n", 100).unwrap();
        assert_eq!(a.pixels, vec![0, 15, 7, 3]);
    }

    #[test]
    fn rejects_malformed() {
        assert!(decode_pgm(b"P6\n1 1\n255\n\0", 100).is_err());
        assert!(decode_pgm(b"P5\n3 2\n255\n\0\0", 100).is_err());
        assert!(decode_pgm(b"P5\n0 2\n255\n", 100).is_err());
        assert!(decode_pgm(b"P5\n99999999999 99999999999\n255\n", 100).is_err());
        assert!(decode_pgm(b"P5\n1 1\n0\n\0", 100).is_err());
        assert!(decode_pgm(b"P2 1 1 5\n9\n", 100).is_err());
        assert!(decode_pgm(b"P5", 100).is_err());
    }
}
