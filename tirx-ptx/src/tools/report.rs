//! Reading what `ptxas -v` prints: per-function registers, barriers, shared memory, stack
//! and spills ([`FunctionReport`]), and the warnings ([`PtxasReport`]).

/// What ptxas said about one function (`ptxas -v`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionReport {
    /// The PTX name.
    pub name: String,
    /// A kernel (`.entry`), rather than a device function (`.func`).
    pub entry: bool,
    /// `Used N registers`.
    pub registers: u32,
    /// `used N barriers` (named barriers, `bar.sync`).
    pub barriers: u32,
    /// `N bytes smem`: static shared memory.
    pub smem_bytes: u32,
    /// `N bytes stack frame`.
    pub stack_frame_bytes: u32,
    /// `N bytes spill stores`.
    pub spill_store_bytes: u32,
    /// `N bytes spill loads`.
    pub spill_load_bytes: u32,
}

impl FunctionReport {
    /// Any register spilled to local memory.
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// The result of a successful `ptxas -v` run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasReport {
    /// Every function ptxas reported on, in its order (entries and device functions).
    pub functions: Vec<FunctionReport>,
    /// `ptxas warning : …` lines (and located `…; warning : …` ones), verbatim.
    pub warnings: Vec<String>,
    /// Everything ptxas printed.
    pub log: String,
    /// The assembled ELF.
    pub cubin: Vec<u8>,
}

impl PtxasReport {
    /// Parse the text `ptxas -v` prints (ptxas 12.x and 13.x read the same). Lines it does not
    /// know are kept in `log` only.
    pub fn from_log(log: &str, cubin: Vec<u8>) -> PtxasReport {
        let mut report = PtxasReport {
            log: log.to_owned(),
            cubin,
            ..PtxasReport::default()
        };
        // Index into `functions` of the function the next property lines describe.
        let mut current: Option<usize> = None;
        for line in log.lines() {
            if let Some(rest) = line.strip_prefix("ptxas info    : Compiling entry function '") {
                let name = rest.split('\'').next().unwrap_or_default();
                report.functions.push(FunctionReport {
                    name: name.to_owned(),
                    entry: true,
                    ..FunctionReport::default()
                });
                current = Some(report.functions.len() - 1);
            } else if let Some(name) = line.strip_prefix("ptxas info    : Function properties for ")
            {
                // Entries were announced by "Compiling entry function"; device functions not.
                let name = name.trim();
                let found = report.functions.iter().rposition(|f| f.name == name);
                current = Some(found.unwrap_or_else(|| {
                    report.functions.push(FunctionReport {
                        name: name.to_owned(),
                        ..FunctionReport::default()
                    });
                    report.functions.len() - 1
                }));
            } else if is_warning(line) {
                report.warnings.push(line.trim().to_owned());
            } else if let Some(function) = current.map(|i| &mut report.functions[i]) {
                // "    0 bytes stack frame, …" and "ptxas info    : Used 10 registers, …".
                let properties = line.strip_prefix("ptxas info    :").unwrap_or(line);
                for (value, key) in properties.split(',').filter_map(property) {
                    match key.as_str() {
                        "registers" => function.registers = value,
                        "barriers" => function.barriers = value,
                        "smem" => function.smem_bytes = value,
                        "stack frame" => function.stack_frame_bytes = value,
                        "spill stores" => function.spill_store_bytes = value,
                        "spill loads" => function.spill_load_bytes = value,
                        _ => {}
                    }
                }
            }
        }
        report
    }

    /// The entry (kernel) called `name`.
    pub fn entry(&self, name: &str) -> Option<&FunctionReport> {
        self.functions.iter().find(|f| f.entry && f.name == name)
    }
}

/// `ptxas warning : …` or `ptxas kernel.ptx, line 3; warning : …`.
fn is_warning(line: &str) -> bool {
    line.starts_with("ptxas")
        && line
            .split_once(" : ")
            .is_some_and(|(head, _)| head.trim_end().ends_with("warning"))
}

/// `"Used 10 registers"` → `(10, "registers")`; `"1024 bytes smem"` → `(1024, "smem")`.
fn property(text: &str) -> Option<(u32, String)> {
    let mut words = text
        .split_whitespace()
        .skip_while(|w| w.parse::<u32>().is_err());
    let value = words.next()?.parse().ok()?;
    let key: Vec<&str> = words.skip_while(|w| *w == "bytes").collect();
    Some((value, key.join(" ")))
}
