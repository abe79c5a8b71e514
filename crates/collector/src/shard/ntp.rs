//! The kernel's clock-discipline state, read with `adjtimex(2)` in read-only mode (`modes` 0:
//! nothing is set, no privilege is needed). The one call outside safe Rust in sloscope.

use sloscope_core::schema::NtpState;

/// What the kernel says of its clock now.
#[allow(unsafe_code)]
// `c_long` is `i64` here but `i32` on 32-bit targets: the conversion is kept.
#[allow(clippy::useless_conversion)]
pub fn state() -> NtpState {
    // SAFETY: `timex` is plain old data, so all-zero is a valid value; with `modes` 0 the
    // kernel only fills the struct, whose address is valid for the call.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    t.modes = 0;
    let rc = unsafe { libc::adjtimex(&mut t) };
    if rc < 0 {
        return NtpState {
            synchronized: None,
            est_error_us: None,
            max_error_us: None,
            note: Some(format!(
                "adjtimex failed: {}",
                std::io::Error::last_os_error()
            )),
        };
    }
    let unsync = rc == libc::TIME_ERROR || (t.status & libc::STA_UNSYNC) != 0;
    NtpState {
        synchronized: Some(!unsync),
        est_error_us: Some(i64::from(t.esterror)),
        max_error_us: Some(i64::from(t.maxerror)),
        note: None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_kernel_answers() {
        let s = super::state();
        assert!(s.synchronized.is_some() || s.note.is_some());
        assert!(s.max_error_us.is_none_or(|e| e >= 0));
    }
}
