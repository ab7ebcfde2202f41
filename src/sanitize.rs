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

fn is_dangerous(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            | '\u{061c}' | '\u{2028}' | '\u{2029}' | '\u{feff}')
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
    use super::inert;

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
    }
}
