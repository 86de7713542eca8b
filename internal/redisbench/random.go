package redisbench

import "sync"

// glibcRandom reproduces glibc's random()/srandom() (the default TYPE_3
// additive feedback generator, 31 words of state), so that --seed N gives the
// C tool's key sequence: key k is random() % keyspacelen.
type glibcRandom struct {
	ring [31]int32
	f, b int // the front and rear taps into ring
}

func newGlibcRandom(seed uint32) *glibcRandom {
	g := &glibcRandom{}
	g.seed(seed)
	return g
}

// seed is srandom(seed).
func (g *glibcRandom) seed(seed uint32) {
	if seed == 0 {
		seed = 1
	}
	var state [31]int32
	state[0] = int32(seed)
	word := int64(int32(seed))
	for i := 1; i < 31; i++ {
		// 16807 * word % (2^31 - 1) without overflow, as glibc computes it (Schrage).
		hi := word / 127773
		lo := word % 127773
		word = 16807*lo - 2836*hi
		if word < 0 {
			word += 2147483647
		}
		state[i] = int32(word)
	}
	g.ring = state
	g.f, g.b = 3, 0
	// glibc discards the first 310 outputs.
	for range 310 {
		g.next()
	}
}

// next is random(): a value in [0, 2^31).
func (g *glibcRandom) next() int32 {
	g.ring[g.f] = int32(uint32(g.ring[g.f]) + uint32(g.ring[g.b]))
	result := int32(uint32(g.ring[g.f]) >> 1)
	g.f++
	if g.f >= 31 {
		g.f = 0
	}
	g.b++
	if g.b >= 31 {
		g.b = 0
	}
	return result
}

// sharedRandom is the process-wide random() that every client draws its keys
// from, as the C tool's clients share one generator.
type sharedRandom struct {
	mu sync.Mutex
	g  *glibcRandom
}

// fillKeys overwrites each 12-byte placeholder at the given offsets of buf
// with random() % keyspacelen as 12 zero-padded decimal digits.
func (s *sharedRandom) fillKeys(buf []byte, offsets []int, keyspacelen int) {
	s.mu.Lock()
	for _, off := range offsets {
		var r uint64
		if keyspacelen != 0 {
			r = uint64(s.g.next()) % uint64(keyspacelen)
		}
		for k := off + 11; k >= off; k-- {
			buf[k] = byte('0' + r%10)
			r /= 10
		}
	}
	s.mu.Unlock()
}

// intn is a random index in [0, n) for choosing cluster slots.
func (s *sharedRandom) intn(n int) int {
	s.mu.Lock()
	v := int(s.g.next())
	s.mu.Unlock()
	return v % n
}
