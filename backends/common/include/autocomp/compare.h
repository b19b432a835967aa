// autocomp/compare.h — tolerance and the comparison of a kernel's outputs with the reference (C++17).
//
// Part of the judge kit (backends/common/include). Before every call the outputs are filled with a
// poison NaN whose bit pattern no arithmetic produces (kPoisonBits, or a target's own pattern such as
// the CUDA worker's all-ones bytes), so the comparison tells apart:
//   unwritten     still the poison: the kernel never wrote the element;
//   computed_nan  a NaN the kernel computed (0/0, inf-inf);
//   infinite      an infinity;
//   bad           every element with |x - ref| > atol + rtol*|ref|, the three above included.
// describe_failure turns a failed comparison into the message a programmer needs: which problem,
// shape, input set and output, how many elements, the worst one and the first five, by index.
#pragma once

#include "autocomp/shapes.h"
#include "autocomp/untrusted_io.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace autocomp {
namespace kit {

constexpr std::uint32_t kPoisonBits = 0x7FC5A5A5u;  // a quiet NaN no arithmetic produces

struct Tolerance {
    double rtol = 1e-4;
    double atol = 1e-5;
};

// "rtol=R,atol=A" (either may be left out); anything else is an error naming the entry.
inline Tolerance parse_tolerance(const std::string& text) {
    Tolerance t;
    for (const auto& kv : split(text, ',')) {
        const auto eq = kv.find('=');
        const std::string key = eq == std::string::npos ? kv : trim(kv.substr(0, eq));
        const double v = eq == std::string::npos ? -1.0 : std::strtod(kv.c_str() + eq + 1, nullptr);
        if (key == "rtol" && v >= 0)
            t.rtol = v;
        else if (key == "atol" && v >= 0)
            t.atol = v;
        else
            throw std::runtime_error("bad tolerance entry '" + kv + "' (expected rtol=X,atol=Y)");
    }
    return t;
}

inline float poison_value(std::uint32_t bits = kPoisonBits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline bool is_poison(float x, std::uint32_t bits = kPoisonBits) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b == bits;
}

// "[i,j]" for a flat index into an output of the given dims ("[i]" for one dimension).
inline std::string index_text(const Dims& dims, std::size_t flat) {
    if (dims.size() < 2)
        return "[" + std::to_string(flat) + "]";
    std::vector<long long> idx(dims.size());
    auto rest = static_cast<long long>(flat);
    for (std::size_t d = dims.size(); d-- > 0;) {
        idx[d] = dims[d] > 0 ? rest % dims[d] : 0;
        rest = dims[d] > 0 ? rest / dims[d] : 0;
    }
    std::string out = "[";
    for (std::size_t d = 0; d < idx.size(); ++d)
        out += (d ? "," : "") + std::to_string(idx[d]);
    return out + "]";
}

struct Comparison {
    std::size_t checked = 0, bad = 0;
    std::size_t unwritten = 0;     // still the poison: never written by the kernel
    std::size_t computed_nan = 0;  // NaN the kernel computed
    std::size_t infinite = 0;
    double max_abs = 0.0, max_rel = 0.0, worst_ratio = 0.0;
    std::size_t worst_index = 0;
    float worst_value = 0.0f, worst_ref = 0.0f;
    std::uint32_t poison_bits = kPoisonBits;
    std::string examples;
    bool ok() const { return bad == 0; }
};

inline Comparison compare(const float* got, const float* ref, std::size_t n, const Tolerance& tol, const Dims& dims,
                          std::uint32_t poison_bits = kPoisonBits) {
    Comparison c;
    c.checked = n;
    c.poison_bits = poison_bits;
    int shown = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double r = ref[i];
        const float xf = got[i];
        const double x = xf;
        double ratio;
        if (std::isnan(xf)) {
            ++(is_poison(xf, poison_bits) ? c.unwritten : c.computed_nan);
            ratio = std::numeric_limits<double>::infinity();
        } else if (std::isinf(xf)) {
            ++c.infinite;
            ratio = std::numeric_limits<double>::infinity();
        } else {
            const double err = std::fabs(x - r);
            c.max_abs = std::max(c.max_abs, err);
            if (r != 0.0)
                c.max_rel = std::max(c.max_rel, err / std::fabs(r));
            ratio = err / (tol.atol + tol.rtol * std::fabs(r));
        }
        if (ratio > 1.0) {
            ++c.bad;
            if (shown < 5) {
                char buf[200];
                std::snprintf(buf, sizeof buf, "\n    at %s: got %s, expected %.9g", index_text(dims, i).c_str(),
                              is_poison(xf, poison_bits) ? "(never written)" : fmt("%.9g", x).c_str(), r);
                c.examples += buf;
                ++shown;
            }
        }
        if (ratio > c.worst_ratio || (i == 0 && ratio > 1.0)) {
            c.worst_ratio = ratio;
            c.worst_index = i;
            c.worst_value = xf;
            c.worst_ref = ref[i];
        }
    }
    return c;
}

inline Comparison compare(const float* got, const Buffer& ref, const Tolerance& tol, const Dims& dims,
                          std::uint32_t poison_bits = kPoisonBits) {
    return compare(got, ref.data(), ref.size(), tol, dims, poison_bits);
}

// `who` says who filled the outputs with the poison ("the judge", "the worker").
inline std::string describe_failure(const std::string& problem, const Shape& shape, const std::string& which, std::size_t output,
                                    const Comparison& c, const Tolerance& tol, const Dims& dims, const std::string& who = "the judge") {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "MISMATCH in %s at shape %s (%s, output %zu): %zu of %zu elements outside "
                  "|x-ref| <= atol + rtol*|ref| (rtol=%g, atol=%g)",
                  problem.c_str(), shape.text().c_str(), which.c_str(), output, c.bad, c.checked, tol.rtol, tol.atol);
    std::string msg = buf;
    if (c.unwritten > 0)
        msg += "\n  " + std::to_string(c.unwritten) + " elements were never written: they still hold the NaN " + who +
               " filled the output with before the call";
    if (c.computed_nan > 0)
        msg += "\n  " + std::to_string(c.computed_nan) + " elements are NaN computed by the kernel (e.g. 0/0 or inf-inf)";
    if (c.infinite > 0)
        msg += "\n  " + std::to_string(c.infinite) + " elements are infinite";
    if (!is_poison(c.worst_value, c.poison_bits)) {
        std::snprintf(buf, sizeof buf, "\n  worst element %s: got %.9g, expected %.9g", index_text(dims, c.worst_index).c_str(),
                      static_cast<double>(c.worst_value), static_cast<double>(c.worst_ref));
        msg += buf;
    }
    msg += "\n  first mismatches:" + c.examples;
    return msg;
}

} // namespace kit
} // namespace autocomp
