//! Byte encodings plugins need at the tool boundary (GitHub contents, Gmail raw MIME, Basic auth,
//! URL path segments, RFC 2231 parameters), on the `base64` and `percent-encoding` crates.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64_encode(input: &[u8]) -> String {
    STANDARD.encode(input)
}

/// URL-safe base64 without padding (RFC 4648 §5), as Gmail's `raw` wants.
pub fn base64url_encode(input: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(input)
}

/// The lenient decoder: padding optional, unused low bits of the last character ignored.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Decodes standard or URL-safe base64, with or without padding; line breaks and spaces (GitHub
/// wraps its base64 at 60 columns) are ignored. `None` for anything else.
pub fn base64_decode(input: &str) -> Option<Vec<u8>> {
    let mut standard = String::with_capacity(input.len());
    for c in input.chars() {
        match c {
            '-' => standard.push('+'),
            '_' => standard.push('/'),
            '=' | '\n' | '\r' | ' ' | '\t' => {}
            c => standard.push(c),
        }
    }
    LENIENT.decode(standard).ok()
}

/// What stays as it is in a percent-encoded path segment or RFC 2231 value: RFC 3986's
/// unreserved characters.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes `text` as UTF-8, leaving only RFC 3986 unreserved characters as they are.
pub fn percent_encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, UNRESERVED).to_string()
}

/// Decodes a query-string value: `+` is a space, `%XX` a byte, invalid UTF-8 replaced.
pub fn form_decode(value: &str) -> String {
    percent_encoding::percent_decode_str(&value.replace('+', " ")).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_vectors_round_trip() {
        for (plain, enc) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64_encode(plain.as_bytes()), enc);
            assert_eq!(base64_decode(enc).unwrap(), plain.as_bytes());
        }
        assert_eq!(base64url_encode(&[0xfb, 0xff]), "-_8");
        assert_eq!(base64_decode("-_8").unwrap(), vec![0xfb, 0xff]);
        assert_eq!(base64_decode("Zm9v\nYmFy\n").unwrap(), b"foobar");
        assert!(base64_decode("Zm9v*").is_none());
        assert_eq!(base64_decode("Zm9vYg").unwrap(), b"foob");
    }

    #[test]
    fn percent_codings() {
        assert_eq!(percent_encode("Zürich a/b~"), "Z%C3%BCrich%20a%2Fb~");
        assert_eq!(form_decode("a+b%2Bc%20d%zz"), "a b+c d%zz");
    }
}
