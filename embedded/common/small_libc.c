/* embedded/common/small_libc.c: memcpy, memmove, memset, memcmp and strlen as plain byte loops, and
 * (newlib) expf and logf without errno.
 * Linked before the C library, they keep its speed-tuned versions out of a bare-metal program
 * (newlib-nano's memcpy alone is 308 bytes of Thumb-2; the five come to 40 bytes or so each
 * here). hookfuse copies a few hundred bytes per training step at most (a batch's feed), where
 * the difference in speed does not show. The optimize attribute keeps GCC from turning the loops
 * back into calls of the functions they define. */
#include <stddef.h>

#define HOOKFUSE_PLAIN_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))

HOOKFUSE_PLAIN_LOOP void* memcpy(void* restrict dst, const void* restrict src, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  while (n--) *d++ = *s++;
  return dst;
}

HOOKFUSE_PLAIN_LOOP void* memmove(void* dst, const void* src, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  if (d < s) {
    while (n--) *d++ = *s++;
  } else {
    while (n--) d[n] = s[n];
  }
  return dst;
}

HOOKFUSE_PLAIN_LOOP void* memset(void* dst, int c, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}

HOOKFUSE_PLAIN_LOOP int memcmp(const void* a, const void* b, size_t n) {
  const unsigned char* p = (const unsigned char*)a;
  const unsigned char* q = (const unsigned char*)b;
  for (; n != 0; --n, ++p, ++q)
    if (*p != *q) return *p < *q ? -1 : 1;
  return 0;
}

HOOKFUSE_PLAIN_LOOP size_t strlen(const char* s) {
  const char* p = s;
  while (*p) ++p;
  return (size_t)(p - s);
}

/* newlib's expf and logf are wrappers around __ieee754_expf and __ieee754_logf that set errno
 * on overflow, underflow and domain errors, and errno brings in newlib's reentrancy structure
 * (impure_data: 96 bytes of flash for its initial value, and of RAM). The softmax and the
 * cross-entropy never read errno, so these call the same functions without the wrapper: the
 * same results (inf, 0, -inf and nan included), no errno. picolibc's (RV32) have no wrapper. */
#include <math.h>
#if defined(_NEWLIB_VERSION) && !defined(__PICOLIBC__)
float __ieee754_expf(float);
float __ieee754_logf(float);
float expf(float x) { return __ieee754_expf(x); }
float logf(float x) { return __ieee754_logf(x); }
#endif
