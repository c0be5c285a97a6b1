package offheap

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Map dropped without a word gives its memory back to the system.
func TestDroppedMapIsUnmapped(t *testing.T) {
	const size = 32 << 20
	fill := func() int64 {
		var m Map
		for i := range size / 1000 {
			b, err := m.Set(key(i), 1000)
			if err != nil {
				t.Fatal(err)
			}
			for j := range b {
				b[j] = byte(i) // the pages backed
			}
		}
		return residentKiB(t)
	}
	full := fill()
	// The cleanup runs some time after a collection finds the Map gone.
	for range 200 {
		runtime.GC()
		if residentKiB(t) < full-size/2/1024 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("resident memory %d KiB, %d KiB with the Map full: its memory was not given back", residentKiB(t), full)
}

func residentKiB(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}
