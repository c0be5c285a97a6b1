package offheap

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// value is the value of the ith entry of a test: its number, then filler
// to n bytes.
func value(i, n int) []byte {
	b := fmt.Appendf(nil, "%08d", i)
	if n > len(b) {
		b = append(b, bytes.Repeat([]byte{byte('a' + i%26)}, n-len(b))...)
	}
	return b
}

func key(i int) string { return fmt.Sprintf("key-%d", i) }

// TestMap sets and deletes entries of various sizes in various orders,
// against a Go map: every entry reads back as set, and memory goes back as
// entries go.
func TestMap(t *testing.T) {
	tests := []struct {
		name  string
		size  func(i int) int
		order func(n int, rng *rand.Rand) []int // the order entries are deleted in
	}{
		{"small, deleted in order", func(int) int { return 600 }, inOrder},
		{"small, deleted at random", func(int) int { return 600 }, shuffled},
		{"mixed sizes, at random", func(i int) int { return []int{0, 100, 3000, 70_000}[i%4] }, shuffled},
		{"every other, then the rest", func(int) int { return 1000 }, everyOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 2000
			rng := rand.New(rand.NewPCG(1, 2))
			var m Map
			model := map[string][]byte{}
			set := func(i int, v []byte) {
				b, err := m.Set(key(i), len(v))
				if err != nil {
					t.Fatal(err)
				}
				copy(b, v)
				model[key(i)] = v
			}
			check := func() {
				t.Helper()
				if m.Len() != len(model) {
					t.Fatalf("Len %d, want %d", m.Len(), len(model))
				}
				for k, want := range model {
					if got, ok := m.Get(k); !ok || !bytes.Equal(got, want) {
						t.Fatalf("Get(%s) = %.20q, %v; want %.20q", k, got, ok, want)
					}
				}
				seen := 0
				m.All(func(k, v []byte) bool {
					seen++
					if !bytes.Equal(v, model[string(k)]) {
						t.Fatalf("All: %s is %.20q, want %.20q", k, v, model[string(k)])
					}
					return true
				})
				if seen != len(model) {
					t.Fatalf("All yielded %d entries, want %d", seen, len(model))
				}
			}
			for i := range n {
				set(i, value(i, tt.size(i)))
			}
			// Some replaced, by values of another size.
			for i := 0; i < n; i += 7 {
				set(i, value(i+n, tt.size(i+1)))
			}
			check()
			peak := m.Held()
			for k, i := range tt.order(n, rng) {
				m.Delete(key(i))
				delete(model, key(i))
				if k%250 == 0 {
					check()
				}
				if m.Held() > peak {
					t.Fatalf("holds %d bytes after %d deletes, more than the %d it held full", m.Held(), k+1, peak)
				}
			}
			check()
			if _, ok := m.Get(key(0)); ok {
				t.Fatal("a deleted key is found")
			}
			m.Delete(key(0)) // not there: nothing
			if m.Held() > chunkSize+minSlots*slotSize || len(m.mem.chunks) > 1 {
				t.Fatalf("everything deleted: %d bytes in %d chunks still held, want the current chunk and a small table", m.Held(), len(m.mem.chunks))
			}
		})
	}
}

func inOrder(n int, _ *rand.Rand) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func shuffled(n int, rng *rand.Rand) []int {
	s := inOrder(n, rng)
	rng.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

func everyOther(n int, _ *rand.Rand) []int {
	var s []int
	for i := 0; i < n; i += 2 {
		s = append(s, i)
	}
	for i := 1; i < n; i += 2 {
		s = append(s, i)
	}
	return s
}

// Entries deleted about in the order they were set, as a queue of
// finished tasks is, hold no more memory than the entries kept need.
func TestMapQueue(t *testing.T) {
	var m Map
	const kept, size = 2000, 300
	for i := range 100_000 {
		b, err := m.Set(key(i), size)
		if err != nil {
			t.Fatal(err)
		}
		copy(b, value(i, size))
		if i >= kept {
			m.Delete(key(i - kept))
		}
		// Records, their chunks not yet freed, and a table at most a
		// quarter full.
		if most := kept*(size+16) + 2*chunkSize + 4*kept*slotSize; m.Held() > most {
			t.Fatalf("holds %d bytes for %d entries of %d, more than %d", m.Held(), kept, size, most)
		}
	}
	if m.Len() != kept {
		t.Fatalf("Len %d, want %d", m.Len(), kept)
	}
}

func TestSetTooLarge(t *testing.T) {
	var m Map
	for _, tt := range []struct {
		key string
		n   int
	}{{"k", MaxValue + 1}, {"k", -1}, {string(make([]byte, MaxKey+1)), 1}} {
		if _, err := m.Set(tt.key, tt.n); err == nil {
			t.Errorf("Set of %d bytes under a key of %d: no error", tt.n, len(tt.key))
		}
	}
	if m.Len() != 0 {
		t.Fatalf("Len %d after refused Sets", m.Len())
	}
}
