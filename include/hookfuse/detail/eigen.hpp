// hookfuse/detail/eigen.hpp: <Eigen/Core>, with GCC 12's false -Wmaybe-uninitialized in its own
// AVX-512 intrinsic headers silenced there, and only there. Every hookfuse header includes Eigen
// through this one.
//
// Why: GCC 12's x86 intrinsic headers implement _mm256_undefined_pd() and friends as
// `__m256d __Y = __Y; return __Y;` (GCC bug 105593, GCC 12.1 and 12.2). With -mavx512f
// (-march=x86-64-v4, or -march=native on an AVX-512 host) Eigen's packet code calls
// _mm512_extractf64x4_pd() and similar, whose bodies pass such an "undefined" value; once that
// is inlined into our code (the GEMM packing behind Graph::forward_range, the reductions) the
// middle end reports "'__Y' may be used uninitialized" (or "is used uninitialized") at a line
// of avx512fintrin.h. Being a system header does not shield it: GCC reports a middle-end
// warning unless every location of its inlining chain is in a system header, so -Werror stops
// the build.
//
// How: GCC decides such a warning from the `#pragma GCC diagnostic` state at the innermost
// location of the inlining chain first, which is the line inside the intrinsic header. So the
// intrinsic headers are included here, before Eigen includes them, inside an "ignored" region:
// the warning is off for locations in GCC's intrinsic headers and stays on for hookfuse's own
// code, Eigen's code and the user's. Include guards make this the intrinsics' only inclusion,
// provided no <immintrin.h> or <Eigen/Core> came earlier in the translation unit (a user who
// includes Eigen before hookfuse and builds for AVX-512 with GCC 12 sees GCC's warning in
// their own Eigen code, as without hookfuse).
//
// Only when compiling for AVX (__AVX__, which AVX-512 implies): that is when Eigen includes
// <immintrin.h> itself (ConfigureVectorization.h, EIGEN_VECTORIZE_AVX), and AVX-512 code needs
// it. Without AVX, Eigen includes only the SSE headers (<emmintrin.h> and the like), and
// including <immintrin.h> here would add every intrinsic header up to AVX-512 to the
// translation unit: 0.3 s and 85 MB of compiler time and memory at -O0 with g++ 12, a third of
// what Eigen/Dense costs (issue 12).
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX__) && \
    (defined(__x86_64__) || defined(__i386__))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <Eigen/Core>
