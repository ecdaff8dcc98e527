//! The confirmatory held-out families (`Split::Confirm`): in neither the pool nor the OOD set,
//! evaluated only by confirmatory records. Like the OOD families their abilities overlap the
//! pool's partly (navigate, cursor-move, add, compare-shape, path-trace ...) and add unseen
//! ones (slide-stop, tile-rotate, pipe-connect, weigh, measure-length).

pub(super) mod balance;
pub(super) mod ice_slide;
pub(super) mod path_length;
pub(super) mod pipes;
