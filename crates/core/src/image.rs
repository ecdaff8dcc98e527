//! A plain RGB8 image buffer: what every environment renders into.

use serde::{Deserialize, Serialize};

/// Row-major RGB8 pixels, 3 bytes per pixel, no padding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rgb8Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 3` bytes, row-major.
    pub data: Vec<u8>,
}

impl Rgb8Image {
    /// A black image.
    pub fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            data: vec![0; (width * height * 3) as usize],
        }
    }

    /// Fill the whole image with one colour.
    pub fn fill(&mut self, rgb: [u8; 3]) {
        for px in self.data.chunks_exact_mut(3) {
            px.copy_from_slice(&rgb);
        }
    }

    /// The pixel at `(x, y)`; panics when out of bounds (a programming error).
    #[inline]
    pub fn get(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.data[i], self.data[i + 1], self.data[i + 2]]
    }

    /// Set the pixel at `(x, y)` if it lies inside the image.
    #[inline]
    pub fn put(&mut self, x: i32, y: i32, rgb: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            let i = ((y as u32 * self.width + x as u32) * 3) as usize;
            self.data[i..i + 3].copy_from_slice(&rgb);
        }
    }

    /// Fill the axis-aligned rectangle `[x, x+w) x [y, y+h)`, clipped to the image.
    pub fn fill_rect(&mut self, x: i32, y: i32, w: i32, h: i32, rgb: [u8; 3]) {
        let x0 = x.max(0) as u32;
        let y0 = y.max(0) as u32;
        let x1 = (x + w).clamp(0, self.width as i32) as u32;
        let y1 = (y + h).clamp(0, self.height as i32) as u32;
        for yy in y0..y1 {
            let row = (yy * self.width) as usize * 3;
            for xx in x0..x1 {
                let i = row + xx as usize * 3;
                self.data[i..i + 3].copy_from_slice(&rgb);
            }
        }
    }
}
