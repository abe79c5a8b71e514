//! When two names are one: names a reviewer cannot tell apart on screen (case, surrounding
//! space, invisible characters, look-alike letters from other scripts) are treated as the same
//! name, so a report never says "np4 cannot be told apart from np4". Look-alikes are those of
//! Unicode's confusable skeleton (UTS #39, through `unicode-security`).

/// Characters that draw nothing: zero-width spaces and joiners, bidirectional controls, word
/// joiners, the byte-order mark, the soft hyphen, variation selectors.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The form two names are compared in: invisible characters dropped, surrounding space
/// trimmed, lower-cased, then reduced to its confusable skeleton.
pub fn skeleton(name: &str) -> String {
    let visible: String = name.chars().filter(|&c| !is_invisible(c)).collect();
    let lower = visible.trim().to_lowercase();
    unicode_security::skeleton(&lower)
        .collect::<String>()
        .to_lowercase()
}

/// Two different names that read the same.
pub fn look_alike(a: &str, b: &str) -> bool {
    a != b && skeleton(a) == skeleton(b)
}

/// A name as a message shows it when it has look-alikes: quoted with its invisible and
/// non-ASCII characters written as escapes, so the difference can be seen.
pub fn spelled(name: &str) -> String {
    let mut out = String::from("\"");
    for c in name.chars() {
        if c.is_ascii_graphic() || c == ' ' {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_are_one_name() {
        for (a, b) in [
            ("np4", "NP4"),
            ("np4", " np4 "),
            ("np4", "np4\u{200B}"),
            ("np4", "n\u{0440}4"),               // Cyrillic er
            ("np4", "\u{FF4E}\u{FF50}\u{FF14}"), // fullwidth
            ("np4", "\u{202E}np4"),
        ] {
            assert!(look_alike(a, b), "{a:?} {b:?}");
        }
        assert!(!look_alike("np4", "np8"));
        assert!(!look_alike("np4", "np4"));
        assert_eq!(spelled("n\u{0440}4"), "\"n\\u{0440}4\"");
    }
}
