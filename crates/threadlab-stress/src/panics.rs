//! The text of a caught panic, for the commands that catch them: the stress run (a scenario's
//! task that panicked on purpose is told apart from one that panicked by mistake) and the CLI's
//! lab runner (an experiment that panicked is reported by name with this text), which uses it
//! from here.

/// The text of a panic payload: the `&str` or `String` that `panic!` was given, or a placeholder
/// for any other payload.
///
/// ```
/// let caught = std::panic::catch_unwind(|| panic!("the {} went wrong", "step")).unwrap_err();
/// assert_eq!(threadlab_stress::panics::panic_message(&*caught), "the step went wrong");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".into()
    }
}

#[cfg(test)]
mod tests {
    use super::panic_message;
    use std::any::Any;

    #[test]
    fn text_payloads_are_read_and_others_named() {
        // The payloads `panic!` makes: a `&'static str` for a literal, a `String` when formatted.
        let literal: Box<dyn Any + Send> = Box::new("a literal");
        let formatted: Box<dyn Any + Send> = Box::new(format!("formatted {}", 7));
        let other: Box<dyn Any + Send> = Box::new(7u8);
        assert_eq!(panic_message(&*literal), "a literal");
        assert_eq!(panic_message(&*formatted), "formatted 7");
        assert_eq!(panic_message(&*other), "a panic with a non-text payload");
    }
}
