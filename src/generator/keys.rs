//! Which key an operation touches: uniform, Zipfian, or hotspot (80% of the
//! operations on 20% of the keys).
//!
//! Zipf uses rejection-inversion sampling (Hörmann and Derflinger), which
//! needs O(1) memory and time per draw, so a billion keys cost nothing.
//! Slot 0 is the hottest key.

use super::rng::Rng;

/// How operations pick keys.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Every key equally likely.
    Uniform,
    /// Zipfian: key `i` about `1/i^s` as likely as the hottest.
    Zipf,
    /// 80% of the operations on the first 20% of the keys.
    Hotspot,
}

impl Distribution {
    /// Its name, as `elle-si gen --distribution` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Zipf => "zipf",
            Distribution::Hotspot => "hotspot",
        }
    }
}

pub(crate) struct KeyChooser {
    n: u64,
    dist: Distribution,
    zipf: Option<Zipf>,
}

impl KeyChooser {
    /// `n` keys (at least 1); `exponent` is Zipf's s (positive).
    pub fn new(n: u64, dist: Distribution, exponent: f64) -> KeyChooser {
        let n = n.max(1);
        KeyChooser {
            n,
            dist,
            zipf: (dist == Distribution::Zipf).then(|| Zipf::new(n, exponent)),
        }
    }

    /// A key slot in `0..n`.
    pub fn slot(&self, rng: &mut Rng) -> u64 {
        match (self.dist, &self.zipf) {
            (Distribution::Zipf, Some(z)) => z.sample(rng) - 1,
            (Distribution::Hotspot, _) => {
                let hot = (self.n / 5).max(1);
                if rng.unit() < 0.8 || hot == self.n {
                    rng.below(hot)
                } else {
                    hot + rng.below(self.n - hot)
                }
            }
            _ => rng.below(self.n),
        }
    }
}

/// Zipf over `1..=n` with exponent `s`.
struct Zipf {
    n: u64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    sdiv: f64,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Zipf {
        let h_x1 = h_integral(1.5, s) - 1.0;
        let h_n = h_integral(n as f64 + 0.5, s);
        let sdiv = 2.0 - h_integral_inverse(h_integral(2.5, s) - h(2.0, s), s);
        Zipf {
            n,
            s,
            h_x1,
            h_n,
            sdiv,
        }
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.unit() * (self.h_x1 - self.h_n);
            let x = h_integral_inverse(u, self.s);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.sdiv || u >= h_integral(kf + 0.5, self.s) - h(kf, self.s) {
                return k;
            }
        }
    }
}

fn h(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

fn h_integral(x: f64, s: f64) -> f64 {
    let lx = x.ln();
    helper2((1.0 - s) * lx) * lx
}

fn h_integral_inverse(x: f64, s: f64) -> f64 {
    let t = (x * (1.0 - s)).max(-1.0);
    (helper1(t) * x).exp()
}

/// ln(1 + x) / x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(dist: Distribution, n: u64, draws: usize) -> Vec<u32> {
        let k = KeyChooser::new(n, dist, 0.99);
        let mut r = Rng::new(3, 0);
        let mut h = vec![0u32; n as usize];
        for _ in 0..draws {
            h[k.slot(&mut r) as usize] += 1;
        }
        h
    }

    #[test]
    fn zipf_prefers_low_slots_and_covers_the_range() {
        let h = histogram(Distribution::Zipf, 100, 100_000);
        assert!(h[0] > h[1] && h[1] > h[9] && h[9] > h[99], "{h:?}");
        // Harmonic with s ~ 1: slot 0 gets about 1 / H(100) ~ 19%.
        assert!((15_000..25_000).contains(&h[0]), "{}", h[0]);
    }

    #[test]
    fn hotspot_puts_eighty_percent_on_a_fifth() {
        let h = histogram(Distribution::Hotspot, 100, 100_000);
        let hot: u32 = h[..20].iter().sum();
        assert!((78_000..82_000).contains(&hot), "{hot}");
        assert!(h[20..].iter().all(|&c| c > 0));
    }

    #[test]
    fn one_key_always_gives_slot_zero() {
        for d in [
            Distribution::Uniform,
            Distribution::Zipf,
            Distribution::Hotspot,
        ] {
            assert!(histogram(d, 1, 100)[0] == 100);
        }
    }
}
