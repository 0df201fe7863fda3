//! Step charts as inline SVG, shared by the counts chart and the metrics. Each line has its own
//! dash pattern and a text legend with its last value, so colour is never the only cue.
use crate::markup;
use crate::markup::Markup;
use sbp_engine::time::format_decimal;
use sbp_engine::time::{format_instant, Instant};
use yew::prelude::*;

const W: f64 = 480.0;
const H: f64 = 120.0;
/// Points drawn per line at most (about one per two pixels).
const POINTS: usize = 240;

/// One line: name, colour, dash pattern, and a value per instant.
pub struct Line {
    /// The series' catalog key.
    pub name: &'static str,
    pub colour: &'static str,
    pub dash: &'static str,
    pub values: Vec<f64>,
}

pub fn line(
    name: &'static str,
    colour: &'static str,
    dash: &'static str,
    values: Vec<f64>,
) -> Line {
    Line {
        name,
        colour,
        dash,
        values,
    }
}

/// A chart of `lines` over the instants `at` (one value per instant in each line). With `now`
/// (a run rewound into what it recorded), a mark at that instant, and the legend's values
/// there rather than at the last sample.
pub fn plot(title: &str, unit: &str, at: &[Instant], lines: &[Line], now: Option<Instant>) -> Html {
    let (Some(&t0), Some(&t1)) = (at.first(), at.last()) else {
        return html! {};
    };
    let t1 = t1.max(t0 + 1);
    let max = lines
        .iter()
        .flat_map(|l| l.values.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let x = |t: Instant| (t - t0) as f64 / (t1 - t0) as f64 * (W - 40.0) + 36.0;
    let y = |v: f64| H - 16.0 - v / max * (H - 26.0);
    // The sample at or before `now` (the last one without it).
    let shown = now.map_or(at.len(), |now| at.partition_point(|&t| t <= now));
    let last = |l: &Line| {
        l.values[..shown.min(l.values.len())]
            .last()
            .copied()
            .unwrap_or(0.0)
    };
    let summary: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{} {}{unit}",
                crate::i18n::t(l.name),
                format_decimal(last(l), 0)
            )
        })
        .collect();
    let axis = H - 16.0;
    // Drawn as markup text: no handlers, and far less code than one element at a time.
    let mut out = Markup::new();
    markup!(out,
        "<figure class=\"metric\"><figcaption>{}</figcaption><svg viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} from {} to {}; last: {}\"><line x1=\"36\" y1=\"{13}\" x2=\"{14}\" y2=\"{13}\" stroke=\"#999\"/><text x=\"2\" y=\"12\" font-size=\"10\">{}{15}</text><text x=\"2\" y=\"{13}\" font-size=\"10\">0</text><text x=\"36\" y=\"{}\" font-size=\"10\">{}</text><text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
        title,
        format_decimal(W, 0),
        format_decimal(H, 0),
        title,
        format_instant(t0),
        format_instant(t1),
        summary.join(", "),
        format_decimal(max, 0),
        format_decimal(H - 2.0, 1),
        format_instant(t0),
        format_decimal(W - 4.0, 1),
        format_decimal(H - 2.0, 1),
        format_instant(t1),
        format_decimal(axis, 1),
        format_decimal(W, 1),
        unit,
    );
    for l in lines {
        // At most about POINTS points a line (every step-th, and the last): a chart 480 wide
        // shows no more, and drawing them all would cost every redraw.
        let step = at.len().div_ceil(POINTS).max(1);
        let last = at.len().saturating_sub(1);
        // Drawn as steps: a count (or a bucket's total) holds until the next sample changes
        // it; a diagonal would show messages draining gradually between two samples.
        let mut points = String::new();
        let mut point = |t: Instant, v: f64| {
            points += &format_decimal(x(t), 1);
            points.push(',');
            points += &format_decimal(y(v), 1);
            points.push(' ');
        };
        let mut before = None;
        for (i, (t, v)) in at.iter().zip(&l.values).enumerate() {
            if i % step == 0 || i == last {
                if let Some(held) = before {
                    point(*t, held);
                }
                point(*t, *v);
                before = Some(*v);
            }
        }
        markup!(out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" stroke-dasharray=\"{}\"/>",
            points,
            l.colour,
            l.dash
        );
    }
    if let Some(now) = now.filter(|&now| now < t1) {
        markup!(out,
            "<line class=\"now\" x1=\"{0}\" y1=\"10\" x2=\"{0}\" y2=\"{1}\" stroke=\"#555\" stroke-dasharray=\"2 2\"/>",
            format_decimal(x(now.max(t0)), 1),
            format_decimal(axis, 1)
        );
    }
    markup!(out, "</svg><ul class=\"legend\">");
    for l in lines {
        markup!(out,
            "<li><svg width=\"26\" height=\"8\" aria-hidden=\"true\"><line x1=\"0\" y1=\"4\" x2=\"26\" y2=\"4\" stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"{}\"/></svg> {}: {}{}</li>",
            l.colour,
            l.dash,
            crate::i18n::t(l.name),
            format_decimal(last(l), 0),
            unit
        );
    }
    markup!(out, "</ul></figure>");
    out.into_html()
}
