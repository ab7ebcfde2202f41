//! Remote text made safe for a terminal.
//!
//! Agents are untrusted: their task ids, questions, error messages and artifact names may carry
//! escape sequences (which a terminal would obey) and bidi controls (which reorder what a reader
//! sees). Everything remote goes through [`inert`] before it is printed. A leaf module: the wire,
//! the journal, recovery and the printer all use it.

/// Makes remote text inert for a terminal: escape sequences (CSI, OSC, …) are dropped, other
/// control characters and bidi overrides are shown as visible `\u{…}` escapes.
///
/// Newlines and tabs are escaped too: a table cell or a status line stays one line.
pub fn inert(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 CSI / OSC / DCS introducers start sequences as well.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if is_dangerous(c) => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// What starts every line of remote text after its first (a question an agent phrased over
/// several lines): no line a2a-recover prints of its own contains it, so a line an agent wrote
/// can never pass for one of ours (a fake `a2a-recover resolve … --as done`).
pub const REMOTE_LINE_PREFIX: &str = "│ ";

/// Most lines of one remote text a list shows (`inspect WORKFLOW/STEP` shows it whole).
pub const LIST_LINES: usize = 20;

/// Makes remote text inert as [`inert`] does, but keeps its line feeds: each line after the
/// first goes on a line of its own, `indent` then [`REMOTE_LINE_PREFIX`] before it. Carriage
/// returns and every other control stay escaped; line feeds at the end are dropped. With
/// `max_lines`, the lines past it are counted on a last line (`indent` then `… N more lines`).
pub fn inert_lines(s: &str, indent: &str, max_lines: Option<usize>) -> String {
    let lines: Vec<&str> = s.trim_end_matches('\n').split('\n').collect();
    let shown = max_lines.map_or(lines.len(), |max| max.clamp(1, lines.len()));
    let mut out = String::with_capacity(s.len() + 8 * shown);
    for (i, line) in lines[..shown].iter().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(indent);
            out.push_str(REMOTE_LINE_PREFIX);
        }
        out.push_str(&inert(line));
    }
    let more = lines.len() - shown;
    if more > 0 {
        use std::fmt::Write as _;
        let _ = write!(
            out,
            "\n{indent}… {more} more line{}",
            if more == 1 { "" } else { "s" }
        );
    }
    out
}

fn is_dangerous(c: char) -> bool {
    c.is_control() || is_format(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Returns whether `c` is a Unicode format character (general category `Cf`): invisible, and
/// some reorder what a reader sees (bidi overrides such as U+202E, isolates, zero-width
/// joiners, tag characters). Remote text shows them as `\u{…}`; names refuse them.
pub fn is_format(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{0600}'..='\u{0605}' | '\u{061c}' | '\u{06dd}' | '\u{070f}'
        | '\u{0890}'..='\u{0891}' | '\u{08e2}' | '\u{180e}' | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}'
        | '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{110bd}' | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}' | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0001}' | '\u{e0020}'..='\u{e007f}')
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            skip_string(chars);
        }
        Some(_) => {
            // Two-character escape (ESC c, ESC 7, …): drop the next character too.
            chars.next();
        }
        None => {}
    }
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Parameters and intermediates, then one final byte in @..~.
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Until BEL, ST (ESC \) or C1 ST.
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{inert, inert_lines};

    #[test]
    fn line_feeds_start_prefixed_lines_and_long_texts_are_cut() {
        assert_eq!(inert_lines("one line\n", "  ", None), "one line");
        assert_eq!(
            inert_lines("Agent requires input:\n- rooms: two\r\u{1b}[2J", "  ", None),
            "Agent requires input:\n  │ - rooms: two\\u{d}"
        );
        let long: Vec<String> = (1..=25).map(|i| format!("line {i}")).collect();
        let shown = inert_lines(&long.join("\n"), "", Some(20));
        assert_eq!(shown.lines().count(), 21, "{shown}");
        assert!(shown.lines().nth(19).unwrap() == "│ line 20", "{shown}");
        assert!(shown.ends_with("\n… 5 more lines"), "{shown}");
    }

    #[test]
    fn inert_drops_escapes_and_shows_controls() {
        assert_eq!(inert("plain text"), "plain text");
        assert_eq!(inert("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(
            inert("\u{1b}]8;;http://evil.example\u{1b}\\click\u{1b}]8;;\u{1b}\\"),
            "click"
        );
        assert_eq!(inert("a\rb"), "a\\u{d}b");
        assert_eq!(inert("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(inert("line1\nline2"), "line1\\u{a}line2");
        assert_eq!(inert("title\u{1b}]0;pwned\u{7}"), "title");
        // Every format character is made visible: isolates, zero-width ones, tags.
        assert_eq!(
            inert("a\u{2067}b\u{200b}c\u{e0041}"),
            "a\\u{2067}b\\u{200b}c\\u{e0041}"
        );
    }
}
