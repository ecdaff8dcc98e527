//! The pool-wide ability transition graph (petgraph), with DOT and SVG output.

use std::collections::BTreeMap;
use std::fmt::Write;

use petgraph::graph::{DiGraph, NodeIndex};

use crate::stats::EnvAbilityStats;

/// One ability of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct AbilityNode {
    /// Atomic ability name.
    pub name: String,
    /// Occurrences over the pool.
    pub count: u64,
    /// Meta-ability the ability was clustered into, once known.
    pub meta: Option<String>,
}

/// One transition of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct AbilityEdge {
    /// Ability before.
    pub from: String,
    /// Ability after.
    pub to: String,
    /// Times observed over the pool.
    pub count: u64,
    /// Pool-wide P(to | from): `count` over all pool transitions out of `from`.
    pub probability: f32,
}

/// Directed graph of atomic abilities weighted by pool-wide transition probability.
/// Nodes are in name order, edges in `(from, to)` order, so output is deterministic.
#[derive(Debug, Clone)]
pub struct AbilityGraph {
    graph: DiGraph<AbilityNode, AbilityEdge>,
    index: BTreeMap<String, NodeIndex>,
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Fill colours of meta-abilities in the SVG (cycled).
const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c",
];

impl AbilityGraph {
    /// Pool the statistics of every environment into one graph.
    pub fn from_stats(stats: &[EnvAbilityStats]) -> Self {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        let mut pairs: BTreeMap<(String, String), u64> = BTreeMap::new();
        for s in stats {
            for (a, c) in &s.counts {
                *counts.entry(a.clone()).or_default() += c;
            }
            for (p, c) in &s.transitions {
                *pairs.entry(p.clone()).or_default() += c;
                // A transition endpoint always occurs, but keep the node set closed anyway.
                counts.entry(p.0.clone()).or_default();
                counts.entry(p.1.clone()).or_default();
            }
        }
        let mut out_totals: BTreeMap<&str, u64> = BTreeMap::new();
        for ((from, _), c) in &pairs {
            *out_totals.entry(from.as_str()).or_default() += c;
        }
        let mut graph = DiGraph::new();
        let mut index = BTreeMap::new();
        for (name, count) in &counts {
            let i = graph.add_node(AbilityNode {
                name: name.clone(),
                count: *count,
                meta: None,
            });
            index.insert(name.clone(), i);
        }
        for ((from, to), &count) in &pairs {
            graph.add_edge(
                index[from],
                index[to],
                AbilityEdge {
                    from: from.clone(),
                    to: to.clone(),
                    count,
                    probability: count as f32 / out_totals[from.as_str()] as f32,
                },
            );
        }
        Self { graph, index }
    }

    /// The underlying petgraph graph (node and edge weights carry names).
    pub fn petgraph(&self) -> &DiGraph<AbilityNode, AbilityEdge> {
        &self.graph
    }

    /// Nodes in name order.
    pub fn nodes(&self) -> Vec<&AbilityNode> {
        self.index.values().map(|&i| &self.graph[i]).collect()
    }

    /// Edges in `(from, to)` order.
    pub fn edges(&self) -> Vec<&AbilityEdge> {
        let mut e: Vec<&AbilityEdge> = self.graph.edge_weights().collect();
        e.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
        e
    }

    /// Pool-wide P(to | from), 0 when never observed.
    pub fn probability(&self, from: &str, to: &str) -> f32 {
        match (self.index.get(from), self.index.get(to)) {
            (Some(&a), Some(&b)) => self
                .graph
                .find_edge(a, b)
                .map_or(0.0, |e| self.graph[e].probability),
            _ => 0.0,
        }
    }

    /// Record each ability's meta-ability (used to colour and group the figures).
    pub fn set_meta(&mut self, meta_of: &BTreeMap<String, String>) {
        for (name, &i) in &self.index {
            self.graph[i].meta = meta_of.get(name).cloned();
        }
    }

    /// Graphviz DOT text: nodes labelled with name and count (grouped into one cluster per
    /// meta-ability when known), edges labelled and weighted with their probability.
    pub fn to_dot(&self) -> String {
        let mut s = String::from(
            "digraph abilities {\n  rankdir=LR;\n  node [shape=ellipse, fontsize=10];\n",
        );
        let mut groups: BTreeMap<Option<&str>, Vec<&AbilityNode>> = BTreeMap::new();
        for n in self.nodes() {
            groups.entry(n.meta.as_deref()).or_default().push(n);
        }
        for (k, (meta, nodes)) in groups.iter().enumerate() {
            let indent = if meta.is_some() { "    " } else { "  " };
            if let Some(m) = meta {
                let _ = writeln!(
                    s,
                    "  subgraph cluster_{k} {{\n    label=\"{}\";",
                    dot_escape(m)
                );
            }
            for n in nodes {
                let _ = writeln!(
                    s,
                    "{indent}\"{0}\" [label=\"{0}\\n{1}\"];",
                    dot_escape(&n.name),
                    n.count
                );
            }
            if meta.is_some() {
                s.push_str("  }\n");
            }
        }
        for e in self.edges() {
            let _ = writeln!(
                s,
                "  \"{}\" -> \"{}\" [label=\"{:.2}\", weight={:.3}, penwidth={:.2}];",
                dot_escape(&e.from),
                dot_escape(&e.to),
                e.probability,
                e.probability,
                0.5 + 3.5 * e.probability
            );
        }
        s.push_str("}\n");
        s
    }

    /// An SVG figure: abilities on a circle, grouped by meta-ability, edges with
    /// `probability >= min_probability` drawn with width and opacity growing with probability.
    pub fn to_svg(&self, min_probability: f32) -> String {
        let mut nodes = self.nodes();
        // Members of one meta-ability sit next to each other on the circle.
        nodes.sort_by(|a, b| (&a.meta, &a.name).cmp(&(&b.meta, &b.name)));
        let n = nodes.len().max(1);
        let size = 1000.0f32;
        let centre = size / 2.0;
        let radius = 360.0f32;
        let mut pos: BTreeMap<&str, (f32, f32, f32)> = BTreeMap::new();
        for (i, node) in nodes.iter().enumerate() {
            let angle = std::f32::consts::TAU * i as f32 / n as f32 - std::f32::consts::FRAC_PI_2;
            pos.insert(
                &node.name,
                (
                    centre + radius * angle.cos(),
                    centre + radius * angle.sin(),
                    angle,
                ),
            );
        }
        let metas: Vec<&str> = {
            let mut m: Vec<&str> = nodes.iter().filter_map(|n| n.meta.as_deref()).collect();
            m.dedup();
            m
        };
        let colour = |meta: Option<&str>| {
            meta.and_then(|m| metas.iter().position(|x| *x == m))
                .map_or("#888888", |i| PALETTE[i % PALETTE.len()])
        };
        let max_count = nodes.iter().map(|n| n.count).max().unwrap_or(1).max(1) as f32;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{size}\" height=\"{size}\" viewBox=\"0 0 {size} {size}\" font-family=\"sans-serif\">"
        );
        s.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#333\"/></marker></defs>\n");
        s.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        let _ = writeln!(
            s,
            "<text x=\"20\" y=\"30\" font-size=\"18\">Ability transition graph: {} abilities, {} meta-abilities, edges with P &gt;= {:.2}</text>",
            nodes.len(),
            metas.len(),
            min_probability
        );
        for e in self.edges() {
            if e.probability < min_probability || e.from == e.to {
                continue;
            }
            let (x1, y1, _) = pos[e.from.as_str()];
            let (x2, y2, _) = pos[e.to.as_str()];
            // Curve each edge to the right of its direction so a->b and b->a stay apart,
            // and stop short of the target node so the arrowhead shows.
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (mx, my) = ((x1 + x2) / 2.0 - dy * 0.12, (y1 + y2) / 2.0 + dx * 0.12);
            let (tx, ty) = (x2 - dx / len * 9.0, y2 - dy / len * 9.0);
            let _ = writeln!(
                s,
                "<path d=\"M {x1:.1} {y1:.1} Q {mx:.1} {my:.1} {tx:.1} {ty:.1}\" fill=\"none\" stroke=\"#333\" stroke-width=\"{:.2}\" stroke-opacity=\"{:.2}\" marker-end=\"url(#arrow)\"><title>{} -&gt; {}: {:.3}</title></path>",
                0.4 + 4.0 * e.probability,
                0.15 + 0.75 * e.probability,
                xml_escape(&e.from),
                xml_escape(&e.to),
                e.probability
            );
        }
        for node in &nodes {
            let (x, y, angle) = pos[node.name.as_str()];
            let r = 4.0 + 6.0 * (node.count as f32 / max_count).sqrt();
            let _ = writeln!(
                s,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r:.1}\" fill=\"{}\" stroke=\"black\" stroke-width=\"0.5\"><title>{} ({}): {}</title></circle>",
                colour(node.meta.as_deref()),
                xml_escape(&node.name),
                xml_escape(node.meta.as_deref().unwrap_or("-")),
                node.count
            );
            let (lx, ly) = (x + 16.0 * angle.cos(), y + 16.0 * angle.sin());
            let anchor = if angle.cos() >= 0.0 { "start" } else { "end" };
            let _ = writeln!(
                s,
                "<text x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"10\" text-anchor=\"{anchor}\" dominant-baseline=\"middle\">{}</text>",
                xml_escape(&node.name)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::EnvId;

    fn stats(env: &str, seqs: &[&[&str]]) -> EnvAbilityStats {
        let mut s = EnvAbilityStats::new(EnvId::new(env));
        for q in seqs {
            s.add_sequence(&q.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        }
        s
    }

    #[test]
    fn pooled_probabilities_and_outputs() {
        let a = stats("e/a", &[&["nav", "pick"], &["nav", "door"]]);
        let b = stats("e/b", &[&["nav", "pick", "nav"]]);
        let mut g = AbilityGraph::from_stats(&[a, b]);
        // Out of nav over the pool: pick twice, door once.
        assert_eq!(g.probability("nav", "pick"), 2.0 / 3.0);
        assert_eq!(g.probability("nav", "door"), 1.0 / 3.0);
        assert_eq!(g.probability("pick", "nav"), 1.0);
        assert_eq!(g.probability("door", "nav"), 0.0);
        assert_eq!(g.petgraph().node_count(), 3);
        assert_eq!(g.petgraph().edge_count(), 3);
        let names: Vec<&str> = g.nodes().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["door", "nav", "pick"]);
        assert_eq!(g.nodes()[1].count, 4);
        let mut meta = BTreeMap::new();
        meta.insert("nav".to_string(), "move".to_string());
        meta.insert("pick".to_string(), "move".to_string());
        meta.insert("door".to_string(), "door".to_string());
        g.set_meta(&meta);
        let dot = g.to_dot();
        assert!(dot.contains("\"nav\" -> \"pick\" [label=\"0.67\""), "{dot}");
        assert!(dot.contains("label=\"move\""), "{dot}");
        let svg = g.to_svg(0.0);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("marker-end=").count(), 3);
        assert_eq!(g.to_svg(0.5).matches("marker-end=").count(), 2);
    }
}
