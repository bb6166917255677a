// Zipf-distributed ranks: P(rank = k) proportional to 1 / k^theta for k in [1, n].
//
// Rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 6(3), 1996), in the form Apache Commons
// Math uses: the hat's integral is H(x) = (x^(1-theta) - 1) / (1 - theta), which has a limit at
// theta = 1, so every theta >= 0 works (theta = 0 is exactly uniform). Why this and not the
// Gray et al. generator that YCSB uses: it samples the exact distribution rather than an
// approximation, and it needs O(1) set-up instead of an O(n) zeta sum, which matters for
// working sets of 10^8 slots and more. Expected draws per sample are close to 1.
//
// Determinism: it uses libm's log, exp, log1p and expm1, so a seed gives the same ranks on
// every machine with the same libm. Another libm may round a last bit differently and, rarely,
// move a sample across an acceptance or rounding boundary.
#pragma once

#include <cstdint>

#include "flashdir/random.h"

namespace flashdir::sim::detail {

class ZipfSampler {
 public:
  // n >= 1; theta finite and >= 0.
  ZipfSampler(std::uint64_t n, double theta);

  // A rank in [1, n]; 1 is the most likely.
  std::uint64_t sample(SeededRandom& random) const;

 private:
  double h(double x) const;                 // the hat: x^-theta
  double h_integral(double x) const;        // H(x)
  double h_integral_inverse(double x) const;

  std::uint64_t n_;
  double theta_;
  double h_integral_x1_;  // H(1.5) - 1: the lower end of the sampled interval
  double h_integral_n_;   // H(n + 0.5): the upper end
  double s_;              // 2 - H^-1(H(2.5) - h(2)): accepts most samples without evaluating H
};

}  // namespace flashdir::sim::detail
