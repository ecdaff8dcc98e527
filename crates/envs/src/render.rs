//! Glyph grids and the pixel renderer shared by every family.
//!
//! Every game draws its state into a [`Grid`] of semantic cells (a base colour, a foreground
//! shape and colour, and the character the text observation uses). One renderer turns the
//! grid into pixels at whatever canvas the suite was configured with: the cell size is
//! `canvas / max(width, height)`, so objects scale with the canvas and a 32x32 frame is
//! rendered directly (no render-then-resize). The same grid also yields the text observation,
//! so pixels and text can never disagree.

use envdist_core::Rgb8Image;

/// Semantic colours; a [`Theme`] maps them to RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Col {
    /// Canvas outside the grid.
    #[default]
    Bg,
    /// Walkable floor.
    Floor,
    /// Walls.
    Wall,
    /// The agent / cursor.
    Agent,
    /// Goal cells.
    Goal,
    /// Red.
    Red,
    /// Blue.
    Blue,
    /// Green.
    Green,
    /// Yellow.
    Yellow,
    /// Purple.
    Purple,
    /// Orange (also lava).
    Orange,
    /// Cyan.
    Cyan,
    /// Pink.
    Pink,
    /// White.
    White,
    /// Mid grey.
    Grey,
    /// Near black.
    Dark,
    /// A value on a ten-step heat ramp (numbers, tile values), 0..=11.
    Num(u8),
}

/// The named object colours (for families that pick colours by index).
pub const OBJECT_COLS: [Col; 8] = [
    Col::Red,
    Col::Blue,
    Col::Green,
    Col::Yellow,
    Col::Purple,
    Col::Orange,
    Col::Cyan,
    Col::Pink,
];

/// English names of [`OBJECT_COLS`], in the same order.
pub const OBJECT_COL_NAMES: [&str; 8] = [
    "red", "blue", "green", "yellow", "purple", "orange", "cyan", "pink",
];

/// Foreground shapes drawn inside a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Nothing on top of the base colour.
    None,
    /// A square inset by a small margin.
    Full,
    /// A disc.
    Circle,
    /// A diamond.
    Diamond,
    /// A small centred square.
    Small,
    /// A ring.
    Ring,
    /// A plus sign.
    Cross,
    /// A horizontal bar.
    Bar,
    /// A die face showing 1..=6 dark pips on the foreground colour.
    Die(u8),
    /// A pipe piece: arms from the centre to the middle of each open side, the sides a bit
    /// set (1 up, 2 right, 4 down, 8 left; higher bits ignored). Arms reach the cell's edge,
    /// so the pieces of neighbouring cells join.
    Pipe(u8),
}

impl Shape {
    const COUNT: usize = 8;
    /// Masks after the plain shapes: the die face, then one per pipe piece.
    const DIE_SLOT: usize = Self::COUNT;
    const PIPE_SLOT: usize = Self::DIE_SLOT + 1;
    fn slot(self) -> usize {
        match self {
            Shape::None => 0,
            Shape::Full => 1,
            Shape::Circle => 2,
            Shape::Diamond => 3,
            Shape::Small => 4,
            Shape::Ring => 5,
            Shape::Cross => 6,
            Shape::Bar => 7,
            Shape::Die(_) => Self::DIE_SLOT,
            Shape::Pipe(sides) => Self::PIPE_SLOT + usize::from(sides & 15),
        }
    }
}

/// One cell of a [`Grid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// Colour of the whole cell.
    pub base: Col,
    /// Foreground shape.
    pub shape: Shape,
    /// Foreground colour.
    pub fg: Col,
    /// Character of this cell in the text observation.
    pub ch: u8,
}

impl Cell {
    /// Plain floor.
    pub const FLOOR: Cell = Cell {
        base: Col::Floor,
        shape: Shape::None,
        fg: Col::Floor,
        ch: b'.',
    };
    /// A wall.
    pub const WALL: Cell = Cell {
        base: Col::Wall,
        shape: Shape::None,
        fg: Col::Wall,
        ch: b'#',
    };
    /// A foreground object on floor.
    pub const fn obj(shape: Shape, fg: Col, ch: u8) -> Cell {
        Cell {
            base: Col::Floor,
            shape,
            fg,
            ch,
        }
    }
    /// A cell filled with one colour.
    pub const fn solid(base: Col, ch: u8) -> Cell {
        Cell {
            base,
            shape: Shape::None,
            fg: base,
            ch,
        }
    }
}

/// A `w x h` grid of cells that a game draws into.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Width in cells.
    pub w: usize,
    /// Height in cells.
    pub h: usize,
    /// Row-major cells.
    pub cells: Vec<Cell>,
}

impl Grid {
    /// An empty 1x1 grid (resized by [`Grid::reset`]).
    pub fn new() -> Self {
        Self {
            w: 1,
            h: 1,
            cells: vec![Cell::FLOOR],
        }
    }
    /// Resize to `w x h` and fill with `cell`, reusing the allocation.
    pub fn reset(&mut self, w: usize, h: usize, cell: Cell) {
        self.w = w;
        self.h = h;
        self.cells.clear();
        self.cells.resize(w * h, cell);
    }
    /// Set the cell at `(x, y)` (ignored when outside).
    #[inline]
    pub fn set(&mut self, x: usize, y: usize, cell: Cell) {
        if x < self.w && y < self.h {
            self.cells[y * self.w + x] = cell;
        }
    }
    /// The cell at `(x, y)`.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> Cell {
        self.cells[y * self.w + x]
    }
    /// The grid as text: one line per row, one character per cell.
    pub fn text(&self, out: &mut String) {
        for y in 0..self.h {
            for x in 0..self.w {
                out.push(self.cells[y * self.w + x].ch as char);
            }
            if y + 1 < self.h {
                out.push('\n');
            }
        }
    }
}

impl Default for Grid {
    fn default() -> Self {
        Self::new()
    }
}

/// A visual theme: colours of the base palette and the shape style of objects. Themes never
/// change rules or the named object colours the instructions refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Name used in variant ids (`theme-<name>`).
    pub name: &'static str,
    /// Canvas background.
    pub bg: [u8; 3],
    /// Floor.
    pub floor: [u8; 3],
    /// Wall.
    pub wall: [u8; 3],
    /// Agent.
    pub agent: [u8; 3],
    /// Draw `Full` objects as discs instead.
    pub round: bool,
    /// Draw a one-pixel darker border around cells (when cells are at least 6 px).
    pub lines: bool,
}

/// The default look.
pub const CLASSIC: Theme = Theme {
    name: "classic",
    bg: [0, 0, 0],
    floor: [30, 30, 30],
    wall: [120, 120, 120],
    agent: [250, 250, 250],
    round: false,
    lines: false,
};

/// Alternative themes, in the order families take them.
pub const THEMES: [Theme; 6] = [
    Theme {
        name: "dark",
        bg: [0, 0, 10],
        floor: [12, 12, 45],
        wall: [70, 70, 130],
        agent: [250, 250, 250],
        round: false,
        lines: false,
    },
    Theme {
        name: "light",
        bg: [200, 200, 200],
        floor: [225, 222, 210],
        wall: [90, 90, 90],
        agent: [10, 10, 10],
        round: false,
        lines: true,
    },
    Theme {
        name: "round",
        bg: [10, 10, 10],
        floor: [45, 35, 35],
        wall: [150, 115, 95],
        agent: [250, 250, 250],
        round: true,
        lines: false,
    },
    Theme {
        name: "sand",
        bg: [60, 40, 20],
        floor: [150, 120, 80],
        wall: [80, 50, 25],
        agent: [255, 255, 255],
        round: false,
        lines: true,
    },
    Theme {
        name: "forest",
        bg: [0, 20, 0],
        floor: [20, 55, 25],
        wall: [10, 90, 40],
        agent: [250, 250, 200],
        round: true,
        lines: false,
    },
    Theme {
        name: "slate",
        bg: [30, 30, 40],
        floor: [60, 65, 80],
        wall: [150, 155, 170],
        agent: [255, 255, 255],
        round: false,
        lines: true,
    },
];

/// Heat ramp for [`Col::Num`].
const RAMP: [[u8; 3]; 12] = [
    [60, 60, 60],
    [235, 235, 235],
    [240, 220, 60],
    [245, 150, 40],
    [225, 50, 40],
    [200, 40, 170],
    [120, 60, 230],
    [40, 120, 245],
    [30, 200, 210],
    [40, 190, 70],
    [150, 220, 40],
    [140, 90, 50],
];

impl Theme {
    /// RGB of a semantic colour under this theme.
    #[inline]
    pub fn rgb(&self, c: Col) -> [u8; 3] {
        match c {
            Col::Bg => self.bg,
            Col::Floor => self.floor,
            Col::Wall => self.wall,
            Col::Agent => self.agent,
            Col::Goal => [40, 200, 60],
            Col::Red => [220, 30, 30],
            Col::Blue => [40, 90, 240],
            Col::Green => [40, 200, 60],
            Col::Yellow => [240, 220, 30],
            Col::Purple => [160, 50, 200],
            Col::Orange => [250, 130, 10],
            Col::Cyan => [30, 210, 220],
            Col::Pink => [250, 120, 190],
            Col::White => [245, 245, 245],
            Col::Grey => [128, 128, 128],
            Col::Dark => [15, 15, 15],
            Col::Num(k) => RAMP[(k as usize).min(RAMP.len() - 1)],
        }
    }
}

/// Per-cell-size shape masks, rebuilt only when the cell size changes.
#[derive(Debug, Clone, Default)]
pub struct Renderer {
    cs: usize,
    masks: Vec<Vec<bool>>,
    pips: Vec<Vec<bool>>,
}

fn shape_mask(slot: usize, cs: usize) -> Vec<bool> {
    let mut m = vec![false; cs * cs];
    let c = cs as f32 / 2.0;
    let margin = if cs >= 4 {
        (cs as f32 * 0.12).max(1.0)
    } else {
        0.0
    };
    let r = c - margin;
    for y in 0..cs {
        for x in 0..cs {
            let dx = x as f32 + 0.5 - c;
            let dy = y as f32 + 0.5 - c;
            let d2 = dx * dx + dy * dy;
            let inside_sq = dx.abs() <= r && dy.abs() <= r;
            m[y * cs + x] = match slot {
                1 => inside_sq,
                2 => d2 <= r * r + 0.25,
                3 => dx.abs() + dy.abs() <= r + 0.5,
                4 => {
                    let half = (r * 0.45).max(0.5) + 0.01;
                    dx.abs() <= half && dy.abs() <= half
                }
                5 => d2 <= r * r + 0.25 && d2 >= (r * 0.5) * (r * 0.5),
                6 => {
                    (dx.abs() <= (r * 0.3).max(0.5) && dy.abs() <= r)
                        || (dy.abs() <= (r * 0.3).max(0.5) && dx.abs() <= r)
                }
                7 => dx.abs() <= r && dy.abs() <= (r * 0.35).max(0.5),
                _ => false,
            };
        }
    }
    m
}

/// The pipe piece with open `sides` (see [`Shape::Pipe`]): a centre square and an arm to each
/// open side, about a third of the cell thick.
fn pipe_mask(sides: u8, cs: usize) -> Vec<bool> {
    let c = cs as f32 / 2.0;
    let half = (cs as f32 * 0.17).max(0.5);
    (0..cs * cs)
        .map(|i| {
            let dx = (i % cs) as f32 + 0.5 - c;
            let dy = (i / cs) as f32 + 0.5 - c;
            let across = |d: f32| d.abs() <= half;
            let centre = across(dx) && across(dy);
            let arm = (sides & 1 != 0 && across(dx) && dy < 0.0)
                || (sides & 2 != 0 && across(dy) && dx > 0.0)
                || (sides & 4 != 0 && across(dx) && dy > 0.0)
                || (sides & 8 != 0 && across(dy) && dx < 0.0);
            centre || arm
        })
        .collect()
}

fn pip_mask(n: u8, cs: usize) -> Vec<bool> {
    // Pip centres on a 3x3 lattice, as on a real die.
    let spots: &[(f32, f32)] = match n {
        1 => &[(1.0, 1.0)],
        2 => &[(0.0, 0.0), (2.0, 2.0)],
        3 => &[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)],
        4 => &[(0.0, 0.0), (2.0, 0.0), (0.0, 2.0), (2.0, 2.0)],
        5 => &[(0.0, 0.0), (2.0, 0.0), (1.0, 1.0), (0.0, 2.0), (2.0, 2.0)],
        _ => &[
            (0.0, 0.0),
            (2.0, 0.0),
            (0.0, 1.0),
            (2.0, 1.0),
            (0.0, 2.0),
            (2.0, 2.0),
        ],
    };
    let mut m = vec![false; cs * cs];
    let step = cs as f32 * 0.27;
    let c0 = cs as f32 / 2.0 - step;
    let pr = (cs as f32 * 0.085).max(if cs >= 8 { 1.0 } else { 0.5 });
    for &(sx, sy) in spots {
        let px = c0 + sx * step;
        let py = c0 + sy * step;
        for y in 0..cs {
            for x in 0..cs {
                let dx = x as f32 + 0.5 - px;
                let dy = y as f32 + 0.5 - py;
                if dx * dx + dy * dy <= pr * pr + 0.3 {
                    m[y * cs + x] = true;
                }
            }
        }
    }
    m
}

impl Renderer {
    fn ensure(&mut self, cs: usize) {
        if self.cs != cs || self.masks.is_empty() {
            self.cs = cs;
            self.masks = (0..Shape::COUNT).map(|s| shape_mask(s, cs)).collect();
            // Die faces use almost the whole cell so the corner pips stay on the face.
            self.masks.push(
                (0..cs * cs)
                    .map(|i| {
                        let (x, y) = (i % cs, i / cs);
                        cs < 4 || (x >= 1 && y >= 1 && x + 1 < cs && y + 1 < cs)
                    })
                    .collect(),
            );
            self.masks.extend((0..16).map(|sides| pipe_mask(sides, cs)));
            self.pips = (1..=6).map(|n| pip_mask(n, cs)).collect();
        }
    }

    /// Render the window `[x0, x0+vw) x [y0, y0+vh)` of `grid` (cells outside the grid are
    /// walls) into `img`, centred, with square cells as large as fit.
    #[allow(clippy::too_many_arguments)]
    pub fn render_window(
        &mut self,
        grid: &Grid,
        theme: &Theme,
        img: &mut Rgb8Image,
        x0: i32,
        y0: i32,
        vw: usize,
        vh: usize,
    ) {
        let canvas = img.width.min(img.height) as usize;
        let cs = (canvas / vw.max(vh)).max(1);
        self.ensure(cs);
        let ox = (img.width as usize).saturating_sub(cs * vw) / 2;
        let oy = (img.height as usize).saturating_sub(cs * vh) / 2;
        // Whatever the cells leave uncovered (a margin, or a strip of less than one cell when the
        // canvas is not a multiple of the cell size) is painted too: left as it was, it would keep
        // the pixels of an earlier frame (another scale's grid, the noise variants' per-step
        // noise), so a reset would depend on what the env played before.
        if cs * vw < img.width as usize || cs * vh < img.height as usize {
            img.fill(theme.bg);
        }
        let width = img.width as usize;
        let line = theme.lines && cs >= 6;
        let line_rgb = {
            let f = theme.floor;
            [f[0] / 2 + 10, f[1] / 2 + 10, f[2] / 2 + 10]
        };
        for vy in 0..vh {
            for vx in 0..vw {
                let gx = x0 + vx as i32;
                let gy = y0 + vy as i32;
                let cell = if gx >= 0 && gy >= 0 && (gx as usize) < grid.w && (gy as usize) < grid.h
                {
                    grid.get(gx as usize, gy as usize)
                } else {
                    Cell::WALL
                };
                let base = theme.rgb(cell.base);
                let px0 = ox + vx * cs;
                let py0 = oy + vy * cs;
                let shape = match cell.shape {
                    Shape::Full if theme.round => Shape::Circle,
                    s => s,
                };
                let mask = if shape == Shape::None {
                    None
                } else {
                    Some(&self.masks[shape.slot()])
                };
                let fg = theme.rgb(cell.fg);
                let pips = match shape {
                    Shape::Die(n) => Some(&self.pips[(n.clamp(1, 6) - 1) as usize]),
                    _ => None,
                };
                let dark = theme.rgb(Col::Dark);
                for yy in 0..cs {
                    let row = ((py0 + yy) * width + px0) * 3;
                    let px = &mut img.data[row..row + cs * 3];
                    for xx in 0..cs {
                        let mut rgb = base;
                        if let Some(m) = mask
                            && m[yy * cs + xx]
                        {
                            rgb = fg;
                            if let Some(p) = pips
                                && p[yy * cs + xx]
                            {
                                rgb = dark;
                            }
                        }
                        if line && (xx == 0 || yy == 0) {
                            rgb = line_rgb;
                        }
                        px[xx * 3..xx * 3 + 3].copy_from_slice(&rgb);
                    }
                }
            }
        }
    }

    /// Render the whole grid.
    pub fn render(&mut self, grid: &Grid, theme: &Theme, img: &mut Rgb8Image) {
        self.render_window(grid, theme, img, 0, 0, grid.w, grid.h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_scale_with_the_canvas_and_colours_land_where_drawn() {
        let mut g = Grid::new();
        g.reset(4, 4, Cell::FLOOR);
        g.set(1, 2, Cell::obj(Shape::Full, Col::Red, b'r'));
        for canvas in [16u32, 32, 64, 128] {
            let mut img = Rgb8Image::new(canvas, canvas);
            Renderer::default().render(&g, &CLASSIC, &mut img);
            let cs = canvas / 4;
            // The centre of cell (1, 2) is red, the centre of (0, 0) is floor.
            assert_eq!(img.get(cs + cs / 2, 2 * cs + cs / 2), CLASSIC.rgb(Col::Red));
            assert_eq!(img.get(cs / 2, cs / 2), CLASSIC.floor);
        }
        let mut s = String::new();
        g.text(&mut s);
        assert_eq!(s, "....\n....\n.r..\n....");
    }

    #[test]
    fn pipe_arms_reach_the_middle_of_their_open_sides_only() {
        let mut g = Grid::new();
        g.reset(1, 1, Cell::obj(Shape::Pipe(1 | 2), Col::Red, b'L'));
        for canvas in [16u32, 32, 64] {
            let mut img = Rgb8Image::new(canvas, canvas);
            Renderer::default().render(&g, &CLASSIC, &mut img);
            let (mid, last) = (canvas / 2, canvas - 1);
            let red = CLASSIC.rgb(Col::Red);
            assert_eq!(img.get(mid, mid), red, "centre");
            assert_eq!(img.get(mid, 0), red, "open top");
            assert_eq!(img.get(last, mid), red, "open right");
            assert_eq!(img.get(mid, last), CLASSIC.floor, "closed bottom");
            assert_eq!(img.get(0, mid), CLASSIC.floor, "closed left");
            assert_eq!(img.get(0, 0), CLASSIC.floor, "corner");
        }
    }
}
