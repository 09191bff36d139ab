//! Analytic write amplification under uniform random single-unit writes (page-level mapping), as
//! in shared/reference/model-notes.md: what the simulator's steady state is checked against.

/// FIFO (LRU) cleaning, Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012:
/// the victim's valid fraction x solves x = exp(−α (1 − x)) and WA = 1 / (1 − x), where α is
/// physical / user capacity (1 + spare factor). Independent of block size.
pub fn wa_fifo(alpha: f64) -> f64 {
    let mut x = 0.5;
    for _ in 0..200 {
        x = (-alpha * (1.0 - x)).exp();
    }
    1.0 / (1.0 - x)
}

/// Greedy cleaning with `b` units per block (Bux & Iliadis 2010, Van Houdt 2013), via Desnoyers'
/// approximation WA_fifo(k α) / k with k = 1 + 1/(2b).
pub fn wa_greedy(alpha: f64, b: f64) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * b);
    wa_fifo(k * alpha) / k
}

/// Random cleaning (d-choices with d = 1): α / (α − 1).
pub fn wa_random(alpha: f64) -> f64 {
    alpha / (alpha - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduce_the_reference_table() {
        // model-notes.md: sf 0.07 -> FIFO 7.82, greedy b=64 7.01; sf 0.25 -> 2.69, 2.60; sf 0.5 -> 1.72.
        assert!((wa_fifo(1.07) - 7.82).abs() < 0.01);
        assert!((wa_greedy(1.07, 64.0) - 7.01).abs() < 0.01);
        assert!((wa_greedy(1.07, 1024.0) - 7.76).abs() < 0.01);
        assert!((wa_fifo(1.25) - 2.69).abs() < 0.01);
        assert!((wa_greedy(1.25, 64.0) - 2.60).abs() < 0.01);
        assert!((wa_fifo(1.5) - 1.72).abs() < 0.01);
        assert!((wa_random(1.5) - 3.0).abs() < 1e-12);
    }
}
