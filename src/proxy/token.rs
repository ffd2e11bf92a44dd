//! curl_session tokens: compact JWTs signed with HMAC-SHA256 (HS256) under a per-install key
//! kept in the secret store (`proxy:signing_key`), naming the integrations and the expiry.
//!
//! Only HS256 is accepted (no `none`, no algorithm taken from the token beyond checking it is
//! HS256); the signature is compared in constant time; expiry is checked with no leeway.

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use plugins::codec::{base64_decode, base64url_encode};

/// The secret store key of the signing key.
pub const KEY_NAME: &str = "proxy:signing_key";
/// The token's audience: only the curl proxy accepts it.
pub const AUDIENCE: &str = "workbench-curl-proxy";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub aud: String,
    /// The local user (whoami's id).
    pub sub: String,
    pub integrations: Vec<String>,
    /// The account each integration's requests use (integration -> account), fixed when the
    /// token was minted; a token without it (or without an integration in it) uses the default.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub accounts: std::collections::BTreeMap<String, String>,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
}

/// Why a token was refused (said to the caller as is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token is not a JWT (three base64url parts)")]
    Malformed,
    #[error("the token is not signed with HS256")]
    Algorithm,
    #[error("the token's signature is wrong (forged, or minted by another install)")]
    Signature,
    #[error("the token expired; mint a new one with curl_session")]
    Expired,
    #[error("the token is not a curl proxy token")]
    Audience,
}

type HmacSha256 = Hmac<Sha256>;

/// A keyed MAC over `message` (HMAC accepts keys of any length).
fn mac(key: &[u8], message: &[u8]) -> HmacSha256 {
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(message);
    mac
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    mac(key, message).finalize().into_bytes().into()
}

pub fn sign(key: &[u8], claims: &Claims) -> String {
    let header = base64url_encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = base64url_encode(serde_json::to_string(claims).unwrap_or_default().as_bytes());
    let signing_input = format!("{header}.{payload}");
    let signature = base64url_encode(&hmac_sha256(key, signing_input.as_bytes()));
    format!("{signing_input}.{signature}")
}

pub fn verify(key: &[u8], token: &str, now: i64) -> Result<Claims, TokenError> {
    let parts: Vec<&str> = token.trim().split('.').collect();
    let [header, payload, signature] = parts[..] else { return Err(TokenError::Malformed) };
    let decode = |part: &str| {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return None;
        }
        // Only the canonical spelling: unused low bits of the last character must be zero, so
        // one signature has exactly one token string.
        base64_decode(part).filter(|bytes| base64url_encode(bytes) == part)
    };
    let header: serde_json::Value =
        decode(header).and_then(|h| serde_json::from_slice(&h).ok()).ok_or(TokenError::Malformed)?;
    if header.get("alg").and_then(|a| a.as_str()) != Some("HS256") {
        return Err(TokenError::Algorithm);
    }
    let signature = decode(signature).ok_or(TokenError::Malformed)?;
    // `verify_slice` compares in constant time.
    if mac(key, format!("{}.{}", parts[0], parts[1]).as_bytes()).verify_slice(&signature).is_err() {
        return Err(TokenError::Signature);
    }
    let claims: Claims = decode(payload).and_then(|p| serde_json::from_slice(&p).ok()).ok_or(TokenError::Malformed)?;
    if claims.aud != AUDIENCE {
        return Err(TokenError::Audience);
    }
    if now >= claims.exp {
        return Err(TokenError::Expired);
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims {
            iss: "workbench".into(),
            aud: AUDIENCE.into(),
            sub: "usr_1".into(),
            integrations: vec!["github".into()],
            accounts: Default::default(),
            iat: 100,
            exp,
            jti: "j".into(),
        }
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex = hex::encode(mac);
        assert_eq!(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn signs_verifies_and_refuses() {
        let key = b"0123456789abcdef0123456789abcdef";
        let token = sign(key, &claims(1_000));
        assert_eq!(verify(key, &token, 999).unwrap(), claims(1_000));
        assert_eq!(verify(key, &token, 1_000), Err(TokenError::Expired));
        assert_eq!(verify(b"another key", &token, 999), Err(TokenError::Signature));
        // A changed payload (more integrations) breaks the signature.
        let mut forged = claims(1_000);
        forged.integrations.push("stripe".into());
        let forged_payload = base64url_encode(serde_json::to_string(&forged).unwrap().as_bytes());
        let parts: Vec<&str> = token.split('.').collect();
        let tampered = format!("{}.{}.{}", parts[0], forged_payload, parts[2]);
        assert_eq!(verify(key, &tampered, 999), Err(TokenError::Signature));
        // alg: none and other algorithms are refused before anything else.
        let none = format!("{}.{}.", base64url_encode(br#"{"alg":"none"}"#), parts[1]);
        assert_eq!(verify(key, &none, 999), Err(TokenError::Algorithm));
        assert_eq!(verify(key, "abc", 999), Err(TokenError::Malformed));
        // The same signature bytes spelled differently (non-zero padding bits) are refused.
        let last = parts[2].chars().last().unwrap();
        let twin = format!(
            "{}.{}.{}{}",
            parts[0],
            parts[1],
            &parts[2][..parts[2].len() - 1],
            match last {
                'A' => 'B',
                'Q' => 'R',
                'g' => 'h',
                'w' => 'x',
                other => other,
            }
        );
        if twin != token {
            assert_eq!(verify(key, &twin, 999), Err(TokenError::Malformed));
        }
        assert_eq!(verify(key, "a.b.c.d", 999), Err(TokenError::Malformed));
        let mut other = claims(1_000);
        other.aud = "something-else".into();
        assert_eq!(verify(key, &sign(key, &other), 999), Err(TokenError::Audience));
    }
}
