//! The namespace map: senders -> queues and topics -> subscriptions -> consumers, each with its
//! dead-letter queue below it, ForwardTo edges, and messages travelling along the edges as the
//! log records their moves. At high rates the edges show flows (thickness, a count per second)
//! instead of dots. The engine says what is connected and which edge an event moves along
//! (`Namespace::map`, `MapView::flow`); this file only lays it out and draws it.
use crate::i18n::{t, tf};
use crate::markup;
use crate::markup::Markup;
use crate::markup::{clip, fmt};
use crate::state::{Action, StateHandle};
use sbp_engine::namespace::queue_path;
use sbp_engine::time::{format_duration, Instant};
use sbp_engine::{Event, EventKind, MapView, Movement, Place, PlaceKind, PlaceView};
use yew::prelude::*;

/// From one column's left edge to the next's; a column nobody uses takes no room.
const COLUMN_STEP: f64 = 180.0;
const NODE_W: f64 = 146.0;
const NODE_H: f64 = 54.0;
const DLQ_H: f64 = 40.0;
const ROW_H: f64 = 112.0;
/// A subscription's box holds its rule as a third line (drawn on the edge, a filter overlapped
/// the boxes and the other edges' labels), and the rows make room for it.
const RULE_H: f64 = 14.0;
/// How long a message takes along an edge (wall ms), and how long a mover is kept.
const TRAVEL_MS: f64 = 700.0;
/// The most movers on the map at once, and spawned per render; more means flow mode.
const MAX_MOVERS: usize = 40;
const SPAWN_PER_RENDER: usize = 12;
/// Moves per wall second above which the map shows flows, and below which dots again.
const FLOW_ON: usize = 30;
const FLOW_OFF: usize = 10;
/// Messages drawn inside a node.
const DOTS: usize = 6;
/// How often (wall ms) the drawing follows the clock while the map shows flows.
const FLOW_REDRAW_MS: f64 = 250.0;
/// Places drawn at most (in creation order); the lanes list every entity.
const MAX_PLACES: usize = 80;

#[derive(Clone, Copy, PartialEq)]
struct Rect {
    x: f64,
    y: f64,
    h: f64,
}

impl Rect {
    fn mid(self) -> (f64, f64) {
        (self.x + NODE_W / 2.0, self.y + self.h / 2.0)
    }
}

/// Where each place is drawn (few places: a list is enough), and the drawing's width.
struct Layout {
    at: Vec<(Place, Rect)>,
    width: f64,
}

impl Layout {
    fn get(&self, p: &Place) -> Option<&Rect> {
        self.at.iter().find(|(q, _)| q == p).map(|(_, r)| r)
    }
}

/// Senders, queues and topics, subscriptions, receivers: left to right.
fn column_of(kind: PlaceKind) -> Option<usize> {
    match kind {
        PlaceKind::Client | PlaceKind::Producer => Some(0),
        PlaceKind::Queue | PlaceKind::Topic => Some(1),
        PlaceKind::Subscription => Some(2),
        PlaceKind::Consumers | PlaceKind::Receiver => Some(3),
        PlaceKind::DeadLetterQueue => None,
    }
}

/// Where each place goes: a column by kind, a DLQ under its entity. Entities take rows in
/// creation order; a subscription the row of its topic, a producer or consumer group the row
/// of its entity, or the next free one below (a subscription's row stays empty in the entity
/// column). Places come in creation order, so adding one never moves another.
fn layout(map: &MapView) -> Layout {
    let ruled = map
        .edges
        .iter()
        .any(|e| e.movement == Movement::FanOut && !e.label.is_empty());
    let (row_h, extra) = if ruled {
        (ROW_H + RULE_H, RULE_H)
    } else {
        (ROW_H, 0.0)
    };
    let mut used = [false; 4];
    for p in &map.places {
        if let Some(c) = column_of(p.kind) {
            used[c] = true;
        }
    }
    let mut x = [0.0; 4];
    let mut next = 10.0;
    for c in 0..4 {
        if used[c] {
            x[c] = next;
            next += COLUMN_STEP;
        }
    }
    let mut taken: [Vec<bool>; 4] = Default::default();
    let mut entity_rows: Vec<(&str, usize)> = Vec::new();
    let mut at = Vec::new();
    for p in map
        .places
        .iter()
        .filter(|p| p.kind != PlaceKind::DeadLetterQueue)
        .take(MAX_PLACES)
    {
        let Some(column) = column_of(p.kind) else {
            continue;
        };
        let row_of = |path: &str| {
            entity_rows
                .iter()
                .find(|(p, _)| *p == path)
                .map_or(0, |(_, row)| *row)
        };
        // A producer or consumer group beside its entity; a subscription beside its topic.
        let wanted = match p.kind {
            PlaceKind::Producer | PlaceKind::Consumers => row_of(&p.path),
            PlaceKind::Subscription => row_of(
                sbp_engine::namespace::split_subscription_path(&p.path)
                    .map_or("", |(topic, _)| topic),
            ),
            _ => 0,
        };
        let is_taken = |c: usize, r: usize| taken[c].get(r).copied().unwrap_or(false);
        let row = (wanted..)
            .find(|&r| {
                // A subscription below its topic's row keeps the entity column beside it free,
                // so that no unrelated queue stands next to it.
                !is_taken(column, r)
                    && (p.kind != PlaceKind::Subscription || r == wanted || !is_taken(1, r))
            })
            .unwrap_or(wanted);
        let mut take = |c: usize| {
            if taken[c].len() <= row {
                taken[c].resize(row + 1, false);
            }
            taken[c][row] = true;
        };
        take(column);
        if p.kind == PlaceKind::Subscription {
            take(1);
        }
        if let Place::Queue(_) = p.place {
            entity_rows.push((&p.path, row));
        }
        let y = 10.0 + row as f64 * row_h;
        let h = NODE_H
            + if p.kind == PlaceKind::Subscription {
                extra
            } else {
                0.0
            };
        at.push((p.place, Rect { x: x[column], y, h }));
        if let Place::Queue(q) = p.place {
            let dlq = Place::Queue(sbp_engine::QueueRef { dlq: true, ..q });
            at.push((
                dlq,
                Rect {
                    x: x[column] + 14.0,
                    y: y + h + 8.0,
                    h: DLQ_H,
                },
            ));
        }
    }
    Layout {
        at,
        width: next - COLUMN_STEP + NODE_W + 24.0,
    }
}

/// The ends of an edge: side to side between columns, bottom to top within one.
fn ends(a: Rect, b: Rect) -> ((f64, f64), (f64, f64)) {
    let (ax, ay) = a.mid();
    let (bx, by) = b.mid();
    if (a.x - b.x).abs() < NODE_W / 2.0 {
        if by > ay {
            ((ax - 40.0, a.y + a.h), (ax - 40.0, b.y))
        } else {
            ((a.x, ay), (b.x, by))
        }
    } else if bx > ax {
        ((a.x + NODE_W, ay), (b.x, by))
    } else {
        ((a.x, ay), (b.x + NODE_W, by))
    }
}

struct Mover {
    id: u64,
    from: (f64, f64),
    to: (f64, f64),
    class: &'static str,
    extra: &'static str,
    label: String,
    born: f64,
}

/// What the map remembers between renders: the log position it has drawn up to, the movers in
/// flight, and the rates per edge.
type EdgeKey = (Place, Place, Movement);

struct EdgeStats {
    key: EdgeKey,
    rate: f64,
    total: u64,
    /// Moves in the current render.
    new: u64,
}

#[derive(Default)]
struct Motion {
    sim: usize,
    seen: u64,
    now: Instant,
    movers: Vec<Mover>,
    next_id: u64,
    /// Per edge: messages per simulated second (smoothed), and in all.
    edges: Vec<EdgeStats>,
    /// Moves in the last wall second, for the switch to flows.
    recent: Vec<(f64, usize)>,
    flows: bool,
    /// The last drawing, and when (wall ms) it was made: under flows it is redrawn at most
    /// every [`FLOW_REDRAW_MS`], so heavy traffic does not pay for a drawing on every tick.
    drawn: crate::markup::SharedMarkup,
    drawn_at: f64,
}

/// The class of an edge or a mover: "send", "fanout"...
fn movement_class(m: Movement) -> &'static str {
    match m {
        Movement::Send => "send",
        Movement::FanOut => "fanout",
        Movement::Forward => "forward",
        Movement::DeadLetter => "deadletter",
        Movement::Receive => "receive",
        Movement::Settle => "settle",
        Movement::Vanish => "vanish",
    }
}

/// The catalog key of what moved along an edge.
fn movement_text(m: Movement) -> &'static str {
    match m {
        Movement::Send => "move-send",
        Movement::FanOut => "move-fanout",
        Movement::Forward => "move-forward",
        Movement::DeadLetter => "move-deadletter",
        Movement::Receive => "move-receive",
        Movement::Settle => "move-settle",
        Movement::Vanish => "move-vanish",
    }
}

impl Motion {
    fn count(&mut self, key: EdgeKey) {
        match self.edges.iter_mut().find(|e| e.key == key) {
            Some(e) => e.new += 1,
            None => self.edges.push(EdgeStats {
                key,
                rate: 0.0,
                total: 0,
                new: 1,
            }),
        }
    }

    fn rate(&self, key: EdgeKey) -> f64 {
        self.edges
            .iter()
            .find(|e| e.key == key)
            .map_or(0.0, |e| e.rate)
    }

    /// Takes the events logged since the last render: counts them per edge and, unless the map
    /// shows flows, starts a mover for each.
    fn follow(
        &mut self,
        sim_id: usize,
        log: &[Event],
        total: u64,
        now: Instant,
        map: &MapView,
        layout: &Layout,
    ) {
        let wall = crate::browser::now_ms();
        let jumped = sim_id != self.sim || now < self.now || total < self.seen;
        let new = if jumped {
            0
        } else {
            (total - self.seen).min(log.len() as u64) as usize
        };
        let dt = (now - self.now).max(0);
        self.sim = sim_id;
        self.seen = total;
        self.now = now;
        if jumped {
            // A rewind or another scenario: the flows count afresh from here.
            self.movers.clear();
            self.edges.clear();
            return;
        }
        let mut spawned = 0;
        let reduced = crate::browser::reduced_motion();
        for e in &log[log.len() - new..] {
            let Some(f) = map.flow(e) else { continue };
            self.count((f.from, f.to, f.movement));
            if self.flows || reduced || spawned >= SPAWN_PER_RENDER {
                continue;
            }
            let (Some(&a), Some(&b)) = (layout.get(&f.from), layout.get(&f.to)) else {
                continue;
            };
            let (from, to) = if f.movement == Movement::Vanish {
                (a.mid(), a.mid())
            } else if f.movement == Movement::Settle {
                let (s, t) = ends(b, a);
                (t, s)
            } else if f.movement == Movement::DeadLetter {
                // Into the dead-letter queue: it ends inside the DLQ's box.
                (ends(a, b).0, b.mid())
            } else {
                ends(a, b)
            };
            let label = match &e.kind {
                EventKind::DeadLettered { reason, .. } => reason.to_string(),
                _ => String::new(),
            };
            // An expired message fades before it moves (TTL-11); an abandon goes back orange.
            let extra = match &e.kind {
                EventKind::DeadLettered { reason, .. } if reason == "TTLExpiredException" => {
                    " expired"
                }
                EventKind::Abandoned { .. } => " abandon",
                _ => "",
            };
            self.next_id += 1;
            self.movers.push(Mover {
                id: self.next_id,
                from,
                to,
                class: movement_class(f.movement),
                extra,
                label,
                born: wall,
            });
            spawned += 1;
        }
        self.movers.retain(|m| wall - m.born <= TRAVEL_MS + 200.0);
        let excess = self.movers.len().saturating_sub(MAX_MOVERS);
        self.movers.drain(..excess);
        // Rates per simulated second, smoothed over about two simulated seconds.
        let alpha = (dt as f64 / 2_000.0).min(1.0);
        let mut moved = 0;
        for e in &mut self.edges {
            if dt > 0 {
                let now_rate = e.new as f64 * 1_000.0 / dt as f64;
                e.rate = if e.total == 0 {
                    now_rate
                } else {
                    e.rate + alpha * (now_rate - e.rate)
                };
            }
            e.total += e.new;
            moved += e.new;
            e.new = 0;
        }
        self.recent.push((wall, moved as usize));
        self.recent.retain(|(t, _)| wall - t <= 1_000.0);
        let per_second: usize = self.recent.iter().map(|(_, n)| n).sum();
        if !self.flows && per_second > FLOW_ON {
            self.flows = true;
        } else if self.flows && per_second < FLOW_OFF {
            self.flows = false;
        }
    }
}

#[derive(Properties)]
pub struct MapProps {
    pub store: StateHandle,
    /// The state's version: the map follows every clock tick.
    pub version: u64,
}

impl PartialEq for MapProps {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
    }
}

/// The map. Places and edges are drawn as one SVG text (small code, and cheap to replace on
/// every tick); the movers are Yew nodes with keys, so that their CSS animations run on while
/// the rest is redrawn; clicks are read from the `data-` attributes of what was clicked. Zoom
/// widens the drawing; its box scrolls, so panning is scrolling (a finger drag on a phone).
#[function_component(NamespaceMap)]
pub fn namespace_map(props: &MapProps) -> Html {
    let store = &props.store;
    let motion = use_mut_ref(Motion::default);
    let zoom = use_state(|| 100u32);
    let sim = store.sim.borrow();
    let now = sim.now();
    let map = sim.ns().map();
    let total = sim.ns().events_logged();
    let sim_id = std::rc::Rc::as_ptr(&store.sim) as usize;
    let layout = layout(&map);
    motion
        .borrow_mut()
        .follow(sim_id, sim.ns().log(), total, now, &map, &layout);
    let wall = crate::browser::now_ms();
    let redraw = {
        let m = motion.borrow();
        // Paused, it shows the instant on the clock exactly (a drawing kept from a moment
        // before would disagree with the lanes).
        !m.flows || !store.playing || wall - m.drawn_at >= FLOW_REDRAW_MS || m.drawn.is_empty()
    };
    let height = layout
        .at
        .iter()
        .map(|(_, r)| r.y + r.h)
        .fold(NODE_H, f64::max)
        + 14.0;
    let names = Names(&map);
    let hidden = map
        .places
        .iter()
        .filter(|p| p.kind != PlaceKind::DeadLetterQueue)
        .count()
        .saturating_sub(MAX_PLACES);
    let view_box = format!("0 0 {} {}", fmt(layout.width), fmt(height));
    if redraw {
        let drawn = drawing(
            &sim,
            &map,
            &layout,
            &motion.borrow(),
            now,
            &view_box,
            &names,
        )
        .into_shared();
        let mut m = motion.borrow_mut();
        m.drawn = drawn;
        m.drawn_at = wall;
    }
    let motion = motion.borrow();

    let movers = motion.movers.iter().map(|m| {
        let style = format!(
            "--x0:{}px;--y0:{}px;--x1:{}px;--y1:{}px",
            fmt(m.from.0),
            fmt(m.from.1),
            fmt(m.to.0),
            fmt(m.to.1)
        );
        html! {
            <g key={m.id} class={format!("mover {}{}", m.class, m.extra)} style={style}>
                <circle r="5" />
                if !m.label.is_empty() { <text x="8" y="-6">{m.label.clone()}</text> }
            </g>
        }
    });

    let zoom_by = |percent: i32| {
        let zoom = zoom.clone();
        Callback::from(move |_: MouseEvent| {
            zoom.set((*zoom as i32 + percent).clamp(60, 400) as u32);
        })
    };
    // A click on a message opens it; on a place, its lane.
    let onclick = {
        let store = store.clone();
        Callback::from(move |e: MouseEvent| {
            let Some(target) = e.target_dyn_into::<web_sys::Element>() else {
                return;
            };
            if let Ok(Some(m)) = target.closest("[data-seq]") {
                let seq = m.get_attribute("data-seq").and_then(|s| s.parse().ok());
                if let (Some(path), Some(seq)) = (m.get_attribute("data-path"), seq) {
                    store.dispatch(Action::Select(Some((path, seq))));
                }
            } else if let Ok(Some(node)) = target.closest("[data-lane]") {
                if let Some(path) = node.get_attribute("data-lane") {
                    crate::browser::show_lane(&path);
                }
            }
        })
    };

    // The text alternative: every edge with what moved along it.
    let table_rows = motion.edges.iter().map(|e| {
        let (from, to, m) = e.key;
        html! {
            <tr><td>{names.said(from)}</td><td>{names.said(to)}</td><td>{t(movement_text(m))}</td>
                <td>{e.total.to_string()}</td><td>{sbp_engine::time::format_decimal(e.rate, 1)}</td></tr>
        }
    });
    html! {
        <section class="map" aria-label={t("map-label-short")}>
            <div class="map-bar">
                <h2>{t("map")}</h2>
                if hidden > 0 {
                    <span class="hint" id="map-hidden">{tf("map-hidden", &[("max", &MAX_PLACES.to_string()), ("hidden", &hidden.to_string())])}</span>
                }
                <span class="hint">{t(if motion.flows { "map-hint-flows" } else { "map-hint-moves" })}</span>
                <button class="small" onclick={zoom_by(25)} aria-label={t("zoom-in")}>{"+"}</button>
                <button class="small" onclick={zoom_by(-25)} aria-label={t("zoom-out")}>{"−"}</button>
                <button class="small" onclick={zoom_by(100 - *zoom as i32)}>{t("zoom-fit")}</button>
            </div>
            <div class="map-scroll">
                <div class={classes!("map-area", motion.flows.then_some("flows"))} style={format!("width:{}px;max-width:{}%", fmt(layout.width * f64::from(*zoom) / 100.0), *zoom)} {onclick}>
                    {motion.drawn.to_html()}
                    <svg class="map-movers" viewBox={view_box} aria-hidden="true">{ for movers }</svg>
                </div>
            </div>
            <ul class="map-legend" id="map-legend">
                { for [Movement::FanOut, Movement::Forward, Movement::DeadLetter].into_iter()
                    .filter(|kind| map.edges.iter().any(|e| e.movement == *kind))
                    .map(|kind| html! {
                        <li class={classes!("edge", movement_class(kind))}>
                            <svg width="26" height="8" aria-hidden="true"><line x1="0" y1="4" x2="26" y2="4" /></svg>
                            {" "}{t(movement_text(kind))}
                        </li>
                    }) }
            </ul>
            <details class="flows-table">
                <summary>{t("flows-table")}</summary>
                // Scrolls within the panel when its columns are wider (a phone, German words).
                <div class="table-scroll">
                <table id="map-flows">
                    <thead><tr><th>{t("col-from")}</th><th>{t("col-to")}</th><th>{t("col-move")}</th><th>{t("col-messages")}</th><th>{t("col-per-second")}</th></tr></thead>
                    <tbody>{ for table_rows }</tbody>
                </table>
                </div>
            </details>
        </section>
    }
}

/// Place names for the table and the edges' data: entity paths, actor names.
struct Names<'a>(&'a MapView);

impl Names<'_> {
    /// The place as the reader reads it: its name, the reader's own sends in the reader's
    /// words (as its box in the drawing says them).
    fn said(&self, p: Place) -> String {
        match p {
            Place::Client => t("place-client"),
            _ => self.get(p),
        }
    }

    fn get(&self, p: Place) -> String {
        self.0
            .places
            .iter()
            .find(|v| v.place == p)
            .map(place_name)
            .unwrap_or_default()
    }
}

/// A place's name: a queue's path (its DLQ's `/$deadletterqueue` path), an actor's name. It
/// names the place in the drawing's data (`data-place`, `data-from`), the same in every language.
fn place_name(v: &PlaceView) -> String {
    match v.place {
        Place::Queue(q) => queue_path(&v.path, q.dlq),
        _ => v.label.clone(),
    }
}

/// The places and edges as SVG text.
fn drawing(
    sim: &sbp_scenario::Simulation,
    map: &MapView,
    layout: &Layout,
    motion: &Motion,
    now: Instant,
    view_box: &str,
    names: &Names,
) -> Markup {
    let mut out = Markup::new();
    markup!(out,
        "<svg id=\"namespace-map\" class=\"map-svg\" viewBox=\"{}\" role=\"img\" aria-label=\"{}\"><g class=\"edges\">",
        view_box,
        t("map-label")
    );
    for e in &map.edges {
        let (Some(a), Some(b)) = (layout.get(&e.from), layout.get(&e.to)) else {
            continue;
        };
        let ((x1, y1), (x2, y2)) = ends(*a, *b);
        let rate = motion.rate((e.from, e.to, e.movement));
        let width = if motion.flows {
            1.5 + 2.5 * (1.0 + rate).log10()
        } else {
            1.5
        };
        let (from, to) = (names.get(e.from), names.get(e.to));
        markup!(out,
            "<g class=\"edge {}\" data-from=\"{}\" data-to=\"{}\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" style=\"stroke-width:{}px\"><title>{} → {}: {}{}</title></line>",
            movement_class(e.movement),
            from,
            to,
            fmt(x1),
            fmt(y1),
            fmt(x2),
            fmt(y2),
            fmt(width),
            names.said(e.from),
            names.said(e.to),
            t(movement_text(e.movement)),
            if e.label.is_empty() { String::new() } else { format!(" ({})", e.label) }
        );
        let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
        if motion.flows && rate >= 0.05 {
            let digits = if rate >= 10.0 { 0 } else { 1 };
            markup!(
                out,
                "<text class=\"rate\" x=\"{}\" y=\"{}\">{}/s</text>",
                fmt(mx),
                fmt(my - 4.0),
                sbp_engine::time::format_decimal(rate, digits)
            );
        }
        // An edge carries no words (between boxes 34 px apart they overlapped the boxes and
        // each other): a subscription's rule is drawn in its box, a forward's setting is in the
        // edge's tooltip, and the legend below the map says what each kind of line is.
        markup!(out, "</g>");
    }
    markup!(out, "</g><g class=\"nodes\">");
    let max_depth = map
        .places
        .iter()
        .map(|p| p.depth)
        .max()
        .unwrap_or(0)
        .max(10) as f64;
    for p in &map.places {
        let Some(&r) = layout.get(&p.place) else {
            continue;
        };
        let depth = |key: &str| tf(key, &[("n", &p.depth.to_string())]);
        let (kind, counts) = match p.kind {
            PlaceKind::Client => ("client", String::new()),
            PlaceKind::Producer => ("producer", format!("→ {}", p.path)),
            PlaceKind::Queue => ("queue", depth("place-stored")),
            PlaceKind::Topic => ("topic", depth("place-scheduled")),
            PlaceKind::Subscription => ("subscription", depth("place-stored")),
            PlaceKind::DeadLetterQueue => ("dlq", depth("place-stored")),
            PlaceKind::Consumers => ("consumers", depth("place-busy")),
            PlaceKind::Receiver => ("receiver", depth("place-held")),
        };
        let place = place_name(p);
        markup!(out,
            "<g class=\"node {}{}\" data-place=\"{}\" data-lane=\"{}\" transform=\"translate({},{})\"><rect class=\"box\" width=\"{}\" height=\"{}\" rx=\"6\"/>",
            kind,
            if p.active { "" } else { " stopped" },
            place,
            p.path,
            fmt(r.x),
            fmt(r.y),
            fmt(NODE_W),
            fmt(r.h)
        );
        let level = (p.depth as f64 / max_depth).min(1.0);
        if level > 0.0 {
            markup!(
                out,
                "<rect class=\"level\" x=\"1\" y=\"{}\" width=\"5\" height=\"{}\"/>",
                fmt(r.h - 1.0 - (r.h - 2.0) * level),
                fmt((r.h - 2.0) * level)
            );
        }
        markup!(out,
            "<text class=\"label\" x=\"10\" y=\"16\">{}</text><text class=\"count\" x=\"10\" y=\"30\">{}</text>",
            clip(
                &if p.kind == PlaceKind::Client {
                    t("place-client")
                } else {
                    p.label.clone()
                },
                20
            ),
            counts
        );
        if p.kind == PlaceKind::Subscription {
            let rule = map
                .edges
                .iter()
                .find(|e| e.to == p.place && e.movement == Movement::FanOut)
                .map(|e| e.label.as_str())
                .unwrap_or("");
            if !rule.is_empty() {
                markup!(
                    out,
                    "<text class=\"rule\" x=\"10\" y=\"44\">{}<title>{}</title></text>",
                    clip(rule, 21),
                    rule
                );
            }
        }
        if let Place::Queue(q) = p.place {
            message_dots(&mut out, sim, q, &p.path, r, now);
        }
        markup!(out, "</g>");
    }
    markup!(out, "</g></svg>");
    out
}

/// The first messages of a queue as dots: a ring for the time left to ExpiresAt and one for
/// the lock shrinking to LockedUntil; faded once expired; a click opens the message.
fn message_dots(
    out: &mut Markup,
    sim: &sbp_scenario::Simulation,
    q: sbp_engine::QueueRef,
    path: &str,
    r: Rect,
    now: Instant,
) {
    let Some(e) = sim.ns().entity(path) else {
        return;
    };
    let lock_duration = e.settings.lock_duration.max(1);
    let path = queue_path(path, q.dlq);
    for (i, m) in e.store(q.dlq).messages.values().take(DOTS).enumerate() {
        let card = sim.ns().card(q, m);
        let (cx, cy) = (NODE_W - 12.0 - i as f64 * 17.0, r.h - 11.0);
        let (ttl_left, expiry) = match card.expiry {
            sbp_engine::CardExpiry::At(at) => (
                ((at - now) as f64 / m.effective_ttl.max(1) as f64).clamp(0.0, 1.0),
                tf("dot-expires-in", &[("left", &format_duration(at - now))]),
            ),
            sbp_engine::CardExpiry::Passed => (0.0, t("dot-expired")),
            _ => (1.0, String::new()),
        };
        let (status, class) = crate::lanes::status_words(&card.status);
        // Circumferences: the TTL ring r=5.5 (34.6), the lock ring r=7.5 (47.1).
        markup!(out,
            "<g class=\"msg {}\" data-path=\"{}\" data-seq=\"{}\" transform=\"translate({},{})\"><title>#{} · {}{}{}</title><circle class=\"core\" r=\"3.5\"/><circle class=\"ttl\" r=\"5.5\" stroke-dasharray=\"{} 40\"/>",
            class,
            path,
            m.sequence_number,
            fmt(cx),
            fmt(cy),
            m.sequence_number,
            status,
            expiry,
            card.locked_until
                .map(|u| tf("dot-locked", &[("left", &format_duration(u - now))]))
                .unwrap_or_default(),
            fmt(34.6 * ttl_left)
        );
        if let Some(until) = card.locked_until {
            let left = ((until - now) as f64 / lock_duration as f64).clamp(0.0, 1.0);
            markup!(
                out,
                "<circle class=\"lock\" r=\"7.5\" stroke-dasharray=\"{} 50\"/>",
                fmt(47.1 * left)
            );
        }
        markup!(out, "</g>");
    }
}
