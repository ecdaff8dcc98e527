//! The one catalogue of atomic ability tags. Every tag a step emits is a `&'static str` from
//! this list (a test checks it), and `EnvSpec::abilities` lists the tags an env can emit.

/// `(tag, what exercising it means)`, grouped by where the ability mainly comes from.
pub const CATALOGUE: &[(&str, &str)] = &[
    // Movement and perception shared by many families (coverage saturates fast on these).
    ("navigate", "move the agent toward a target cell"),
    ("route-plan", "order several targets into one short route"),
    (
        "color-recognise",
        "tell object colours apart to decide what to do",
    ),
    (
        "cursor-move",
        "move a cursor over a board instead of an avatar",
    ),
    ("goal-localise", "find and enter the goal cell"),
    // Observation and control variants.
    ("noise-robust", "act on a frame with pixel noise"),
    ("occlusion-robust", "act while part of the frame is covered"),
    (
        "egocentric-view",
        "act from a 5x5 crop centred on the agent",
    ),
    ("mirrored-control", "act with left and right swapped"),
    ("negation", "answer a question whose answer is inverted"),
    // maze
    ("wall-follow", "follow a corridor with a single way on"),
    ("dead-end-recovery", "turn back out of a dead end"),
    ("junction-choice", "pick a branch at a junction"),
    // collect
    ("collect", "pick up a target by walking over it"),
    (
        "distractor-avoid",
        "pass next to a forbidden object without touching it",
    ),
    // key-door
    ("pick-up", "take an object into the inventory"),
    ("use-key", "open a locked door with the matching key"),
    ("subgoal-order", "do sub-tasks in the order the rules need"),
    // sokoban
    ("push", "push a box one cell"),
    (
        "push-plan",
        "walk around a box to push it from the right side",
    ),
    ("box-on-target", "put a box on its target"),
    // sliding puzzle
    ("permute", "slide a tile into the gap"),
    ("tile-locate", "bring a misplaced tile home"),
    ("plan-ahead", "make a move whose benefit comes later"),
    // lights out
    ("toggle", "flip a light pattern"),
    ("parity-reason", "reason about which presses cancel out"),
    // snake
    ("chase", "steer toward food"),
    ("self-avoid", "keep the head off the body"),
    ("growth-plan", "eat and grow while keeping an escape route"),
    // merge 2048
    ("merge", "merge equal tiles"),
    ("corner-strategy", "keep large tiles in a corner"),
    ("count-value", "read tile values to choose a move"),
    // minesweeper
    ("number-read", "read how many mines touch a cell"),
    ("deduce-safe", "deduce a safe cell from the numbers"),
    ("reveal", "uncover a cell"),
    // hazard cross
    ("hazard-recognise", "recognise a deadly cell"),
    ("gap-find", "find the gap in a hazard row"),
    // pick and place
    ("place", "put a carried object down on a pad"),
    ("match-colour", "pair an object with the pad of its colour"),
    // push-button door
    ("press-button", "press a button"),
    ("sequence", "follow an ordered sequence"),
    ("remember-code", "keep a code in mind while acting"),
    // tic-tac-toe
    ("turn-take", "play against a scripted opponent"),
    ("win-detect", "complete a line"),
    ("block-threat", "block the opponent's line"),
    ("misere-reason", "avoid completing a line (misere rules)"),
    // path paint
    ("trace-path", "follow a drawn path cell by cell"),
    ("colour-match", "paint a cell in its marked colour"),
    // single-turn perception and reasoning
    ("count", "count objects"),
    ("colour-filter", "count or pick only objects of one colour"),
    ("compare-shape", "compare shapes"),
    ("compare-colour", "compare colours"),
    ("path-trace", "trace a path through open cells"),
    ("connectivity", "decide whether two cells are connected"),
    ("left-right", "judge horizontal position"),
    ("above-below", "judge vertical position"),
    ("sequence-induce", "infer the rule of a sequence"),
    ("colour-cycle", "continue a repeating colour cycle"),
    (
        "symmetry-detect",
        "decide whether a pattern is mirror-symmetric",
    ),
    ("pip-count", "count the pips on dice"),
    ("add", "add numbers"),
    ("region-fill", "measure a connected region"),
    ("compare-size", "compare sizes"),
    ("angle-read", "read the direction an arrow points"),
    ("orientation", "map a direction onto compass words"),
    ("match-shape", "find the shape that matches a reference"),
    // held-out families (some overlap with the pool, as unseen benchmarks do)
    ("slip-adapt", "keep going when the floor makes moves fail"),
    ("hole-avoid", "avoid falling into holes"),
    ("gravity-drop", "drop a piece into a column"),
    ("line-build", "build a line of three"),
    ("memory-recall", "recall a card seen earlier"),
    ("card-match", "turn over a matching pair"),
    ("subtract", "take one count from another"),
    // confirmatory held-out families (likewise, and unseen by the OOD set too)
    ("slide-stop", "predict where a slide over ice comes to rest"),
    ("tile-rotate", "turn a tile to the orientation a plan needs"),
    ("pipe-connect", "join pipe ends so water reaches further"),
    (
        "weigh",
        "total objects' weights by their kind and compare two sides",
    ),
    (
        "measure-length",
        "count the steps along a path, leaving side branches out",
    ),
];

/// Whether `tag` is in the catalogue.
pub fn is_known(tag: &str) -> bool {
    CATALOGUE.iter().any(|(t, _)| *t == tag)
}

/// The catalogue's entry for `tag`, as a `&'static str`.
pub fn intern(tag: &str) -> Option<&'static str> {
    CATALOGUE.iter().find(|(t, _)| *t == tag).map(|(t, _)| *t)
}
