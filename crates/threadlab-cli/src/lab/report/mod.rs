//! How results leave the lab: aligned terminal tables, SVG charts, the HTML report and
//! `results.json`.

pub mod html;
pub mod json;
pub mod svg;
pub mod table;
