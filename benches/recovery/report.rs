//! The result table: each figure beside its floor, measured in the same run, and the ratio.

use std::fmt::Write as _;

/// A measured quantity with its unit.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value {
    /// A wall time (seconds); lower is better.
    Secs(f64),
    /// A rate (per second) of the named thing; higher is better.
    Rate(f64, &'static str),
    /// Memory (KiB); lower is better.
    Kib(u64),
    /// Bytes; lower is better.
    Bytes(f64),
    /// How many times something happened; lower is better.
    Count(f64),
}

impl Value {
    /// Returns how many times costlier `self` is than `floor` (1.0 = as cheap as the floor).
    fn cost_ratio(self, floor: Self) -> Option<f64> {
        match (self, floor) {
            (Self::Secs(a), Self::Secs(b)) if b > 0.0 => Some(a / b),
            (Self::Rate(a, _), Self::Rate(b, _)) if a > 0.0 => Some(b / a),
            (Self::Kib(a), Self::Kib(b)) if b > 0 => Some(a as f64 / b as f64),
            (Self::Bytes(a), Self::Bytes(b)) | (Self::Count(a), Self::Count(b)) if b > 0.0 => {
                Some(a / b)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Secs(s) if s < 0.001 => write!(f, "{:.1} µs", s * 1e6),
            Self::Secs(s) if s < 1.0 => write!(f, "{:.2} ms", s * 1e3),
            Self::Secs(s) => write!(f, "{s:.2} s"),
            Self::Rate(r, what) => write!(f, "{} {what}/s", thousands(r)),
            Self::Kib(k) => write!(f, "{:.1} MiB", k as f64 / 1024.0),
            Self::Bytes(b) if b >= 1e9 => write!(f, "{:.1} GB", b / 1e9),
            Self::Bytes(b) if b >= 1e6 => write!(f, "{:.1} MB", b / 1e6),
            Self::Bytes(b) => write!(f, "{b:.0} B"),
            Self::Count(n) if n.fract() == 0.0 => write!(f, "{n:.0}"),
            Self::Count(n) => write!(f, "{n:.2}"),
        }
    }
}

/// Formats a number with thousands separators (no decimals).
pub(crate) fn thousands(x: f64) -> String {
    let s = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a figure must meet.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    /// At most this many times the floor.
    Ratio(f64),
    /// At most this much memory (KiB).
    MaxKib(u64),
    /// At least this many times the floor's rate (a speed-up: the floor is the same work done
    /// by fewer processes).
    MinSpeedup(f64),
}

/// One line of the table.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// The section (`reconcile`, `follow`, …).
    pub(crate) section: &'static str,
    /// What was measured, with its size and concurrency.
    pub(crate) what: String,
    /// The figure (a median unless said otherwise).
    pub(crate) figure: Value,
    /// The floor's name and value, measured in the same run.
    pub(crate) floor: Option<(String, Value)>,
    /// The target, if the issue sets one.
    pub(crate) target: Option<Target>,
    /// The median of the ratios of runs measured back to back with their floor, when the
    /// figure and the floor are medians of such pairs (steadier on a shared machine than the
    /// ratio of the two medians).
    pub(crate) paired: Option<f64>,
}

impl Row {
    /// Returns the cost ratio to the floor.
    pub(crate) fn ratio(&self) -> Option<f64> {
        self.paired.or_else(|| {
            self.floor
                .as_ref()
                .and_then(|(_, f)| self.figure.cost_ratio(*f))
        })
    }

    /// Returns whether the target is met (`None`: no target).
    pub(crate) fn met(&self) -> Option<bool> {
        match self.target? {
            Target::Ratio(max) => self.ratio().map(|r| r <= max),
            Target::MinSpeedup(min) => self.ratio().map(|r| r > 0.0 && 1.0 / r >= min),
            Target::MaxKib(max) => match self.figure {
                Value::Kib(k) => Some(k <= max),
                _ => None,
            },
        }
    }
}

/// Every row of the run, printed as each comes and as one Markdown table at the end.
#[derive(Debug, Default)]
pub(crate) struct Table {
    rows: Vec<Row>,
}

impl Table {
    /// Adds a row and prints it at once (a long run shows progress).
    pub(crate) fn add(&mut self, row: Row) {
        println!("  {}", Self::line(&row).replace(" | ", "  "));
        self.rows.push(row);
    }

    fn line(r: &Row) -> String {
        let (floor, value) = match &r.floor {
            Some((name, v)) => (name.clone(), v.to_string()),
            None => (String::new(), String::new()),
        };
        let speedup = matches!(r.target, Some(Target::MinSpeedup(_)));
        let ratio = r
            .ratio()
            .map(|x| {
                let paired = if r.paired.is_some() { " (p)" } else { "" };
                if speedup {
                    format!("{:.2}× faster{paired}", 1.0 / x)
                } else {
                    format!("{x:.2}×{paired}")
                }
            })
            .unwrap_or_default();
        let target = match r.target {
            Some(Target::Ratio(x)) => format!("≤ {x}×"),
            Some(Target::MaxKib(k)) => format!("≤ {} MiB", k / 1024),
            Some(Target::MinSpeedup(x)) => format!("≥ {x}× faster"),
            None => String::new(),
        };
        let met = match r.met() {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        format!(
            "{} | {} | {} | {floor} | {value} | {ratio} | {target} | {met}",
            r.section, r.what, r.figure
        )
    }

    /// Returns the whole table as Markdown.
    pub(crate) fn markdown(&self) -> String {
        let mut s = String::from(
            "| section | measurement | figure | floor (same run) | floor value | ratio | target | met |\n\
             |---|---|---:|---|---:|---:|---|---|\n",
        );
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", Self::line(r));
        }
        s.push_str(
            "\nRatios are costs (time over the floor's time, or the floor's rate over the \
             figure's), but `faster`: the figure's rate over the floor's; (p): the median of the \
             ratios of runs each measured right after its floor, rather than the ratio of the two \
             medians shown.\n",
        );
        s
    }
}
