//! How results leave the lab: aligned terminal tables, SVG charts, the HTML report and
//! `results.json`.

pub mod html;
pub mod json;
pub mod svg;
pub mod table;

use crate::lab::cpu_placement::{self, Placement};
use crate::lab::cpu_speed::{self, CpuSpeed};
use crate::machine::Machine;
use serde::Serialize;

/// The machine a run measured on, with the lab's checks of its CPUs: `results.json`'s `machine`
/// block (the topology's fields, then the checks') and the report's description of the machine.
#[derive(Debug, Clone, Serialize)]
pub struct Setting {
    /// The topology (`threadlab topology`).
    #[serde(flatten)]
    pub machine: Machine,
    /// Each CPU's speed before the experiments (`cpu_speed.rs`); empty when not possible.
    pub cpu_speed_before: Vec<CpuSpeed>,
    /// The same check after the experiments.
    pub cpu_speed_after: Vec<CpuSpeed>,
    /// Where the kernel started threads woken by a busy thread, checked once before the
    /// experiments (`cpu_placement.rs`); `None` when not possible.
    pub cpu_placement: Option<Placement>,
}

impl Setting {
    /// The topology's text view, then the checks that ran.
    pub fn render(&self) -> String {
        let mut s = self.machine.render();
        for (when, speeds) in [
            ("before", &self.cpu_speed_before),
            ("after", &self.cpu_speed_after),
        ] {
            if !speeds.is_empty() {
                s += &cpu_speed::describe(when, speeds);
                s += "\n";
            }
        }
        if let Some(p) = &self.cpu_placement {
            s += &cpu_placement::describe(Some(p));
            s += "\n";
        }
        s
    }
}
