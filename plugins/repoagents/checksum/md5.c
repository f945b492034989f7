/*
 * md5.c: MD5 as RFC 1321 specifies it: 64-byte blocks, four rounds of
 * sixteen steps, the sine table and the shift amounts of the RFC, and the
 * length padding in little-endian order.
 */
#include "md5.h"

#include <string.h>

/* T[i] = floor(abs(sin(i + 1)) * 2^32), the RFC's table. */
static const uint32_t T[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

/* The left rotations of each round's four steps. */
static const unsigned S[4][4] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

static uint32_t
rotl(uint32_t x, unsigned n)
{
  return (x << n) | (x >> (32 - n));
}

/* One 64-byte block. */
static void
transform(uint32_t state[4], const unsigned char block[64])
{
  uint32_t x[16];
  for (int i = 0; i < 16; i++) {
    x[i] = (uint32_t)block[4 * i] | (uint32_t)block[4 * i + 1] << 8 |
           (uint32_t)block[4 * i + 2] << 16 | (uint32_t)block[4 * i + 3] << 24;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  for (int i = 0; i < 64; i++) {
    uint32_t f;
    int k;
    switch (i / 16) {
      case 0:
        f = (b & c) | (~b & d);
        k = i;
        break;
      case 1:
        f = (b & d) | (c & ~d);
        k = (5 * i + 1) % 16;
        break;
      case 2:
        f = b ^ c ^ d;
        k = (3 * i + 5) % 16;
        break;
      default:
        f = c ^ (b | ~d);
        k = (7 * i) % 16;
        break;
    }
    uint32_t next = b + rotl(a + f + T[i] + x[k], S[i / 16][i % 4]);
    a = d;
    d = c;
    c = b;
    b = next;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

void
md5_init(struct md5* m)
{
  m->state[0] = 0x67452301;
  m->state[1] = 0xefcdab89;
  m->state[2] = 0x98badcfe;
  m->state[3] = 0x10325476;
  m->length = 0;
  m->used = 0;
}

void
md5_update(struct md5* m, const void* data, size_t len)
{
  const unsigned char* p = data;
  m->length += len;
  while (len > 0) {
    size_t n = 64 - m->used < len ? 64 - m->used : len;
    memcpy(m->block + m->used, p, n);
    m->used += n;
    p += n;
    len -= n;
    if (m->used == 64) {
      transform(m->state, m->block);
      m->used = 0;
    }
  }
}

void
md5_final(struct md5* m, unsigned char out[16])
{
  uint64_t bits = m->length * 8;
  static const unsigned char pad[64] = {0x80};
  size_t padding = m->used < 56 ? 56 - m->used : 120 - m->used;
  md5_update(m, pad, padding);
  unsigned char len[8];
  for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (8 * i));
  md5_update(m, len, 8);
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++)
      out[4 * i + j] = (unsigned char)(m->state[i] >> (8 * j));
  }
}
