//! A pure Server-Sent Events decoder: bytes in, events out.
//!
//! It follows the W3C event-stream rules that both official SDK servers rely on: `\r\n`, `\n` and `\r` line ends (a `\r\n` may be split across chunks), comment
//! lines (`: ping - …`), several `data:` lines joined with `\n`, `event:` names, a leading
//! byte-order mark, and a blank line ending each event. `id:` and `retry:` are ignored.
//!
//! Invariant: one event (its pending line plus its data) never holds more than `cap` bytes, and
//! no buffer is ever allocated past `cap`; an event over the cap is an error, after which the
//! decoder yields nothing more. Chunk boundaries may fall anywhere.

use std::collections::VecDeque;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` name, if the event had one.
    pub(crate) event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub(crate) data: String,
}

/// Why the decoder stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SseError {
    /// One event was larger than the cap.
    TooLarge,
    /// An event's data was not UTF-8.
    InvalidUtf8,
}

/// Lines longer than this do not keep their buffer between lines.
const KEEP_LINE_CAPACITY: usize = 64 * 1024;

/// The incremental decoder.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    cap: usize,
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    event: Option<String>,
    after_cr: bool,
    first_line: bool,
    failed: bool,
    /// Lines completed so far (comments included): the stream's progress.
    lines: u64,
    ready: VecDeque<Result<SseEvent, SseError>>,
}

impl SseDecoder {
    /// Creates a decoder that refuses events over `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            event: None,
            after_cr: false,
            first_line: true,
            failed: false,
            lines: 0,
            ready: VecDeque::new(),
        }
    }

    /// Feeds the next chunk of the stream.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        while !self.failed && !bytes.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.push_line(bytes);
                    return;
                }
                Some(end) => {
                    if !self.push_line(&bytes[..end]) {
                        return;
                    }
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    self.end_line();
                }
            }
        }
    }

    /// Returns the next complete event, or the error that stopped the decoder.
    pub(crate) fn next_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        self.ready.pop_front()
    }

    /// Returns how many lines were completed so far, comments and blank lines included.
    #[cfg(test)]
    pub(crate) fn lines(&self) -> u64 {
        self.lines
    }

    /// Returns whether an event was started but not finished (a cut stream at EOF).
    pub(crate) fn is_mid_event(&self) -> bool {
        !self.failed && (!self.line.is_empty() || self.has_data)
    }

    fn fail(&mut self, err: SseError) {
        self.failed = true;
        self.line = Vec::new();
        self.data = Vec::new();
        self.ready.push_back(Err(err));
    }

    /// Appends to the current line, keeping line plus data within the cap.
    fn push_line(&mut self, bytes: &[u8]) -> bool {
        let limit = self.cap.saturating_sub(self.data.len());
        if push_capped(&mut self.line, bytes, limit) {
            true
        } else {
            self.fail(SseError::TooLarge);
            false
        }
    }

    fn end_line(&mut self) {
        self.lines += 1;
        let mut line = std::mem::take(&mut self.line);
        let mut body: &[u8] = &line;
        if self.first_line {
            self.first_line = false;
            body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
        }
        if body.is_empty() {
            self.dispatch();
        } else if body[0] != b':' {
            let (field, value) = match body.iter().position(|&b| b == b':') {
                Some(i) => {
                    let value = &body[i + 1..];
                    (&body[..i], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (body, &b""[..]),
            };
            match field {
                b"data" => {
                    let ok = push_capped(&mut self.data, value, self.cap)
                        && push_capped(&mut self.data, b"\n", self.cap);
                    if !ok {
                        self.fail(SseError::TooLarge);
                        return;
                    }
                    self.has_data = true;
                }
                b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
                _ => {}
            }
        }
        if line.capacity() <= KEEP_LINE_CAPACITY {
            line.clear();
            self.line = line;
        }
    }

    fn dispatch(&mut self) {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the `\n` after the last data line
        match String::from_utf8(data) {
            Ok(data) => self.ready.push_back(Ok(SseEvent { event, data })),
            Err(_) => self.fail(SseError::InvalidUtf8),
        }
    }
}

/// Appends `add` to `buf` unless the result would exceed `limit`; never allocates past `limit`.
///
/// Growth doubles (amortized linear copying) but is clamped to `limit`.
pub(crate) fn push_capped(buf: &mut Vec<u8>, add: &[u8], limit: usize) -> bool {
    let needed = buf.len() + add.len();
    if needed > limit {
        return false;
    }
    if needed > buf.capacity() {
        let target = buf.capacity().saturating_mul(2).clamp(needed, limit);
        buf.reserve_exact(target - buf.len());
    }
    buf.extend_from_slice(add);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]], cap: usize) -> Vec<Result<SseEvent, SseError>> {
        let mut d = SseDecoder::new(cap);
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c);
            while let Some(e) = d.next_event() {
                out.push(e);
            }
        }
        out
    }

    #[expect(clippy::unnecessary_wraps, reason = "compared with decoder output")]
    fn ev(event: Option<&str>, data: &str) -> Result<SseEvent, SseError> {
        Ok(SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
        })
    }

    #[test]
    fn every_line_ending_and_comments() {
        let input =
            b": ping - 2026-11-30 01:08:43\r\ndata: a\r\n\r\ndata: b\n\ndata: c\r\rdata:d\n\n";
        assert_eq!(
            decode_all(&[input], 1024),
            vec![ev(None, "a"), ev(None, "b"), ev(None, "c"), ev(None, "d")]
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newline_and_event_names_are_kept() {
        let input = b"event: error\ndata: {\"a\":\ndata:  1}\nid: 7\nretry: 10\n\n";
        assert_eq!(
            decode_all(&[input], 1024),
            vec![ev(Some("error"), "{\"a\":\n 1}")]
        );
    }

    #[test]
    fn events_without_data_are_not_dispatched_and_reset_the_name() {
        let input = b"event: error\n\ndata: x\n\n";
        assert_eq!(decode_all(&[input], 1024), vec![ev(None, "x")]);
    }

    #[test]
    fn only_complete_lines_count_as_progress() {
        let mut d = SseDecoder::new(1024);
        for byte in b"data: {\"json" {
            d.feed(&[*byte]);
        }
        assert_eq!(
            d.lines(),
            0,
            "a trickle that never ends a line is no progress"
        );
        d.feed(b"rpc\"}\r");
        d.feed(b"\n: ping\n\n");
        assert_eq!(d.lines(), 3);
    }

    #[test]
    fn byte_order_mark_and_field_without_colon() {
        let input = b"\xEF\xBB\xBFdata: x\ndata\n\n";
        assert_eq!(decode_all(&[input], 1024), vec![ev(None, "x\n")]);
    }

    #[test]
    fn an_unfinished_event_is_reported_as_mid_event() {
        let mut d = SseDecoder::new(1024);
        d.feed(b"data: x\n\ndata: partial");
        assert_eq!(d.next_event(), Some(ev(None, "x")));
        assert_eq!(d.next_event(), None);
        assert!(d.is_mid_event());
        d.feed(b"\n\n");
        assert_eq!(d.next_event(), Some(ev(None, "partial")));
        assert!(!d.is_mid_event());
    }

    #[test]
    fn an_event_over_the_cap_stops_the_decoder() {
        let mut d = SseDecoder::new(16);
        d.feed(b"data: 0123456789\n\n");
        assert_eq!(d.next_event(), Some(ev(None, "0123456789")));
        d.feed(b"data: 0123");
        d.feed(b"456789abcdef");
        assert_eq!(d.next_event(), Some(Err(SseError::TooLarge)));
        d.feed(b"\n\ndata: y\n\n");
        assert_eq!(d.next_event(), None);
        assert!(d.line.capacity() <= 16 && d.data.capacity() <= 16);
    }

    #[test]
    fn data_spread_over_lines_counts_toward_the_cap() {
        // Each line fits, the event does not.
        let out = decode_all(&[b"data: 01234567\ndata: 01234567\n\n"], 20);
        assert_eq!(out, vec![Err(SseError::TooLarge)]);
    }

    #[test]
    fn invalid_utf8_data_is_an_error() {
        let out = decode_all(&[b"data: \xff\xfe\n\n"], 64);
        assert_eq!(out, vec![Err(SseError::InvalidUtf8)]);
    }

    #[test]
    fn push_capped_never_allocates_past_the_limit() {
        let mut buf = Vec::new();
        for _ in 0..142 {
            assert!(push_capped(&mut buf, &[1; 7], 1000));
            assert!(buf.capacity() <= 1000);
        }
        assert!(!push_capped(&mut buf, &[1; 7], 1000));
        assert_eq!(buf.len(), 994);
    }

    fn transcript_events(transcript: &[u8]) -> Vec<Result<SseEvent, SseError>> {
        decode_all(&[transcript], 1 << 20)
    }

    /// Splits each transcript at every byte offset (and into single bytes): same events.
    #[test]
    fn chunk_boundaries_anywhere_give_the_same_events() {
        for name in [
            "sse-python-crlf-pings.txt",
            "sse-js-lf.txt",
            "sse-error-event.txt",
        ] {
            let transcript = super::super::tests::fixture_bytes(name);
            let whole = transcript_events(&transcript);
            assert!(whole.len() >= 2, "{name}: {whole:?}");
            for cut in 0..=transcript.len() {
                let (a, b) = transcript.split_at(cut);
                assert_eq!(decode_all(&[a, b], 1 << 20), whole, "{name} cut at {cut}");
            }
            let bytes: Vec<&[u8]> = transcript.chunks(1).collect();
            assert_eq!(decode_all(&bytes, 1 << 20), whole, "{name} byte by byte");
        }
    }
}
