//! The one scrubber of secrets: text an agent or a server sends back, with every secret we sent
//! it replaced, in whatever encoding it came back.
//!
//! A secret (a bearer token, an API key, what a `--token-cmd` printed, the PostgreSQL
//! password) is found raw, and spelled with any mixture, byte by byte, of:
//!
//! - percent-encoding of any of its bytes, the hex digits in either case (`%2F`, `%2f`), and `+`
//!   or `%20` for a space: what `application/x-www-form-urlencoded`, Python's `quote` (which
//!   leaves `/` raw), JavaScript's `encodeURIComponent` (which leaves `~!'()*` raw) or any other
//!   encoder of a query string or a path makes of it;
//! - JSON escapes of any of its characters: `\uXXXX` in either case (a surrogate pair beyond
//!   U+FFFF), and the short escapes (`\/`, `\"`, `\\`, `\n`, …).
//!
//! Not found (docs/reliability.md lists them): a secret split across fields or lines, encoded
//! twice (`%252F`), in base64, as HTML entities, or in any other encoding.
//!
//! The matcher walks the text once per secret, keeping for each position the secret prefixes
//! that end there (at most one state per length of prefix, the earliest start kept): a text of
//! `n` bytes costs `O(n)` for a secret that does not repeat itself, `O(n · m)` at worst for a
//! secret of `m` bytes; nothing is enumerated. A leaf module: the wire and the journal use it.

use std::borrow::Cow;

/// What replaces a secret in what an agent sent back.
pub const REDACTED: &str = "REDACTED";

/// The most bytes one character of a secret takes in the text: a surrogate pair, `\uD83D\uDE00`.
const LONGEST_UNIT: usize = 12;

/// Pending states are kept in a ring of this many slots, one per text position ahead.
const SLOTS: usize = 16;

const _: () = assert!(SLOTS > LONGEST_UNIT);

/// Returns `text` with every occurrence of each secret (raw, percent-encoded or JSON-escaped,
/// in any mixture; see the module notes) replaced by `with`; borrowed when none was found.
/// Empty secrets are ignored.
pub fn scrub_bytes<'t, S: AsRef<str>>(secrets: &[S], text: &'t [u8], with: &str) -> Cow<'t, [u8]> {
    let mut found = Vec::new();
    for secret in secrets {
        find(secret.as_ref().as_bytes(), text, &mut found);
    }
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    found.sort_unstable();
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    let mut i = 0;
    while i < found.len() {
        let (start, mut end) = found[i];
        i += 1;
        // Overlapping occurrences become one.
        while i < found.len() && found[i].0 < end {
            end = end.max(found[i].1);
            i += 1;
        }
        out.extend_from_slice(&text[at..start]);
        out.extend_from_slice(with.as_bytes());
        at = end;
    }
    out.extend_from_slice(&text[at..]);
    Cow::Owned(out)
}

/// Returns `text` with every occurrence of each secret replaced by `with`, as [`scrub_bytes`].
pub fn scrub_str<'t, S: AsRef<str>>(secrets: &[S], text: &'t str, with: &str) -> Cow<'t, str> {
    match scrub_bytes(secrets, text.as_bytes(), with) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // An occurrence starts and ends on character boundaries of valid UTF-8 (its first and
        // last units are whole characters or ASCII escapes), so this is never lossy.
        Cow::Owned(bytes) => Cow::Owned(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
    }
}

/// Returns whether `text` holds a secret in any of the forms [`scrub_bytes`] replaces.
pub fn contains<S: AsRef<str>>(secrets: &[S], text: &[u8]) -> bool {
    matches!(scrub_bytes(secrets, text, ""), Cow::Owned(_))
}

/// Adds the `(start, end)` of every occurrence of `secret` in `text` to `found`.
fn find(secret: &[u8], text: &[u8], found: &mut Vec<(usize, usize)>) {
    if secret.is_empty() {
        return;
    }
    // Ranges of other secrets, found before, are merged at the end only.
    let first_found = found.len();
    // The bytes that can open an occurrence: the secret's first byte, or an escape's first.
    let mut opens = [false; 256];
    opens[usize::from(secret[0])] = true;
    opens[usize::from(b'%')] = true;
    opens[usize::from(b'\\')] = true;
    if secret[0] == b' ' {
        opens[usize::from(b'+')] = true;
    }
    // `ahead[q % SLOTS]`: the states (secret bytes matched, start) that reach text position q.
    let mut ahead: [Vec<(usize, usize)>; SLOTS] = Default::default();
    let mut live = 0usize;
    let mut q = 0;
    while q <= text.len() {
        if live == 0 {
            // Nothing under way: skip to the next byte that can open an occurrence.
            match text[q..].iter().position(|&b| opens[usize::from(b)]) {
                Some(skip) => q += skip,
                None => return,
            }
        }
        let mut here = std::mem::take(&mut ahead[q % SLOTS]);
        live -= here.len();
        here.push((0, q));
        // One state per prefix length, the earliest start kept (the same future either way).
        here.sort_unstable();
        here.dedup_by_key(|s| s.0);
        for &(matched, start) in &here {
            if matched == secret.len() {
                // Occurrences end in order: one overlapping the last found joins it (a secret
                // like `aaaa` in a text of `a`s is one range, not one per byte).
                match found[first_found..].last_mut() {
                    Some(last) if last.1 >= start => *last = (last.0.min(start), q),
                    _ => found.push((start, q)),
                }
                continue;
            }
            for (len, bytes) in units(secret, matched, &text[q..]).into_iter().flatten() {
                ahead[(q + len) % SLOTS].push((matched + bytes, start));
                live += 1;
            }
        }
        here.clear();
        ahead[q % SLOTS] = here;
        q += 1;
    }
}

/// Returns each way the start of `rest` spells the secret's next bytes (from `at`): the unit's
/// length in the text and how many bytes of the secret it stands for.
fn units(secret: &[u8], at: usize, rest: &[u8]) -> [Option<(usize, usize)>; 4] {
    let mut ways = [None; 4];
    let Some(&first) = rest.first() else {
        return ways;
    };
    let want = secret[at];
    if first == want || (first == b'+' && want == b' ') {
        ways[0] = Some((1, 1));
    }
    if first == b'%' && rest.len() >= 3 && hex_byte(rest[1], rest[2]) == Some(want) {
        ways[1] = Some((3, 1));
    }
    if first == b'\\' && rest.len() >= 2 {
        if short_escape(rest[1]) == Some(want) {
            ways[2] = Some((2, 1));
        }
        ways[3] = json_unicode(secret, at, rest);
    }
    ways
}

/// The unit `\uXXXX` (or a surrogate pair) at the start of `rest`, if it spells the whole
/// character of the secret starting at `at`: `(12 or 6, the character's UTF-8 length)`.
fn json_unicode(secret: &[u8], at: usize, rest: &[u8]) -> Option<(usize, usize)> {
    let c = char_at(secret, at)?;
    let first = u_escape(rest)?;
    let (len, c_len) = (c.len_utf8(), u32::from(c));
    if c_len <= 0xFFFF {
        return (u32::from(first) == c_len).then_some((6, len));
    }
    let mut pair = [0u16; 2];
    c.encode_utf16(&mut pair);
    let second = u_escape(rest.get(6..)?)?;
    (first == pair[0] && second == pair[1]).then_some((12, len))
}

/// The character of the secret that starts at byte `at` (`None` inside a character).
fn char_at(secret: &[u8], at: usize) -> Option<char> {
    let width = match secret[at] {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    std::str::from_utf8(secret.get(at..at + width)?)
        .ok()?
        .chars()
        .next()
}

/// The code unit of a `\uXXXX` escape (hex digits in either case) at the start of `rest`.
fn u_escape(rest: &[u8]) -> Option<u16> {
    let &[b'\\', b'u', a, b, c, d, ..] = rest else {
        return None;
    };
    let high = u16::from(hex_byte(a, b)?);
    let low = u16::from(hex_byte(c, d)?);
    Some(high << 8 | low)
}

/// The byte two hex digits (either case) stand for.
fn hex_byte(high: u8, low: u8) -> Option<u8> {
    Some(hex_digit(high)? << 4 | hex_digit(low)?)
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The byte a JSON short escape (`\X`) stands for.
fn short_escape(b: u8) -> Option<u8> {
    Some(match b {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0C,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use rand::RngExt as _;
    use rand::SeedableRng as _;
    use rand::rngs::StdRng;

    use super::*;

    fn scrubbed(secret: &str, text: &str) -> String {
        scrub_str(&[secret], text, REDACTED).into_owned()
    }

    /// JavaScript's `encodeURIComponent`: everything but `A-Za-z0-9-_.!~*'()` encoded.
    fn encode_uri_component(s: &str) -> String {
        encode(s, |b| {
            b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b)
        })
    }

    /// Python's `urllib.parse.quote` (safe `/`): everything but `A-Za-z0-9_.-~/` encoded.
    fn python_quote(s: &str) -> String {
        encode(s, |b| b.is_ascii_alphanumeric() || b"_.-~/".contains(&b))
    }

    fn encode(s: &str, raw: impl Fn(u8) -> bool) -> String {
        s.bytes()
            .map(|b| {
                if raw(b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    /// The hex digits of every `%XX` in lower case.
    fn lower_hex(s: &str) -> String {
        let mut out = String::new();
        let mut digits = 0;
        for c in s.chars() {
            if digits > 0 {
                out.push(c.to_ascii_lowercase());
                digits -= 1;
            } else {
                digits = if c == '%' { 2 } else { 0 };
                out.push(c);
            }
        }
        out
    }

    /// Every character as `\uXXXX` (lower-case hex), surrogate pairs beyond U+FFFF.
    fn json_escaped(s: &str) -> String {
        s.encode_utf16().fold(String::new(), |mut out, u| {
            let _ = write!(out, "\\u{u:04x}");
            out
        })
    }

    const SECRET: &str = "S3cr3t/Tok~en!'(x)* y+z";

    #[test]
    fn every_named_encoding_is_found() {
        let form: String = url::form_urlencoded::byte_serialize(SECRET.as_bytes()).collect();
        let forms = [
            SECRET.to_owned(),
            form.clone(),
            form.replace('+', "%20"),
            lower_hex(&form),
            encode(SECRET, |_| false).to_ascii_lowercase(),
            python_quote(SECRET),
            encode_uri_component(SECRET),
            json_escaped(SECRET),
            json_escaped(SECRET)
                .to_ascii_uppercase()
                .replace("\\U", "\\u"),
            SECRET.replace('/', "\\/"),
        ];
        for encoded in forms {
            let text = format!("bad token: <{encoded}>.");
            assert_eq!(
                scrubbed(SECRET, &text),
                "bad token: <REDACTED>.",
                "{encoded}"
            );
        }
    }

    #[test]
    fn unicode_secrets_match_by_character_and_by_byte() {
        let secret = "pässwörd-😀";
        for encoded in [
            secret.to_owned(),
            json_escaped(secret),
            json_escaped(secret)
                .to_ascii_uppercase()
                .replace("\\U", "\\u"),
            encode(secret, |b| b.is_ascii_alphanumeric()),
            // Bytes of one character, one percent-encoded and one raw, are not valid UTF-8
            // text; a character's escape and the next one's raw bytes are.
            format!("p\\u00e4ssw%C3%B6rd-{}", json_escaped("😀")),
        ] {
            assert_eq!(scrubbed(secret, &format!("[{encoded}]")), "[REDACTED]");
        }
    }

    #[test]
    fn what_is_not_the_secret_is_kept() {
        for text in [
            "",
            "nothing here",
            "S3cr3t/Tok~en!'(x)* y+",
            "S3cr3t%2",
            "%zz%",
            "\\u",
            "\\uD83D",
            "trailing backslash \\",
        ] {
            assert!(
                matches!(scrub_str(&[SECRET], text, REDACTED), Cow::Borrowed(_)),
                "{text}"
            );
        }
        // Double encoding is not undone (documented).
        assert_eq!(scrubbed("a/b", "a%252Fb"), "a%252Fb");
    }

    #[test]
    fn overlapping_and_repeated_occurrences_are_all_replaced() {
        assert_eq!(scrubbed("aa", "aaa"), "REDACTED");
        assert_eq!(
            scrubbed("ab", "ab-%61%62-\\u0061b"),
            "REDACTED-REDACTED-REDACTED"
        );
        assert_eq!(
            scrub_str(&["one", "two"], "one two %74wo", "*").into_owned(),
            "* * *"
        );
        // A secret with a `%` in it, spelled raw or escaped.
        assert_eq!(
            scrubbed("p%41", "p%41 p%2541 p%41"),
            "REDACTED REDACTED REDACTED"
        );
        assert_eq!(scrubbed("p%41", "pA"), "pA");
    }

    /// Property: whatever subset of its bytes is percent-encoded (each digit in a random case,
    /// a space as `+` or `%20`) and whatever subset of its characters is JSON-escaped, with
    /// random text around it, the secret is replaced and the text around it is kept.
    #[test]
    fn any_mixture_of_encodings_is_found() {
        let mut rng = StdRng::seed_from_u64(30);
        let alphabet: Vec<char> = "abcXYZ019 /~!'()*+%-_.:@\\\"é€😀".chars().collect();
        for round in 0..2000 {
            let len = rng.random_range(1..24);
            let secret: String = (0..len)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            let mut spelled = String::new();
            for c in secret.chars() {
                match rng.random_range(0..4) {
                    0 => spelled.push(c),
                    1 => spelled.push_str(&json_escaped(&c.to_string())),
                    _ => {
                        let mut buf = [0; 4];
                        for &b in c.encode_utf8(&mut buf).as_bytes() {
                            if b == b' ' && rng.random_bool(0.5) {
                                spelled.push('+');
                            } else if rng.random_bool(0.5) && c.is_ascii() {
                                spelled.push(char::from(b));
                            } else {
                                let hex = format!("{b:02x}");
                                let hex: String = hex
                                    .chars()
                                    .map(|h| {
                                        if rng.random_bool(0.5) {
                                            h.to_ascii_uppercase()
                                        } else {
                                            h
                                        }
                                    })
                                    .collect();
                                spelled.push('%');
                                spelled.push_str(&hex);
                            }
                        }
                    }
                }
            }
            let text = format!("<<{spelled}>>");
            let out = scrubbed(&secret, &text);
            assert_eq!(
                out, "<<REDACTED>>",
                "round {round}: {secret:?} as {spelled:?}"
            );
        }
    }

    /// A long text costs about one step per byte: a secret that never starts in it is skipped
    /// over, and one that starts everywhere dies at once.
    #[test]
    fn long_texts_are_scanned_once() {
        let text = "a%b\\c".repeat(50_000);
        assert!(matches!(
            scrub_str(&["abcdef"], &text, REDACTED),
            Cow::Borrowed(_)
        ));
        let text = format!("{}{SECRET}", "x".repeat(200_000));
        assert!(scrubbed(SECRET, &text).ends_with("xREDACTED"));
        // A secret that repeats itself, in a text of its letter: one range, not one per byte.
        assert_eq!(scrubbed("aaaa", &"a".repeat(200_000)), "REDACTED");
    }
}
