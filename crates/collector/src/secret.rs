//! Credentials: held in a type that never prints, serializes or logs its contents.

/// An API key. `Debug` and `Display` print `***`; it has no `Serialize`.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Reads the key from the environment variable `name`.
    pub fn from_env(name: &str) -> Result<Secret, String> {
        match std::env::var(name) {
            Ok(v) if !v.is_empty() => Ok(Secret(v)),
            Ok(_) => Err(format!("environment variable {name} is empty")),
            Err(_) => Err(format!("environment variable {name} is not set")),
        }
    }

    /// The value, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// A URL as it may be recorded: no user info, no query string (either may hold a credential).
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (format!("{s}://"), r),
        None => (String::new(), url),
    };
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let rest = match rest.split_once('/') {
        Some((host, path)) => {
            let host = host.rsplit('@').next().unwrap_or(host);
            format!("{host}/{path}")
        }
        None => rest.rsplit('@').next().unwrap_or(rest).to_string(),
    };
    format!("{scheme}{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_the_key() {
        let s = Secret("sk-very-secret".into());
        assert_eq!(format!("{s:?} {s}"), "Secret(***) ***");
    }

    #[test]
    fn urls_lose_credentials() {
        assert_eq!(
            redact_url("http://user:pw@127.0.0.1:8080/v1?key=abc"),
            "http://127.0.0.1:8080/v1"
        );
        assert_eq!(redact_url("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
