//! Variants measured in interleaved rounds: the one way every experiment of the lab times what
//! it compares.
//!
//! Each variant runs once untimed first (the warm-up: a fresh process pays for page faults, for
//! memory touched the first time and for waking idle CPUs, which is not the steady state a
//! comparison should show; in one quick run without it threadlab's empty spawns measured 146 ns
//! per task, and 38 ns a few seconds later). Then every round times each variant once, in order
//! on even rounds and in reverse on odd ones, so that a slow phase of a shared machine, and
//! whatever running just before costs the next variant, hit every variant alike. The figure is
//! the median of the rounds, with the spread of the samples beside it.

use crate::lab::stats::median;
use std::time::Instant;

/// One variant's samples, one per round.
#[derive(Debug, Clone)]
pub struct Samples {
    /// Their median (NaN when there are none).
    pub median: f64,
    /// Their spread: (largest − smallest) / median (0 for one sample).
    pub spread: f64,
    /// The smallest (NaN when there are none).
    pub min: f64,
}

impl Samples {
    /// The median and spread of `xs`.
    pub fn of(mut sorted: Vec<f64>) -> Samples {
        let median = median(&mut sorted);
        let spread = match (sorted.first(), sorted.last()) {
            (Some(lo), Some(hi)) if median != 0.0 => (hi - lo) / median,
            _ => 0.0,
        };
        let min = sorted.iter().copied().fold(f64::NAN, f64::min);
        Samples {
            median,
            spread,
            min,
        }
    }
}

/// Which run of a variant is asked for: the untimed warm-up, or a round (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// The run before the rounds; its sample is not counted.
    WarmUp,
    /// Round `i` of the counted ones.
    Round(usize),
}

impl Turn {
    /// `n` in a round; a tenth of it (at least 1) in the warm-up, which only has to touch what
    /// the rounds will use.
    pub fn tenth_in_warm_up(self, n: u64) -> u64 {
        match self {
            Turn::WarmUp => (n / 10).max(1),
            Turn::Round(_) => n,
        }
    }
}

type Run<'a> = Box<dyn FnMut(Turn) -> Result<f64, String> + 'a>;

/// A variant: a label for the progress line and what one timed run does.
pub struct Variant<'a> {
    /// Shown while it runs.
    pub label: String,
    run: Run<'a>,
}

impl<'a> Variant<'a> {
    /// A variant whose sample is the wall time of one call of `f`, in seconds.
    pub fn timed(label: impl Into<String>, mut f: impl FnMut() + 'a) -> Self {
        Self::try_timed(label, move || {
            f();
            Ok(())
        })
    }

    /// Like [`Variant::timed`], for a run that can fail (the rounds stop at the first error).
    pub fn try_timed(
        label: impl Into<String>,
        mut f: impl FnMut() -> Result<(), String> + 'a,
    ) -> Self {
        Self::timed_by_turn(label, move |_| f())
    }

    /// Like [`Variant::try_timed`], told which run it is (a smaller warm-up, or figures kept
    /// from the rounds only).
    pub fn timed_by_turn(
        label: impl Into<String>,
        mut f: impl FnMut(Turn) -> Result<(), String> + 'a,
    ) -> Self {
        Self::by_turn(label, move |turn| {
            let t = Instant::now();
            f(turn)?;
            Ok(t.elapsed().as_secs_f64())
        })
    }

    /// A variant that measures itself and returns its sample (setup kept out of the figure, or
    /// a figure that is not a time).
    pub fn measured(
        label: impl Into<String>,
        mut f: impl FnMut() -> Result<f64, String> + 'a,
    ) -> Self {
        Self::by_turn(label, move |_| f())
    }

    /// Like [`Variant::measured`], told which run it is.
    pub fn by_turn(
        label: impl Into<String>,
        f: impl FnMut(Turn) -> Result<f64, String> + 'a,
    ) -> Self {
        Variant {
            label: label.into(),
            run: Box::new(f),
        }
    }
}

/// Runs each of `variants` once untimed, then `rounds` rounds (at least one) that run each once,
/// alternating the order, and returns each variant's samples. `step` is told what runs.
pub fn interleaved(
    step: impl Fn(String),
    rounds: usize,
    variants: &mut [Variant<'_>],
) -> Result<Vec<Samples>, String> {
    for v in variants.iter_mut() {
        step(format!("warm-up, {}", v.label));
        (v.run)(Turn::WarmUp)?;
    }
    let rounds = rounds.max(1);
    let mut xs = vec![Vec::with_capacity(rounds); variants.len()];
    for round in 0..rounds {
        for k in 0..variants.len() {
            let k = if round % 2 == 0 {
                k
            } else {
                variants.len() - 1 - k
            };
            let v = &mut variants[k];
            step(format!("round {}/{rounds}, {}", round + 1, v.label));
            xs[k].push((v.run)(Turn::Round(round))?);
        }
    }
    Ok(xs.into_iter().map(Samples::of).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn every_variant_warms_up_once_then_takes_turns() {
        let log = RefCell::new(Vec::new());
        let mut variants: Vec<Variant<'_>> = ["a", "b", "c"]
            .into_iter()
            .map(|name| {
                let log = &log;
                let mut n = 0.0;
                Variant::measured(name, move || {
                    log.borrow_mut().push(name);
                    n += 1.0;
                    Ok(n)
                })
            })
            .collect();
        let samples = interleaved(|_| {}, 3, &mut variants).unwrap();
        drop(variants);
        let order: String = log.into_inner().concat();
        assert_eq!(order, "abc".to_owned() + "abc" + "cba" + "abc");
        assert_eq!(samples.len(), 3);
        // Sample 1 was the warm-up; the rounds gave 2, 3, 4.
        assert_eq!(samples[0].median, 3.0);
        assert!((samples[0].spread - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_variant_is_told_which_run_it_is() {
        let turns = RefCell::new(Vec::new());
        let mut variants = vec![Variant::timed_by_turn("a", |turn| {
            turns.borrow_mut().push(turn);
            Ok(())
        })];
        interleaved(|_| {}, 2, &mut variants).unwrap();
        drop(variants);
        assert_eq!(
            turns.into_inner(),
            [Turn::WarmUp, Turn::Round(0), Turn::Round(1)]
        );
        assert_eq!(Turn::WarmUp.tenth_in_warm_up(25), 2);
        assert_eq!(Turn::WarmUp.tenth_in_warm_up(5), 1);
        assert_eq!(Turn::Round(0).tenth_in_warm_up(25), 25);
    }

    #[test]
    fn the_first_error_stops_the_rounds() {
        let mut runs = 0;
        let mut variants = vec![Variant::try_timed("fails", || {
            runs += 1;
            if runs == 2 {
                Err("broken".into())
            } else {
                Ok(())
            }
        })];
        assert_eq!(interleaved(|_| {}, 5, &mut variants).unwrap_err(), "broken");
    }
}
