// Package offheap is a map from strings to byte values held outside the Go
// heap, in memory mapped from the operating system: the garbage collector
// neither scans it nor counts it toward its heap goal, so an entry costs
// its bytes in resident memory, where the same bytes on the heap cost
// about twice that once the heap is allowed to grow (GOGC=100) to twice
// what is live. Go's heap metrics and GOMEMLIMIT do not see it either: an
// owner bounds what it holds. Where the system maps no such memory (not
// Unix), it is ordinary heap memory.
//
// Each entry is a record, its key then its value, written after the last
// one in a chunk of memory; a chunk whose records are all deleted goes back
// to the system. An owner that deletes entries in about the order it set
// them (a queue of finished tasks) so leaves nothing behind; one that
// deletes them out of order leaves chunks partly used, and a chunk (other
// than the newest and the oldest) left a quarter used has its records
// moved to the newest chunk, and goes. A hash table of the records, in
// mapped memory too, finds them by key: 16 bytes a slot, at most three
// quarters of them used.
//
// A Map is not safe for concurrent use: its owner guards it, and may read
// it (Get, All) from several goroutines while nothing changes it. A Map
// that becomes unreachable gives its memory back to the system (a cleanup
// does); it must not be copied.
package offheap

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"runtime"
)

// MaxValue is the largest value a Map holds.
const MaxValue = math.MaxUint32>>1 - binary.MaxVarintLen64 - math.MaxUint16

// MaxKey is the longest key a Map holds.
const MaxKey = math.MaxUint16

const (
	// chunkSize is the size of an ordinary chunk. A record larger than a
	// quarter of it gets a chunk of its own.
	chunkSize = 256 << 10
	// headerSize is the bytes before each record: its length, shifted
	// left once, with the low bit set once it is deleted.
	headerSize = 4
	// slotSize is the bytes of a slot of the table: the hash of the key,
	// then the record's ref (0 for an empty slot).
	slotSize = 16
	// minSlots is the fewest slots of a table: a page.
	minSlots = 256
)

// Map is a map from strings to byte values. Its zero value is empty and
// ready to use.
type Map struct {
	seed maphash.Seed
	mem  *memory // nil before the first entry
	n    int     // entries

	cur    *chunk // where records are written; nil before the first
	next   uint32 // the id of the next chunk; ids start at 1
	oldest uint32 // the lowest id in chunks
	held   int    // bytes mapped, chunks and table
}

// memory is what a Map has mapped, apart from the Map, for the cleanup
// that unmaps it once the Map is unreachable.
type memory struct {
	table  []byte // slotSize bytes per slot, a power of two of them
	chunks map[uint32]*chunk
}

func (mem *memory) unmap() {
	for _, c := range mem.chunks {
		unmapMemory(c.mem)
	}
	if mem.table != nil {
		unmapMemory(mem.table)
	}
}

// ref is a record's place: its chunk's id and its offset there. No record
// is at ref 0.
type ref uint64

type chunk struct {
	id   uint32
	mem  []byte
	used int // bytes written, records and headers
	live int // of which bytes of records not deleted, with their headers
}

// Len returns the number of entries.
func (m *Map) Len() int { return m.n }

// Held returns the bytes of memory the map holds.
func (m *Map) Held() int { return m.held }

// Get returns the value of key, valid until the map next changes.
func (m *Map) Get(key string) ([]byte, bool) {
	if m.n == 0 {
		return nil, false
	}
	i, found := m.find(key, maphash.String(m.seed, key))
	if !found {
		return nil, false
	}
	_, v := m.record(m.slotRef(i))
	return v, true
}

// Set makes key's value n bytes, which it returns to be filled in, valid
// until the map next changes. It fails, leaving the map as it was, if key
// or n is too long or the system has no memory to map.
func (m *Map) Set(key string, n int) ([]byte, error) {
	if len(key) > MaxKey || n < 0 || n > MaxValue {
		return nil, fmt.Errorf("offheap: an entry of %d bytes under a key of %d is too large", n, len(key))
	}
	if m.mem == nil {
		m.seed = maphash.MakeSeed()
		m.mem = &memory{chunks: make(map[uint32]*chunk)}
		runtime.AddCleanup(m, (*memory).unmap, m.mem)
	}
	if m.mem.table == nil {
		if err := m.resize(minSlots); err != nil {
			return nil, err
		}
	} else if 4*(m.n+1) > 3*m.slots() {
		if err := m.resize(2 * m.slots()); err != nil {
			return nil, err
		}
	}
	r, rec, err := m.alloc(uvarintLen(len(key)) + len(key) + n)
	if err != nil {
		return nil, err
	}
	w := binary.PutUvarint(rec, uint64(len(key)))
	copy(rec[w:], key)
	h := maphash.String(m.seed, key)
	i, found := m.find(key, h)
	if found {
		old := m.slotRef(i)
		m.setSlot(i, h, r)
		m.free(old)
	} else {
		m.setSlot(i, h, r)
		m.n++
	}
	return rec[w+len(key):], nil
}

// Delete removes key's entry, if there is one.
func (m *Map) Delete(key string) {
	if m.n == 0 {
		return
	}
	i, found := m.find(key, maphash.String(m.seed, key))
	if !found {
		return
	}
	r := m.slotRef(i)
	m.clearSlot(i)
	m.n--
	m.free(r)
	if m.slots() > minSlots && 8*m.n < m.slots() {
		_ = m.resize(m.slots() / 2) // out of memory: it stays larger
	}
}

// All calls yield for each entry, in no order, until it returns false. The
// map must not change meanwhile; key and value are valid until it does.
func (m *Map) All(yield func(key, value []byte) bool) {
	for i := range m.slots() {
		if r := m.slotRef(i); r != 0 && !yield(m.record(r)) {
			return
		}
	}
}

func uvarintLen(n int) int {
	w := 1
	for ; n >= 0x80; n >>= 7 {
		w++
	}
	return w
}

func (m *Map) slots() int {
	if m.mem == nil {
		return 0
	}
	return len(m.mem.table) / slotSize
}

func (m *Map) slotHash(i int) uint64 { return binary.LittleEndian.Uint64(m.mem.table[i*slotSize:]) }

func (m *Map) slotRef(i int) ref { return ref(binary.LittleEndian.Uint64(m.mem.table[i*slotSize+8:])) }

func (m *Map) setSlot(i int, h uint64, r ref) {
	binary.LittleEndian.PutUint64(m.mem.table[i*slotSize:], h)
	binary.LittleEndian.PutUint64(m.mem.table[i*slotSize+8:], uint64(r))
}

// find returns the slot holding key, or the empty slot where it would go.
func (m *Map) find(key string, h uint64) (int, bool) {
	mask := m.slots() - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		r := m.slotRef(i)
		if r == 0 {
			return i, false
		}
		if m.slotHash(i) == h {
			if k, _ := m.record(r); string(k) == key {
				return i, true
			}
		}
	}
}

// clearSlot empties slot i, moving back the slots after it that would no
// longer be found past an empty one (linear probing without tombstones).
func (m *Map) clearSlot(i int) {
	mask := m.slots() - 1
	for j := (i + 1) & mask; m.slotRef(j) != 0; j = (j + 1) & mask {
		home := int(m.slotHash(j)) & mask
		// The entry at j stays if its home is cyclically in (i, j].
		if i <= j && i < home && home <= j || i > j && (i < home || home <= j) {
			continue
		}
		copy(m.mem.table[i*slotSize:(i+1)*slotSize], m.mem.table[j*slotSize:(j+1)*slotSize])
		i = j
	}
	m.setSlot(i, 0, 0)
}

// resize moves the table into one of n slots.
func (m *Map) resize(n int) error {
	table, err := mapMemory(n * slotSize)
	if err != nil {
		return fmt.Errorf("offheap: map a table of %d slots: %w", n, err)
	}
	old := m.mem.table
	m.mem.table = table
	m.held += len(table) - len(old)
	mask := n - 1
	for i := 0; i < len(old); i += slotSize {
		r := binary.LittleEndian.Uint64(old[i+8:])
		if r == 0 {
			continue
		}
		h := binary.LittleEndian.Uint64(old[i:])
		j := int(h) & mask
		for m.slotRef(j) != 0 {
			j = (j + 1) & mask
		}
		m.setSlot(j, h, ref(r))
	}
	if old != nil {
		unmapMemory(old)
	}
	return nil
}

// record returns the key and value of the record at r.
func (m *Map) record(r ref) (key, value []byte) {
	c := m.mem.chunks[uint32(r>>32)]
	off := int(uint32(r))
	n := int(binary.LittleEndian.Uint32(c.mem[off:]) >> 1)
	rec := c.mem[off+headerSize : off+headerSize+n : off+headerSize+n]
	k, w := binary.Uvarint(rec)
	return rec[w : w+int(k)], rec[w+int(k):]
}

// alloc makes room for a record of n bytes.
func (m *Map) alloc(n int) (ref, []byte, error) {
	need := headerSize + n
	c := m.cur
	if c == nil || len(c.mem)-c.used < need {
		size := chunkSize
		if need > chunkSize/4 {
			size = need // a chunk of its own, and the current one stays
		}
		mem, err := mapMemory(size)
		if err != nil {
			return 0, nil, fmt.Errorf("offheap: map %d bytes: %w", size, err)
		}
		m.next++
		c = &chunk{id: m.next, mem: mem}
		m.mem.chunks[c.id] = c
		m.held += len(mem)
		if len(m.mem.chunks) == 1 {
			m.oldest = c.id
		}
		if size == chunkSize {
			old := m.cur
			m.cur = c
			if old != nil && old.live == 0 {
				m.release(old)
			}
		}
	}
	off := c.used
	binary.LittleEndian.PutUint32(c.mem[off:], uint32(n)<<1)
	c.used += need
	c.live += need
	return ref(uint64(c.id)<<32 | uint64(off)), c.mem[off+headerSize : off+need : off+need], nil
}

// free marks the record at r deleted, and lets its chunk go, or moves the
// records left in it, once it is empty or mostly so.
func (m *Map) free(r ref) {
	c := m.mem.chunks[uint32(r>>32)]
	off := int(uint32(r))
	h := binary.LittleEndian.Uint32(c.mem[off:])
	binary.LittleEndian.PutUint32(c.mem[off:], h|1)
	c.live -= headerSize + int(h>>1)
	switch {
	case c == m.cur:
		if c.live == 0 {
			c.used = 0 // written over from the start
		}
	case c.live == 0:
		m.release(c)
	case c.id != m.oldest && 4*c.live < c.used:
		m.evacuate(c)
	}
}

// evacuate moves the records left in c to the current chunk, and lets c
// go.
func (m *Map) evacuate(c *chunk) {
	for off := 0; off < c.used; {
		h := binary.LittleEndian.Uint32(c.mem[off:])
		n := int(h >> 1)
		if h&1 == 0 {
			from := ref(uint64(c.id)<<32 | uint64(off))
			to, rec, err := m.alloc(n)
			if err != nil {
				return // out of memory: c stays, and its records
			}
			copy(rec, c.mem[off+headerSize:off+headerSize+n])
			key, _ := m.record(to)
			hash := maphash.Bytes(m.seed, key)
			mask := m.slots() - 1
			i := int(hash) & mask
			for m.slotRef(i) != from {
				i = (i + 1) & mask
			}
			m.setSlot(i, hash, to)
			binary.LittleEndian.PutUint32(c.mem[off:], h|1)
			c.live -= headerSize + n
		}
		off += headerSize + n
	}
	m.release(c)
}

func (m *Map) release(c *chunk) {
	delete(m.mem.chunks, c.id)
	m.held -= len(c.mem)
	unmapMemory(c.mem)
	c.mem = nil
	if c == m.cur {
		m.cur = nil
	}
	if c.id == m.oldest {
		m.oldest = m.next + 1
		for id := range m.mem.chunks {
			m.oldest = min(m.oldest, id)
		}
	}
}
