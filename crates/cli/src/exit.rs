//! Exit codes: one enum per command. Each command's `--help` ends with its enum's table
//! ([`help`]), and the user guide's exit-code reference is generated from those help texts (a
//! test fails when the guide is stale), so the codes are written down once, here.

/// An exit code of a command and what it means to a caller.
pub struct Code {
    /// The process exit status.
    pub code: u8,
    /// What it means, in words.
    pub meaning: &'static str,
}

/// Declares one command's exit-code enum, its table of meanings and its help paragraph.
macro_rules! exit_codes {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $code:literal => $meaning:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        #[allow(dead_code)] // not every command returns every code it documents itself
        pub enum $name {
            $($(#[$vdoc])* $variant = $code,)+
        }

        impl $name {
            /// Every code with its meaning, in order.
            pub const ALL: &'static [Code] = &[$(Code { code: $code, meaning: $meaning },)+];

            /// The process exit status.
            pub const fn code(self) -> u8 {
                self as u8
            }

            /// The help paragraph listing every code.
            pub fn help() -> String {
                help(Self::ALL)
            }
        }

        impl From<$name> for std::process::ExitCode {
            fn from(e: $name) -> Self {
                Self::from(e.code())
            }
        }
    };
}

exit_codes! {
    /// `sloscope run` (also with `--shard`).
    Run {
        Ok = 0 => "every planned run finished",
        BadPlan = 2 => "bad plan or arguments (nothing run)",
        Incomplete = 3 => "a run is partial or failed, or was not run (each named on stderr, even with --quiet; written runs are marked so in their files)",
        Output = 4 => "output could not be written (a full disk: stderr says exactly how many finished requests the journal holds, or that the run file was written after all)",
        Hangup = 129 => "interrupted by SIGHUP (finished requests kept, runs marked partial, the server stopped)",
        Interrupt = 130 => "interrupted by Ctrl-C (as 129)",
        Terminate = 143 => "interrupted by SIGTERM (as 129)",
    }
}

exit_codes! {
    /// `sloscope analyze`.
    Analyze {
        Ok = 0 => "analysed",
        NotAccepted = 1 => "with --check, some profile is not accept",
        BadInput = 2 => "bad input (each bad file is named with the JSON path and what was expected; the good ones are still analysed)",
    }
}

exit_codes! {
    /// `sloscope import`.
    Import {
        Ok = 0 => "every file imported",
        Bad = 2 => "bad arguments or plan, or a file could not be imported (each named on stderr; the others are still written)",
        Output = 4 => "output could not be written",
    }
}

exit_codes! {
    /// `sloscope compare`.
    Compare {
        NoRegression = 0 => "no regression",
        Regression = 1 => "a regression (some metric's whole 95% interval worse than its threshold)",
        Bad = 2 => "bad input: a file that could not be read, bad arguments, the same runs on both sides, a broken lineage, nothing comparable, a planned cell missing after (incomplete), or no metric decided either way (inconclusive)",
    }
}

exit_codes! {
    /// `sloscope gate`.
    Gate {
        Accept = 0 => "accept",
        Reject = 1 => "reject",
        Bad = 2 => "bad input (nothing scored: an empty or non-text set, a server without probabilities, another tokenizer, a threshold out of range)",
        Partial = 3 => "partial (a server died or erred part-way: the positions scored are written, rejected)",
        Output = 4 => "the record could not be written",
        NotEnoughEvidence = 5 => "not enough evidence (too few positions for the limits to be decided)",
    }
}

exit_codes! {
    /// `sloscope k8s`.
    K8s {
        Ok = 0 => "rendered",
        Bad = 2 => "bad plan or arguments (a file the plan names outside its directory, a bad name)",
        Output = 4 => "the output could not be written",
    }
}

/// The help paragraph: `Exit codes:` and one line per code.
pub fn help(codes: &[Code]) -> String {
    let lines: Vec<String> = codes
        .iter()
        .map(|c| format!("  {:>3}  {}", c.code, c.meaning))
        .collect();
    format!("Exit codes:\n{}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_lists_each_code_once_in_order() {
        for all in [
            Run::ALL,
            Analyze::ALL,
            Import::ALL,
            Compare::ALL,
            Gate::ALL,
            K8s::ALL,
        ] {
            assert!(all.windows(2).all(|w| w[0].code < w[1].code));
            assert!(all.iter().all(|c| !c.meaning.is_empty()));
        }
        use sloscope_collector::failure::Signal;
        for (signal, code) in [
            (Signal::Hangup, Run::Hangup),
            (Signal::Interrupt, Run::Interrupt),
            (Signal::Terminate, Run::Terminate),
        ] {
            assert_eq!(signal.exit_code(), code.code(), "{signal:?}");
        }
        assert!(Gate::help().contains("  5  not enough evidence"));
    }
}
