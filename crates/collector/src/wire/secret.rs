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

    /// A key given directly (tests, or a value the caller read itself).
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, for the `Authorization` header and redaction only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `Authorization: Bearer …`, marked sensitive, for every request of a client: the
    /// streaming requests, `/tokenize`, `/metrics` and health checks alike.
    pub fn auth_headers(&self) -> reqwest::header::HeaderMap {
        let mut h = reqwest::header::HeaderMap::new();
        if let Ok(mut v) = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", self.0)) {
            v.set_sensitive(true);
            h.insert(reqwest::header::AUTHORIZATION, v);
        }
        h
    }
}

/// Every credential sloscope knows of in this collection (the `--api-key-env` value and the
/// plan's `secret_vars`), replaced by `***` in whatever it writes: run files, journals, the
/// plan copy, server command lines, log tails and messages.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// Adds a secret (empty strings are ignored).
    pub fn add(&mut self, s: &str) {
        if !s.is_empty() && !self.secrets.iter().any(|k| k == s) {
            self.secrets.push(s.to_string());
            // Longest first, so a secret containing another is replaced whole.
            self.secrets.sort_by_key(|k| std::cmp::Reverse(k.len()));
        }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `s` with every secret replaced by `***`.
    pub fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for k in &self.secrets {
            if out.contains(k.as_str()) {
                out = out.replace(k.as_str(), "***");
            }
        }
        out
    }

    /// Every string in a JSON value (keys included) redacted.
    pub fn json(&self, v: &mut serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) if self.secrets.iter().any(|k| s.contains(k.as_str())) => {
                *s = self.text(s);
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.json(x)),
            Value::Object(o) => {
                let old = std::mem::take(o);
                for (k, mut x) in old {
                    self.json(&mut x);
                    o.insert(self.text(&k), x);
                }
            }
            _ => {}
        }
    }

    /// Serializable data as JSON with every secret redacted.
    pub fn to_value<T: serde::Serialize>(&self, data: &T) -> serde_json::Result<serde_json::Value> {
        let mut v = serde_json::to_value(data)?;
        if !self.is_empty() {
            self.json(&mut v);
        }
        Ok(v)
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

/// A run with every credential redacted from the strings that can carry one: the failure,
/// notes, endpoint URL, server command and log tail, and every request's error text.
pub fn redact_run(r: &Redactor, run: &mut sloscope_core::schema::Run) {
    if r.is_empty() {
        return;
    }
    let fix = |s: &mut String| {
        if r.secrets.iter().any(|k| s.contains(k.as_str())) {
            *s = r.text(s);
        }
    };
    run.failure.iter_mut().for_each(fix);
    run.notes.iter_mut().for_each(fix);
    if let Some(e) = &mut run.endpoint {
        fix(&mut e.url);
    }
    if let Some(s) = &mut run.server {
        s.command.iter_mut().for_each(fix);
        s.log_tail.iter_mut().for_each(fix);
    }
    for rep in &mut run.repeats {
        rep.requests.error.iter_mut().flatten().for_each(fix);
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
    fn redaction_reaches_every_string_and_key() {
        let mut r = Redactor::default();
        r.add("sk-abc");
        r.add("");
        let mut v = serde_json::json!({"cmd": ["--api-key", "sk-abc"], "x sk-abc": "a sk-abcsk-abc b", "n": 1});
        r.json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"cmd": ["--api-key", "***"], "x ***": "a ****** b", "n": 1})
        );
        assert_eq!(r.text("key=sk-abc;"), "key=***;");
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
