//! Grid helpers shared by the families: breadth-first search, move masks, maze carving.

use std::hash::{BuildHasherDefault, Hasher};

use envdist_core::{ActionId, ActionMask, Rng};

use crate::env::Status;
use crate::render::{Cell, Col, Grid, Shape};

/// Cell coordinates `(x, y)`, y grows downward.
pub type Pos = (usize, usize);

/// Hashing for the solvers' packed states (integers they make, not input an adversary
/// chooses): one multiply instead of SipHash, which was a third of a search's time.
pub type PackedStateHash = BuildHasherDefault<MultiplyHasher>;

#[derive(Default)]
pub struct MultiplyHasher(u64);

impl Hasher for MultiplyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        // Fibonacci hashing: the high bits, which hashbrown's groups read, mix every input bit.
        self.0 = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The cell one move away, if it stays inside `w x h`.
#[inline]
pub fn step_pos(p: Pos, a: ActionId, w: usize, h: usize) -> Option<Pos> {
    let (dx, dy) = a.delta()?;
    let x = p.0 as i32 + dx;
    let y = p.1 as i32 + dy;
    (x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h).then_some((x as usize, y as usize))
}

/// The moves from `p` onto cells where `ok` holds.
pub fn move_mask(p: Pos, w: usize, h: usize, ok: impl Fn(Pos) -> bool) -> ActionMask {
    let mut m = ActionMask::NONE;
    for a in ActionId::MOVES {
        if let Some(q) = step_pos(p, a, w, h)
            && ok(q)
        {
            m = m.with(a);
        }
    }
    m
}

/// A solver's step: the first move of a shortest path from `start` to a `target` cell through
/// cells where `pass` holds, or `wait` where none is reachable.
pub fn first_move(
    w: usize,
    h: usize,
    start: Pos,
    pass: impl Fn(Pos) -> bool,
    target: impl Fn(Pos) -> bool,
) -> ActionId {
    bfs(w, h, start, pass, target)
        .map(|(first, _)| first)
        .unwrap_or(ActionId::WAIT)
}

/// [`first_move`] on a square `n x n` board towards the one cell `goal`.
pub fn first_move_to(n: usize, start: Pos, pass: impl Fn(Pos) -> bool, goal: Pos) -> ActionId {
    first_move(n, n, start, pass, |q| q == goal)
}

/// [`bfs`] on a square `n x n` board to the one cell `goal`: the first move and the path
/// length, `None` where `goal` cannot be reached.
pub fn bfs_to(
    n: usize,
    start: Pos,
    pass: impl Fn(Pos) -> bool,
    goal: Pos,
) -> Option<(ActionId, u32)> {
    bfs(n, n, start, pass, |q| q == goal)
}

/// A grid game's [`Game::agent`](crate::env::Game::agent): the cell the agent (or cursor)
/// stands on, in the renderer's signed coordinates.
pub fn agent_xy(p: Pos) -> Option<(i32, i32)> {
    Some((p.0 as i32, p.1 as i32))
}

/// Whether `p` lies inside the one-cell border wall of a `w x h` room.
pub fn inside_walls(p: Pos, w: usize, h: usize) -> bool {
    p.0 > 0 && p.1 > 0 && p.0 < w - 1 && p.1 < h - 1
}

/// Draws an `n x n` room: wall on the border, `inner` of each cell inside it.
pub fn draw_room(g: &mut Grid, n: usize, inner: impl Fn(Pos) -> Cell) {
    g.reset(n, n, Cell::WALL);
    for y in 1..n - 1 {
        for x in 1..n - 1 {
            g.set(x, y, inner((x, y)));
        }
    }
}

/// A step other than `interact` in the games that point at a cell (lights-out, mines): a move
/// shifts the cursor (their legal mask, `cursor_moves`, keeps it on the board), anything else
/// does nothing; the episode goes on either way.
pub fn step_cursor(cursor: &mut Pos, a: ActionId, tags: &mut Vec<&'static str>) -> Status {
    if let Some((dx, dy)) = a.delta() {
        cursor.0 = (cursor.0 as i32 + dx) as usize;
        cursor.1 = (cursor.1 as i32 + dy) as usize;
        tags.push("cursor-move");
    }
    Status::Running
}

/// The cursor of the games that point at a cell (lights-out, mines): a ring in `fg` over
/// whatever cell `i` shows.
pub fn draw_cursor(g: &mut Grid, i: usize, fg: Col) {
    g.cells[i] = Cell {
        shape: Shape::Ring,
        fg,
        ..g.cells[i]
    };
}

/// A navigation game's end: won (the goal localised) once the agent stands on the goal.
pub fn won_at_goal(agent: Pos, goal: Pos, tags: &mut Vec<&'static str>) -> Status {
    if agent == goal {
        tags.push("goal-localise");
        Status::Won
    } else {
        Status::Running
    }
}

/// Breadth-first search from `start` over cells where `pass` holds (the start always counts)
/// to the nearest cell where `target` holds. Returns the first move and the path length.
pub fn bfs(
    w: usize,
    h: usize,
    start: Pos,
    pass: impl Fn(Pos) -> bool,
    target: impl Fn(Pos) -> bool,
) -> Option<(ActionId, u32)> {
    let mut first: Vec<u8> = vec![u8::MAX; w * h];
    let mut dist: Vec<u32> = vec![u32::MAX; w * h];
    let mut queue = std::collections::VecDeque::with_capacity(w * h);
    dist[start.1 * w + start.0] = 0;
    queue.push_back(start);
    while let Some(p) = queue.pop_front() {
        let d = dist[p.1 * w + p.0];
        if p != start && target(p) {
            return Some((ActionId::MOVES[first[p.1 * w + p.0] as usize], d));
        }
        for (k, a) in ActionId::MOVES.iter().enumerate() {
            if let Some(q) = step_pos(p, *a, w, h) {
                let i = q.1 * w + q.0;
                if dist[i] == u32::MAX && (pass(q) || target(q)) {
                    dist[i] = d + 1;
                    first[i] = if p == start {
                        k as u8
                    } else {
                        first[p.1 * w + p.0]
                    };
                    queue.push_back(q);
                }
            }
        }
    }
    None
}

/// Cells reachable from `start` over cells where `pass` holds (start included).
pub fn flood(w: usize, h: usize, start: Pos, pass: impl Fn(Pos) -> bool) -> Vec<bool> {
    let mut seen = vec![false; w * h];
    let mut stack = vec![start];
    seen[start.1 * w + start.0] = true;
    while let Some(p) = stack.pop() {
        for a in ActionId::MOVES {
            if let Some(q) = step_pos(p, a, w, h) {
                let i = q.1 * w + q.0;
                if !seen[i] && pass(q) {
                    seen[i] = true;
                    stack.push(q);
                }
            }
        }
    }
    seen
}

/// A perfect maze on an odd `size x size` grid (walls `true`), carved by a randomised
/// depth-first search from (1, 1); odd cells are rooms.
pub fn carve_maze(size: usize, rng: &mut Rng) -> Vec<bool> {
    let mut walls = vec![true; size * size];
    let mut stack = vec![(1usize, 1usize)];
    walls[size + 1] = false;
    while let Some(&(x, y)) = stack.last() {
        let mut options = [(0i32, 0i32); 4];
        let mut n = 0;
        for (dx, dy) in [(0i32, -2i32), (0, 2), (-2, 0), (2, 0)] {
            let nx = x as i32 + dx;
            let ny = y as i32 + dy;
            if nx > 0
                && ny > 0
                && (nx as usize) < size - 1
                && (ny as usize) < size - 1
                && walls[ny as usize * size + nx as usize]
            {
                options[n] = (dx, dy);
                n += 1;
            }
        }
        if n == 0 {
            stack.pop();
            continue;
        }
        let (dx, dy) = options[rng.index(n)];
        let nx = (x as i32 + dx) as usize;
        let ny = (y as i32 + dy) as usize;
        walls[((y as i32 + dy / 2) as usize) * size + (x as i32 + dx / 2) as usize] = false;
        walls[ny * size + nx] = false;
        stack.push((nx, ny));
    }
    walls
}

/// `n` distinct random cells among those where `free` holds (fewer if there are not enough).
pub fn random_cells(
    w: usize,
    h: usize,
    n: usize,
    rng: &mut Rng,
    free: impl Fn(Pos) -> bool,
) -> Vec<Pos> {
    let mut cells: Vec<Pos> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|p| free(*p))
        .collect();
    rng.shuffle(&mut cells);
    cells.truncate(n);
    cells
}

/// `n` and the noun in the right number (`1 box`, `2 boxes`): subgoal hints read as prose.
pub fn count_of(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Names joined as prose: `red`, `red and blue`, `red, blue and green`.
pub fn prose_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// One step of a solver-cache test. `kept` and `fresh` are twins on the same level, `fresh`'s
/// caches just cleared by the caller: both must give the same hint and the same oracle action
/// (`check` then sees `kept` and that action, before the move). Then both take one move, the
/// oracle's 30% of the time and a random one otherwise, so plans are followed and left.
/// Returns whether the move won.
#[cfg(test)]
pub(crate) fn ask_twins_then_move<G: crate::env::Game>(
    kept: &mut G,
    fresh: &mut G,
    walk: &mut Rng,
    rng: &Rng,
    check: impl FnOnce(&G, ActionId),
) -> bool {
    let (mut a, mut b) = (String::new(), String::new());
    kept.subgoal(&mut a);
    fresh.subgoal(&mut b);
    assert_eq!(a, b, "the hints differ");
    let next = kept.oracle();
    assert_eq!(next, fresh.oracle(), "the oracle actions differ");
    check(kept, next);
    let action = if walk.chance(0.3) {
        next
    } else {
        ActionId::MOVES[walk.index(4)]
    };
    let mut tags = Vec::new();
    let done = kept.step(action, &mut rng.clone(), &mut tags);
    fresh.step(action, &mut rng.clone(), &mut tags);
    done == crate::env::Status::Won
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfs_finds_shortest_first_move() {
        // 3x3 open grid from (0,0) to (2,0): first move right, distance 2.
        let r = bfs(3, 3, (0, 0), |_| true, |p| p == (2, 0)).unwrap();
        assert_eq!(r, (ActionId::RIGHT, 2));
        let mut rng = Rng::seed_from_u64(3);
        let walls = carve_maze(9, &mut rng);
        let open = flood(9, 9, (1, 1), |p| !walls[p.1 * 9 + p.0]);
        assert_eq!(count_of(1, "box", "boxes"), "1 box");
        assert_eq!(count_of(3, "box", "boxes"), "3 boxes");
        assert_eq!(prose_list(&["red", "blue", "green"]), "red, blue and green");
        assert_eq!(prose_list(&["red"]), "red");
        // A perfect maze connects every room.
        for y in (1..9).step_by(2) {
            for x in (1..9).step_by(2) {
                assert!(open[y * 9 + x]);
            }
        }
    }
}
