//! When two names are one: names a reviewer cannot tell apart on screen (case, surrounding
//! space, invisible characters, look-alike letters from other scripts) are treated as the same
//! name, so a report never says "np4 cannot be told apart from np4". Look-alikes are those of
//! Unicode's confusable skeleton (UTS #39): each character's skeleton, as `unicode-security`
//! computes it, written out in [`confusable_table`] (a test regenerates it and checks each
//! character against the full skeleton): 45 KB, delta-coded, instead of that crate's 207 KB of
//! confusable and normalization tables in the page's reader. What it leaves out is the
//! canonical reordering of several combining marks across characters.

#[rustfmt::skip]
#[path = "confusable_table.rs"]
mod confusable_table;

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
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        match hangul_jamo(c) {
            Some(jamo) => jamo
                .into_iter()
                .flatten()
                .for_each(|j| push_skeleton(j, &mut out)),
            None => push_skeleton(c, &mut out),
        }
    }
    out.to_lowercase()
}

/// One character's skeleton, from the table (itself where the table has none).
fn push_skeleton(c: char, out: &mut String) {
    let table = table();
    match table.binary_search_by_key(&(c as u32), |e| e.0) {
        Ok(i) => {
            let (_, start, end) = table[i];
            let bytes = confusable_table::TABLE.get(start as usize..end as usize);
            out.push_str(
                bytes
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .unwrap_or_default(),
            );
        }
        Err(_) => out.push(c),
    }
}

/// The table's entries (code point, where its skeleton starts and ends in the table), decoded
/// once.
fn table() -> &'static [(u32, u32, u32)] {
    static DECODED: std::sync::OnceLock<Vec<(u32, u32, u32)>> = std::sync::OnceLock::new();
    DECODED.get_or_init(|| {
        let t = confusable_table::TABLE;
        let (mut out, mut at, mut code) = (Vec::with_capacity(9000), 0usize, 0u32);
        while at < t.len() {
            let (mut delta, mut shift) = (0u32, 0);
            while let Some(&b) = t.get(at) {
                at += 1;
                delta |= u32::from(b & 0x7F) << shift;
                shift += 7;
                if b < 0x80 {
                    break;
                }
            }
            code += delta;
            let len = t.get(at).map_or(0, |&n| usize::from(n));
            out.push((code, (at + 1) as u32, (at + 1 + len) as u32));
            at += 1 + len;
        }
        out
    })
}

/// A Hangul syllable's canonical decomposition into its two or three jamo (Unicode's
/// algorithm, chapter 3.12), which the table leaves out: 11,172 syllables.
pub fn hangul_jamo(c: char) -> Option<[Option<char>; 3]> {
    let s = (c as u32).checked_sub(0xAC00).filter(|&s| s < 11_172)?;
    let (l, v, t) = (0x1100 + s / 588, 0x1161 + (s % 588) / 28, s % 28);
    Some([
        char::from_u32(l),
        char::from_u32(v),
        (t > 0).then(|| char::from_u32(0x11A7 + t)).flatten(),
    ])
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
