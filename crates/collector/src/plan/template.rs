//! Command and path templates: `{name}` placeholders filled from a table of values, and
//! `$VAR` / `${VAR}` expanded from the environment.

use std::collections::BTreeMap;

/// Replaces `{key}` placeholders; an unknown placeholder is an error naming it.
pub fn fill_template(template: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find('}') else {
            return Err(format!("unclosed placeholder in {template:?}"));
        };
        let key = &rest[i + 1..i + j];
        match vars.get(key) {
            Some(v) => out.push_str(v),
            None => {
                let known: Vec<&str> = vars.keys().map(String::as_str).collect();
                return Err(format!(
                    "unknown placeholder {{{key}}}; known: {}",
                    known.join(", ")
                ));
            }
        }
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Expands `$NAME` and `${NAME}`; an unset variable is an error.
pub fn expand_env(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        let (name, after) = if let Some(r) = rest.strip_prefix('{') {
            match r.find('}') {
                Some(j) => (&r[..j], &r[j + 1..]),
                None => return Err("unclosed ${".into()),
            }
        } else {
            let j = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..j], &rest[j..])
        };
        if name.is_empty() {
            out.push('$');
        } else {
            out.push_str(
                &std::env::var(name)
                    .map_err(|_| format!("environment variable {name} is not set"))?,
            );
        }
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_and_name_unknown_placeholders() {
        let mut v = BTreeMap::new();
        v.insert("port".to_string(), "8080".to_string());
        v.insert("value".to_string(), "4".to_string());
        assert_eq!(
            fill_template("srv --port {port} -np {value}", &v).unwrap(),
            "srv --port 8080 -np 4"
        );
        let e = fill_template("srv {model}", &v).unwrap_err();
        assert!(e.contains("unknown placeholder {model}"), "{e}");
    }

    #[test]
    fn env_expansion() {
        std::env::set_var("SLOSCOPE_TEST_X", "abc");
        assert_eq!(
            expand_env("$SLOSCOPE_TEST_X/bin ${SLOSCOPE_TEST_X}").unwrap(),
            "abc/bin abc"
        );
        assert!(expand_env("$SLOSCOPE_SURELY_UNSET_VAR").is_err());
    }
}
