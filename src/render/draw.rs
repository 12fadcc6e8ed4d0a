//! Drawing primitives on an [`Image`], in continuous pixel coordinates.
//!
//! `(0, 0)` is the top-left corner of the top-left pixel; pixel `(i, j)` covers
//! `[i, i + 1] x [j, j + 1]`, so its centre is `(i + 0.5, j + 0.5)`, and `y` grows downwards.
//! A shape covers a pixel when it contains the pixel's centre (no anti-aliasing: colours stay
//! exact, so tests and readers can find them). Everything outside the image is clipped; NaN or
//! infinite coordinates draw nothing. Angles are in radians, counter-clockwise from the
//! picture's `+x` (east) with north up, like a yaw on a map drawn north up.

use super::{Image, Rgb};

/// A point in pixel coordinates (see the module documentation).
pub type Px = (f64, f64);

/// Height (pixels) of text drawn at size `k`: the 8 x 8 glyphs scaled `k` times.
pub const fn text_height(k: u32) -> u32 {
    8 * k
}

/// Width (pixels) of `text` drawn at size `k` (every character is 8 `k` pixels wide).
pub fn text_width(text: &str, k: u32) -> u32 {
    text.chars().count() as u32 * 8 * k
}

/// Draws `text` with its top-left corner at pixel (`x`, `y`), each glyph of the public-domain
/// 8 x 8 font (`font8x8`) scaled `k` times (`k` >= 1). Characters outside ASCII are drawn as
/// `?`. Only the glyphs' set pixels are painted (the background shows through). Returns the
/// width drawn, [`text_width`].
pub fn text(img: &mut Image, x: i64, y: i64, text: &str, k: u32, c: Rgb) -> u32 {
    let k = k.max(1) as i64;
    for (i, ch) in text.chars().enumerate() {
        let code = if ch.is_ascii() { ch as usize } else { '?' as usize };
        let glyph = font8x8::legacy::BASIC_LEGACY[code];
        let gx = x + i as i64 * 8 * k;
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                // Bit 0 is the leftmost pixel of the row.
                if bits & (1 << col) != 0 {
                    fill_rect(img, gx + col * k, y + row as i64 * k, k, k, c);
                }
            }
        }
    }
    text_width(text, k as u32)
}

/// Fills the `w` x `h` pixels whose top-left pixel is (`x`, `y`).
pub fn fill_rect(img: &mut Image, x: i64, y: i64, w: i64, h: i64, c: Rgb) {
    for py in y.max(0)..(y + h).min(img.height as i64) {
        for px in x.max(0)..(x + w).min(img.width as i64) {
            img.put(px, py, c);
        }
    }
}

/// Calls `f` for every pixel of the image whose centre lies in the box `lo..=hi` (pixel
/// coordinates), clipped to the image.
fn for_pixels_in(img: &Image, lo: Px, hi: Px, mut f: impl FnMut(i64, i64, Px)) {
    if !(lo.0.is_finite() && lo.1.is_finite() && hi.0.is_finite() && hi.1.is_finite()) {
        return;
    }
    let x0 = (lo.0 - 0.5).ceil().max(0.0) as i64;
    let y0 = (lo.1 - 0.5).ceil().max(0.0) as i64;
    let x1 = (hi.0 - 0.5).floor().min(img.width as f64 - 1.0) as i64;
    let y1 = (hi.1 - 0.5).floor().min(img.height as f64 - 1.0) as i64;
    for py in y0..=y1 {
        for px in x0..=x1 {
            f(px, py, (px as f64 + 0.5, py as f64 + 0.5));
        }
    }
}

fn dist_to_segment(p: Px, a: Px, b: Px) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 { (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    let (qx, qy) = (a.0 + t * dx, a.1 + t * dy);
    ((p.0 - qx).powi(2) + (p.1 - qy).powi(2)).sqrt()
}

/// Draws the segment `a`-`b` `width` pixels wide with round ends: every pixel whose centre is
/// within `width / 2` of the segment.
pub fn thick_segment(img: &mut Image, a: Px, b: Px, width: f64, c: Rgb) {
    let r = width / 2.0;
    let lo = (a.0.min(b.0) - r, a.1.min(b.1) - r);
    let hi = (a.0.max(b.0) + r, a.1.max(b.1) + r);
    let mut hits = Vec::new();
    for_pixels_in(img, lo, hi, |x, y, p| {
        if dist_to_segment(p, a, b) <= r {
            hits.push((x, y));
        }
    });
    for (x, y) in hits {
        img.put(x, y, c);
    }
}

/// Draws the polyline through `pts`, `width` pixels wide with round joins; with
/// `dash = Some((on, off))` only alternate stretches of `on` and `off` pixels of arc length
/// (starting with `on` at the first point) are drawn.
pub fn polyline(img: &mut Image, pts: &[Px], width: f64, c: Rgb, dash: Option<(f64, f64)>) {
    if let [p] = pts {
        thick_segment(img, *p, *p, width, c);
    }
    let Some((on, off)) = dash.filter(|&(on, off)| on > 0.0 && off >= 0.0 && on.is_finite() && off.is_finite()) else {
        for w in pts.windows(2) {
            thick_segment(img, w[0], w[1], width, c);
        }
        return;
    };
    let period = on + off;
    let mut s0 = 0.0; // arc length at the segment's start
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        if !len.is_finite() {
            continue;
        }
        let at = |s: f64| {
            let t = ((s - s0) / len).clamp(0.0, 1.0);
            (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1))
        };
        // Dashes overlapping the part of [s0, s0 + len] near the image (so a segment running
        // far off the image costs no more than one across it).
        let Some((t0, t1)) = clip(a, b, width, img) else {
            s0 += len;
            continue;
        };
        let (lo, hi) = (s0 + t0 * len, s0 + t1 * len);
        let mut k = (lo / period).floor() - 1.0;
        while k * period < hi {
            let (d0, d1) = ((k * period).max(lo), (k * period + on).min(hi));
            if d1 >= d0 && len > 0.0 {
                thick_segment(img, at(d0), at(d1), width, c);
            }
            k += 1.0;
        }
        s0 += len;
    }
}

/// The parameter range `t0..=t1` (within 0..=1) of the segment `a`-`b` that lies within `width`
/// pixels of the image; `None` when it misses.
fn clip(a: Px, b: Px, width: f64, img: &Image) -> Option<(f64, f64)> {
    let (lo, hi) = (-width - 1.0, (f64::from(img.width) + width + 1.0, f64::from(img.height) + width + 1.0));
    clip_to_rect(a, b, (lo, lo), hi)
}

/// The parameter range `t0..=t1` (within 0..=1) of the segment `a`-`b` that lies in the closed
/// rectangle `min`..`max` (Liang-Barsky clipping); `None` when it misses.
pub(super) fn clip_to_rect(a: Px, b: Px, min: Px, max: Px) -> Option<(f64, f64)> {
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, d, min, max) in [(a.0, b.0 - a.0, min.0, max.0), (a.1, b.1 - a.1, min.1, max.1)] {
        if d == 0.0 {
            if p < min || p > max {
                return None;
            }
            continue;
        }
        let (u, v) = ((min - p) / d, (max - p) / d);
        t0 = t0.max(u.min(v));
        t1 = t1.min(u.max(v));
    }
    (t0 <= t1).then_some((t0, t1))
}

/// Draws the outline of the circle of `radius` pixels around `centre`, `width` pixels wide:
/// every pixel whose centre is within `width / 2` of the circle.
pub fn ring(img: &mut Image, centre: Px, radius: f64, width: f64, c: Rgb) {
    let r = radius + width / 2.0;
    let mut hits = Vec::new();
    for_pixels_in(img, (centre.0 - r, centre.1 - r), (centre.0 + r, centre.1 + r), |x, y, p| {
        let d = ((p.0 - centre.0).powi(2) + (p.1 - centre.1).powi(2)).sqrt();
        if (d - radius).abs() <= width / 2.0 {
            hits.push((x, y));
        }
    });
    for (x, y) in hits {
        img.put(x, y, c);
    }
}

/// Mixes `c` with weight `alpha` (0..=1) into every pixel whose centre lies in the disc of
/// `radius` pixels around `centre`.
pub fn blend_disc(img: &mut Image, centre: Px, radius: f64, c: Rgb, alpha: f64) {
    let mut hits = Vec::new();
    let r = radius;
    for_pixels_in(img, (centre.0 - r, centre.1 - r), (centre.0 + r, centre.1 + r), |x, y, p| {
        if (p.0 - centre.0).powi(2) + (p.1 - centre.1).powi(2) <= r * r {
            hits.push((x, y));
        }
    });
    for (x, y) in hits {
        img.blend(x, y, c, alpha);
    }
}

/// True when `p` lies inside the polygon `poly` (even-odd rule).
fn inside(p: Px, poly: &[Px]) -> bool {
    let mut odd = false;
    let mut j = poly.len().wrapping_sub(1);
    for (i, &a) in poly.iter().enumerate() {
        let b = poly[j];
        if (a.1 > p.1) != (b.1 > p.1) && p.0 < a.0 + (p.1 - a.1) * (b.0 - a.0) / (b.1 - a.1) {
            odd = !odd;
        }
        j = i;
    }
    odd
}

/// Mixes `c` with weight `alpha` (0..=1; 1 paints `c`) into every pixel whose centre lies inside
/// the polygon `poly` (even-odd rule; fewer than 3 corners draw nothing).
pub fn fill_polygon(img: &mut Image, poly: &[Px], c: Rgb, alpha: f64) {
    if poly.len() < 3 {
        return;
    }
    let lo = poly.iter().fold((f64::INFINITY, f64::INFINITY), |m, p| (m.0.min(p.0), m.1.min(p.1)));
    let hi = poly.iter().fold((f64::NEG_INFINITY, f64::NEG_INFINITY), |m, p| (m.0.max(p.0), m.1.max(p.1)));
    let mut hits = Vec::new();
    for_pixels_in(img, lo, hi, |x, y, p| {
        if inside(p, poly) {
            hits.push((x, y));
        }
    });
    for (x, y) in hits {
        img.blend(x, y, c, alpha);
    }
}

/// The unit vector (pixels) of heading `yaw` (radians, counter-clockwise from east, north up).
pub fn heading_vector(yaw: f64) -> Px {
    (yaw.cos(), -yaw.sin())
}

/// Draws an arrow from `tail` along heading `yaw` (see the module documentation), `length`
/// pixels from tail to tip: a shaft `width` pixels wide and a filled head `3 width + 4` pixels
/// long (at most half the length) and as wide.
pub fn arrow(img: &mut Image, tail: Px, yaw: f64, length: f64, width: f64, c: Rgb) {
    let (ux, uy) = heading_vector(yaw);
    let head = (3.0 * width + 4.0).min(length / 2.0);
    let tip = (tail.0 + ux * length, tail.1 + uy * length);
    let base = (tip.0 - ux * head, tip.1 - uy * head);
    thick_segment(img, tail, base, width, c);
    let (nx, ny) = (-uy * head / 2.0, ux * head / 2.0);
    fill_polygon(img, &[tip, (base.0 + nx, base.1 + ny), (base.0 - nx, base.1 - ny)], c, 1.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Rgb = [255, 255, 255];
    const INK: Rgb = [200, 0, 0];

    fn blank(w: u32, h: u32) -> Image {
        Image::new(w, h, W)
    }

    fn inked(img: &Image) -> Vec<(u32, u32)> {
        (0..img.height)
            .flat_map(|y| (0..img.width).map(move |x| (x, y)))
            .filter(|&(x, y)| img.pixel(x, y) == Some(INK))
            .collect()
    }

    #[test]
    fn a_thick_line_covers_its_width_and_not_beyond() {
        for width in [1.0, 3.0, 5.0, 8.0] {
            let mut img = blank(60, 40);
            // Horizontal, along the centres of row 20, from column 10 to column 50.
            thick_segment(&mut img, (10.5, 20.5), (50.5, 20.5), width, INK);
            let half = (width / 2.0) as u32; // rows within width / 2 of row 20's centre
            let column: Vec<u32> = (0..40).filter(|&y| img.pixel(30, y) == Some(INK)).collect();
            let expected: Vec<u32> = (20 - half..=20 + half).collect();
            assert_eq!(column, expected, "width {width}");
            // Round ends reach width / 2 past the end points and no further.
            assert_eq!(img.pixel(50 + half, 20), Some(INK), "width {width}");
            assert_eq!(img.pixel(51 + half, 20), Some(W), "width {width}");
            assert_eq!(img.pixel(9 - half, 20), Some(W), "width {width}");
        }
        // Diagonal: every inked pixel lies within width / 2 of the segment, and the pixels
        // across the middle along the normal are inked up to that distance.
        let mut img = blank(60, 60);
        let (a, b) = ((10.0, 50.0), (50.0, 10.0));
        thick_segment(&mut img, a, b, 6.0, INK);
        for (x, y) in inked(&img) {
            assert!(dist_to_segment((x as f64 + 0.5, y as f64 + 0.5), a, b) <= 3.0);
        }
        let across = (0..60).filter(|&i| img.pixel(i, i) == Some(INK)).count();
        // Along the diagonal x = y the normal distance grows by sqrt(2) per pixel: |x + 0.5 - 30|
        // * sqrt(2) <= 3 holds for x in 28..=31.
        assert_eq!(across, 4);
    }

    #[test]
    fn dashes_leave_gaps() {
        let mut img = blank(100, 10);
        polyline(&mut img, &[(0.5, 5.5), (60.5, 5.5), (99.5, 5.5)], 1.0, INK, Some((10.0, 10.0)));
        let row: String = (0..100).map(|x| if img.pixel(x, 5) == Some(INK) { '#' } else { '.' }).collect();
        assert_eq!(&row[..40], "###########.........###########.........", "{row}");
        assert_eq!(&row[80..], "###########.........", "{row}");
    }

    #[test]
    fn text_draws_the_font_glyphs_scaled() {
        let mut img = blank(40, 20);
        assert_eq!(text(&mut img, 2, 1, "T", 2, INK), 16);
        let glyph = font8x8::legacy::BASIC_LEGACY['T' as usize];
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                let set = bits & (1 << col) != 0;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let px = img.pixel(2 + 2 * col + dx, 1 + 2 * row as u32 + dy);
                    assert_eq!(px == Some(INK), set, "row {row} col {col}");
                }
            }
        }
        assert!(inked(&img).len() > 20, "a T has ink");
        assert!(inked(&img).iter().all(|&(x, y)| (2..18).contains(&x) && (1..17).contains(&y)));
        assert_eq!(text_width("héllo", 2), 80);
    }

    #[test]
    fn arrows_point_along_the_heading() {
        for yaw in [0.0, 0.7, std::f64::consts::FRAC_PI_2, 2.5, -2.0, -0.3] {
            let mut img = blank(101, 101);
            let tail = (50.5, 50.5);
            arrow(&mut img, tail, yaw, 40.0, 3.0, INK);
            let (ux, uy) = heading_vector(yaw);
            // The tip region is inked, the opposite side is not.
            let near_tip = (tail.0 + ux * 38.0, tail.1 + uy * 38.0);
            assert_eq!(img.pixel(near_tip.0 as u32, near_tip.1 as u32), Some(INK), "yaw {yaw}");
            let behind = (tail.0 - ux * 10.0, tail.1 - uy * 10.0);
            assert_eq!(img.pixel(behind.0 as u32, behind.1 as u32), Some(W), "yaw {yaw}");
            assert_eq!(img.pixel((tail.0 + ux * 45.0) as u32, (tail.1 + uy * 45.0) as u32), Some(W), "yaw {yaw}");
            // The ink's centroid lies on the heading ray, about half-way (the head is heavier).
            let pts = inked(&img);
            let n = pts.len() as f64;
            let cx = pts.iter().map(|p| p.0 as f64 + 0.5).sum::<f64>() / n - tail.0;
            let cy = pts.iter().map(|p| p.1 as f64 + 0.5).sum::<f64>() / n - tail.1;
            let angle = (-cy).atan2(cx);
            let err = crate::geometry::normalize_angle(angle - yaw).abs();
            assert!(err < 0.05, "yaw {yaw}: ink centroid at angle {angle}");
            assert!((cx * ux + cy * uy) > 15.0, "yaw {yaw}");
        }
        // North up: yaw pi/2 points to smaller rows.
        assert!(heading_vector(std::f64::consts::FRAC_PI_2).1 < -0.99);
    }

    #[test]
    fn rings_discs_and_polygons_stay_in_their_bounds() {
        let mut img = blank(50, 50);
        ring(&mut img, (25.0, 25.0), 10.0, 2.0, INK);
        assert_eq!(img.pixel(34, 24), Some(INK));
        assert_eq!(img.pixel(25, 25), Some(W), "a ring is hollow");
        for (x, y) in inked(&img) {
            let d = ((x as f64 + 0.5 - 25.0).powi(2) + (y as f64 + 0.5 - 25.0).powi(2)).sqrt();
            assert!((9.0..=11.0).contains(&d));
        }
        let mut img = blank(50, 50);
        blend_disc(&mut img, (25.0, 25.0), 5.0, [0, 0, 0], 0.5);
        assert_eq!(img.pixel(25, 25), Some([128, 128, 128]));
        assert_eq!(img.pixel(31, 25), Some(W));
        fill_polygon(&mut img, &[(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)], INK, 1.0);
        assert_eq!(img.pixel(1, 1), Some(INK));
        assert_eq!(img.pixel(8, 8), Some(W));
        // Nothing drawn for non-finite input, and no panic off the image.
        thick_segment(&mut img, (f64::NAN, 0.0), (1.0, 1.0), 3.0, INK);
        thick_segment(&mut img, (-1e9, -1e9), (-1e9 + 1.0, -1e9), 3.0, INK);
        arrow(&mut img, (1e6, 1e6), 1.0, 10.0, 2.0, INK);
    }
}
