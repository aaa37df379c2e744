//! The bench's plot: a palette canvas with rectangles and bitmap-font text, drawn as one bar
//! pair (ours, cuBLASLt) per shape, and a minimal PNG encoder for it.
//!
//! The encoder writes an 8-bit indexed-colour PNG (PNG spec §11.2.2, colour type 3) whose
//! image data is a zlib stream (RFC 1950) of *stored* deflate blocks (RFC 1951 §3.2.4): no
//! compression, so it needs nothing but CRC-32 (for each chunk) and Adler-32 (for the zlib
//! stream). Every row uses filter type 0 (None). The output is valid for any viewer; it is
//! just not small (one byte per pixel plus 5 bytes per 64 KiB).

use super::font;

/// The palette every canvas uses; pixels are indices into it.
pub const PALETTE: [[u8; 3]; 7] = [
    [255, 255, 255], // WHITE
    [20, 20, 20],    // INK: text
    [225, 225, 225], // GRID
    [31, 119, 180],  // OURS: blue
    [255, 127, 14],  // CUBLAS: orange
    [110, 110, 110], // AXIS
    [214, 39, 40],   // FAIL: red
];
/// Background.
pub const WHITE: u8 = 0;
/// Text.
pub const INK: u8 = 1;
/// Grid lines.
pub const GRID: u8 = 2;
/// Our bars.
pub const OURS: u8 = 3;
/// cuBLASLt's bars.
pub const CUBLAS: u8 = 4;
/// Axes.
pub const AXIS: u8 = 5;
/// Failure marks.
pub const FAIL: u8 = 6;

/// An image of palette indices, row-major, top row first.
pub struct Canvas {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width * height` palette indices.
    pub pixels: Vec<u8>,
}

impl Canvas {
    /// A canvas filled with `color`.
    pub fn new(width: usize, height: usize, color: u8) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![color; width * height],
        }
    }

    /// Fills the rectangle at (`x`, `y`) of `w`×`h` pixels, clipped to the canvas.
    pub fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, color: u8) {
        let (x1, y1) = ((x + w).min(self.width), (y + h).min(self.height));
        for row in y.min(y1)..y1 {
            self.pixels[row * self.width + x.min(x1)..row * self.width + x1].fill(color);
        }
    }

    /// Draws `text` with its top-left corner at (`x`, `y`), each font pixel `scale`² pixels.
    pub fn text(&mut self, x: usize, y: usize, text: &str, scale: usize, color: u8) {
        for (i, c) in text.chars().enumerate() {
            let gx = x + i * font::ADVANCE * scale;
            for (r, bits) in font::glyph(c).iter().enumerate() {
                for col in 0..font::WIDTH {
                    if bits >> (font::WIDTH - 1 - col) & 1 == 1 {
                        self.rect(gx + col * scale, y + r * scale, scale, scale, color);
                    }
                }
            }
        }
    }

    /// Draws `text` centred horizontally on `cx`.
    pub fn text_centered(&mut self, cx: usize, y: usize, text: &str, scale: usize, color: u8) {
        let x = cx.saturating_sub(font::text_width(text, scale) / 2);
        self.text(x, y, text, scale, color);
    }

    /// The canvas as a PNG file with [`PALETTE`].
    pub fn encode(&self) -> Vec<u8> {
        encode_indexed(self.width, self.height, &PALETTE, &self.pixels)
    }
}

/// CRC-32 (ISO-HDLC, reflected polynomial 0xEDB88320) as PNG chunks use it (PNG spec §5.5).
pub fn crc32(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (n, e) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    !bytes.iter().fold(!0u32, |c, &b| {
        table[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8)
    })
}

/// Adler-32 of `bytes` (RFC 1950 §8.2), the zlib stream's trailer.
pub fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that cannot overflow `b` before the reduction (zlib's NMAX).
    for chunk in bytes.chunks(5552) {
        for &x in chunk {
            a += x as u32;
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// `data` as a zlib stream of stored (uncompressed) deflate blocks of at most 65 535 bytes.
pub fn zlib_stored(data: &[u8]) -> Vec<u8> {
    const MAX: usize = 0xFFFF;
    let blocks = data.len().div_ceil(MAX).max(1);
    let mut out = Vec::with_capacity(data.len() + 5 * blocks + 6);
    // CMF 0x78: deflate, 32 KiB window; FLG 0x01: no dictionary, (CMF·256 + FLG) % 31 == 0.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = data.chunks(MAX).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
    }
    while let Some(block) = chunks.next() {
        // BFINAL in bit 0, BTYPE = 00 (stored) in bits 1-2; the rest of the byte is padding.
        out.push(u8::from(chunks.peek().is_none()));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// An 8-bit indexed-colour PNG of `width`×`height` `pixels` (indices into `palette`).
pub fn encode_indexed(width: usize, height: usize, palette: &[[u8; 3]], pixels: &[u8]) -> Vec<u8> {
    assert_eq!(pixels.len(), width * height, "pixel count");
    let mut raw = Vec::with_capacity((width + 1) * height);
    for row in pixels.chunks(width.max(1)).take(height) {
        raw.push(0); // filter type 0: None
        raw.extend_from_slice(row);
    }
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&(width as u32).to_be_bytes());
    ihdr.extend_from_slice(&(height as u32).to_be_bytes());
    // Bit depth 8, colour type 3 (indexed), compression 0, filter 0, no interlace.
    ihdr.extend_from_slice(&[8, 3, 0, 0, 0]);
    let plte: Vec<u8> = palette.iter().flatten().copied().collect();
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"PLTE", &plte);
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// One shape's bar pair.
#[derive(Clone, Debug)]
pub struct BarPair {
    /// Under the bars, e.g. "4096x4096x4096".
    pub label: String,
    /// Our TFLOP/s; `None` draws a failure mark.
    pub ours: Option<f64>,
    /// cuBLASLt's TFLOP/s.
    pub cublas: Option<f64>,
    /// A second line under the label, e.g. the ratio.
    pub note: String,
}

/// A "nice" axis step (1, 2 or 5 × 10ⁿ) at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0 * p)
}

const LEFT: usize = 64;
const RIGHT: usize = 24;
const TOP: usize = 78;
const PLOT_H: usize = 400;
const BOTTOM: usize = 44;
const GROUP: usize = 112;
const BAR: usize = 38;

/// Draws the bar chart: a title, a legend, a y axis in TFLOP/s with grid lines, and per shape
/// our bar (blue) beside cuBLASLt's (orange) with the label and note underneath.
pub fn plot(title: &str, subtitle: &str, pairs: &[BarPair]) -> Canvas {
    let width = (LEFT + GROUP * pairs.len() + RIGHT)
        .max(font::text_width(title, 2) + 40)
        .max(font::text_width(subtitle, 1) + 40);
    let mut c = Canvas::new(width, TOP + PLOT_H + BOTTOM, WHITE);
    c.text(20, 10, title, 2, INK);
    c.text(20, 32, subtitle, 1, AXIS);
    c.rect(20, 48, 10, 10, OURS);
    c.text(36, 50, "tirx (best config)", 1, INK);
    c.rect(160, 48, 10, 10, CUBLAS);
    c.text(176, 50, "cuBLASLt", 1, INK);
    let top = pairs
        .iter()
        .flat_map(|p| [p.ours, p.cublas])
        .flatten()
        .fold(0.0f64, f64::max);
    let step = nice_step(top / 5.0);
    let ticks = ((top / step).ceil() as usize).max(1);
    let ymax = step * ticks as f64;
    let base = TOP + PLOT_H;
    // Enough decimals to tell the ticks apart: none for steps of 1 and up.
    let digits = (-step.log10().floor()).max(0.0) as usize;
    let height_of = |v: f64| ((v / ymax).clamp(0.0, 1.0) * PLOT_H as f64).round() as usize;
    for t in 0..=ticks {
        let v = step * t as f64;
        let y = base - height_of(v);
        c.rect(LEFT, y, width - LEFT - RIGHT, 1, GRID);
        let label = format!("{v:.digits$}");
        let x = (LEFT - 6).saturating_sub(font::text_width(&label, 1));
        c.text(x, y.saturating_sub(3), &label, 1, AXIS);
    }
    c.text(8, TOP - 14, "TFLOP/s", 1, AXIS);
    c.rect(LEFT, TOP, 1, PLOT_H + 1, AXIS);
    c.rect(LEFT, base, width - LEFT - RIGHT, 1, AXIS);
    for (i, p) in pairs.iter().enumerate() {
        let x0 = LEFT + i * GROUP + (GROUP - 2 * BAR - 4) / 2;
        for (j, (v, color)) in [(p.ours, OURS), (p.cublas, CUBLAS)].into_iter().enumerate() {
            let x = x0 + j * (BAR + 4);
            match v {
                Some(v) => {
                    let h = height_of(v);
                    c.rect(x, base - h, BAR, h, color);
                }
                None => c.text_centered(x + BAR / 2, base - 12, "X", 1, FAIL),
            }
        }
        let cx = LEFT + i * GROUP + GROUP / 2;
        c.text_centered(cx, base + 8, &p.label, 1, INK);
        let note_color = if p.ours.is_some() { AXIS } else { FAIL };
        c.text_centered(cx, base + 22, &p.note, 1, note_color);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CRC-32 bit by bit, without the table: an independent check of [`crc32`].
    fn crc32_bitwise(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in bytes {
            crc ^= b as u32;
            for _ in 0..8 {
                let mask = (crc & 1).wrapping_neg();
                crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
            }
        }
        !crc
    }

    /// Inflates a zlib stream made only of stored blocks; checks the header and Adler-32.
    fn inflate_stored(z: &[u8]) -> Vec<u8> {
        assert_eq!(z[0] & 0x0F, 8, "deflate");
        assert_eq!((z[0] as u32 * 256 + z[1] as u32) % 31, 0, "FCHECK");
        let mut out = Vec::new();
        let mut i = 2;
        loop {
            let head = z[i];
            assert_eq!(head >> 1 & 3, 0, "stored block");
            let len = u16::from_le_bytes([z[i + 1], z[i + 2]]);
            let nlen = u16::from_le_bytes([z[i + 3], z[i + 4]]);
            assert_eq!(len, !nlen, "NLEN");
            out.extend_from_slice(&z[i + 5..i + 5 + len as usize]);
            i += 5 + len as usize;
            if head & 1 == 1 {
                break;
            }
        }
        let adler = u32::from_be_bytes(z[i..i + 4].try_into().unwrap());
        // Adler-32 from its definition, without the blockwise reduction.
        let (mut a, mut b) = (1u64, 0u64);
        for &x in &out {
            a = (a + x as u64) % 65521;
            b = (b + a) % 65521;
        }
        assert_eq!(adler as u64, (b << 16) | a, "Adler-32");
        assert_eq!(i + 4, z.len(), "trailing bytes");
        out
    }

    /// Splits a PNG into (type, data) chunks, checking every CRC.
    fn chunks(png: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "signature");
        let mut out = Vec::new();
        let mut i = 8;
        while i < png.len() {
            let len = u32::from_be_bytes(png[i..i + 4].try_into().unwrap()) as usize;
            let body = &png[i + 4..i + 8 + len];
            let crc = u32::from_be_bytes(png[i + 8 + len..i + 12 + len].try_into().unwrap());
            assert_eq!(crc, crc32_bitwise(body), "CRC of {:?}", &body[..4]);
            out.push((body[..4].try_into().unwrap(), body[4..].to_vec()));
            i += 12 + len;
        }
        out
    }

    #[test]
    fn checksums_match_known_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        let long: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 300) as u8).collect();
        assert_eq!(crc32(&long), crc32_bitwise(&long));
        assert_eq!(inflate_stored(&zlib_stored(&long)), long);
        assert_eq!(inflate_stored(&zlib_stored(&[])), Vec::<u8>::new());
    }

    #[test]
    fn png_is_valid_and_decodes_back_to_its_pixels() {
        // Wider than one stored block per row set, so several deflate blocks are needed.
        let (w, h) = (301, 250);
        let pixels: Vec<u8> = (0..w * h).map(|i| ((i / 7 + i % 13) % 7) as u8).collect();
        let png = encode_indexed(w, h, &PALETTE, &pixels);
        let chunks = chunks(&png);
        let kinds: Vec<&[u8]> = chunks.iter().map(|(k, _)| &k[..]).collect();
        assert_eq!(kinds, [&b"IHDR"[..], b"PLTE", b"IDAT", b"IEND"]);
        let ihdr = &chunks[0].1;
        assert_eq!(u32::from_be_bytes(ihdr[0..4].try_into().unwrap()), w as u32);
        assert_eq!(u32::from_be_bytes(ihdr[4..8].try_into().unwrap()), h as u32);
        assert_eq!(&ihdr[8..], &[8, 3, 0, 0, 0], "depth, colour type, methods");
        assert_eq!(chunks[1].1.len(), 3 * PALETTE.len());
        let raw = inflate_stored(&chunks[2].1);
        assert!(raw.len() > 0xFFFF, "several stored blocks");
        assert_eq!(raw.len(), (w + 1) * h);
        let mut got = Vec::new();
        for row in raw.chunks(w + 1) {
            assert_eq!(row[0], 0, "filter None");
            got.extend_from_slice(&row[1..]);
        }
        assert_eq!(got, pixels);
    }

    #[test]
    fn text_and_rectangles_are_clipped_and_drawn() {
        let mut c = Canvas::new(20, 10, WHITE);
        c.rect(15, 5, 100, 100, FAIL);
        assert_eq!(c.pixels.iter().filter(|&&p| p == FAIL).count(), 5 * 5);
        let mut c = Canvas::new(12, 7, WHITE);
        c.text(0, 0, "1", 1, INK);
        // '1' has 10 lit pixels: 1+2+1+1+1+1+3.
        assert_eq!(c.pixels.iter().filter(|&&p| p == INK).count(), 10);
        c.text(30, 30, "off the canvas", 3, INK);
    }

    #[test]
    fn plot_draws_both_bars_and_a_nice_axis() {
        assert_eq!(nice_step(130.0), 200.0);
        assert_eq!(nice_step(100.0), 100.0);
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(0.0), 1.0);
        let pairs = [
            BarPair {
                label: "1024x1024x1024".into(),
                ours: Some(300.0),
                cublas: Some(400.0),
                note: "0.75x".into(),
            },
            BarPair {
                label: "4095x4097x4096".into(),
                ours: None,
                cublas: Some(600.0),
                note: "failed".into(),
            },
        ];
        let c = plot("tirx vs cuBLASLt", "bf16", &pairs);
        assert_eq!(c.pixels.len(), c.width * c.height);
        let count = |k| c.pixels.iter().filter(|&&p| p == k).count();
        assert!(count(OURS) > BAR * 100, "our bar");
        assert!(count(CUBLAS) > 2 * BAR * 100, "cuBLAS bars");
        assert!(count(FAIL) > 0, "failure mark");
        chunks(&c.encode());
    }
}
