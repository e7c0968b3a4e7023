/* xoshiro256++ as published by Blackman and Vigna (prng.di.unimi.it), and
   SplitMix64, written out from the published algorithms; prints the words
   TestXoshiroReference compares against (gcc -O2 xoshiro.c && ./a.out). */
#include <stdio.h>
#include <stdint.h>
static inline uint64_t rotl(const uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static uint64_t s[4];
uint64_t next(void) {
	const uint64_t result = rotl(s[0] + s[3], 23) + s[0];
	const uint64_t t = s[1] << 17;
	s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}
static uint64_t x;
uint64_t sm(void) {
	uint64_t z = (x += 0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
	return z ^ (z >> 31);
}
int main(void) {
	s[0]=1; s[1]=2; s[2]=3; s[3]=4;
	for (int i = 0; i < 5; i++) printf("%#llx\n", (unsigned long long)next());
	for (int i = 0; i < 999995; i++) next();
	printf("word 1000000: %#llx\n", (unsigned long long)next());
	/* Xoshiro.Seed(a, b): three Feistel rounds on (a, b) with SplitMix64's
	   output function, then two SplitMix64 words from each half. */
	uint64_t seeds[2][2] = {{0, 0}, {12345, 67890}};
	for (int k = 0; k < 2; k++) {
		uint64_t a = seeds[k][0], b = seeds[k][1], u, v;
		x = b; u = a ^ sm();
		x = u; v = b ^ sm();
		x = v; u ^= sm();
		x = u; s[0] = sm(); s[1] = sm();
		x = v; s[2] = sm(); s[3] = sm();
		printf("seed %llu %llu:", (unsigned long long)a, (unsigned long long)b);
		for (int i = 0; i < 3; i++) printf(" %#llx", (unsigned long long)next());
		printf("\n");
	}
	return 0;
}
