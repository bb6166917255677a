#include "zipf_sampler.h"

#include <cassert>
#include <cmath>

namespace flashdir::sim::detail {
namespace {

// log(1 + x) / x and (exp(x) - 1) / x, with their Taylor series near 0 where the quotients
// would lose all precision (theta close to 1).
double log1p_over_x(double x) {
  if (std::abs(x) > 1e-8) return std::log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

double expm1_over_x(double x) {
  if (std::abs(x) > 1e-8) return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

}  // namespace

ZipfSampler::ZipfSampler(std::uint64_t n, double theta) : n_(n), theta_(theta) {
  assert(n >= 1);
  assert(std::isfinite(theta) && theta >= 0);
  h_integral_x1_ = h_integral(1.5) - 1.0;
  h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
  s_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const { return std::exp(-theta_ * std::log(x)); }

double ZipfSampler::h_integral(double x) const {
  const double log_x = std::log(x);
  return expm1_over_x((1.0 - theta_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - theta_);
  if (t < -1.0) t = -1.0;  // rounding can push t just below the pole of log1p
  return std::exp(log1p_over_x(t) * x);
}

std::uint64_t ZipfSampler::sample(SeededRandom& random) const {
  const double n = static_cast<double>(n_);
  while (true) {
    // u uniform in (H(1.5) - 1, H(n + 0.5)]: the area under the hat.
    const double u = h_integral_n_ + random.unit() * (h_integral_x1_ - h_integral_n_);
    const double x = h_integral_inverse(u);
    // Round x to the nearest rank, kept inside [1, n] against rounding at both ends. The
    // comparison with n comes first so that no out-of-range double is converted.
    std::uint64_t k = 1;
    if (x + 0.5 >= n) {
      k = n_;
    } else if (x >= 1.5) {
      k = static_cast<std::uint64_t>(x + 0.5);
    }
    const double k_real = static_cast<double>(k);
    // Accept if x fell into k's part of the hat below the histogram bar of k.
    if (k_real - x <= s_ || u >= h_integral(k_real + 0.5) - h(k_real)) return k;
  }
}

}  // namespace flashdir::sim::detail
