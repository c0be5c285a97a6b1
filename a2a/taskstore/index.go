package taskstore

import "slices"

// index keeps the keys of tasks in order, in sorted chunks of contiguous
// keys, so that a page is found with two binary searches and read in
// order. Keys are stored oldest first (the reverse of List order) because
// a task that is updated gets the newest key: what a server does most, a
// task moving to the newest end and the oldest one going when it is
// evicted, appends to the last chunk and takes from the first. A chunk
// grows to maxChunk keys, then splits in two; an empty one goes (but the
// last). The zero value is empty. The tasks themselves are found by id:
// the index holds no snapshot, so a change that leaves a task's place
// leaves the index alone, and a finished task held packed costs it only
// its key.
type index struct {
	chunks [][]ikey
	lasts  []ikey // lasts[i] is chunks[i]'s last (newest) key
	n      int
}

// ikey is a Cursor as the index compares it: in nanoseconds, which is
// cheaper than comparing times.
type ikey struct {
	ns int64
	id string
}

func keyOf(c Cursor) ikey { return ikey{c.Time.UnixNano(), c.ID} }

// less orders keys oldest first: the reverse of Cursor.Before.
func (k ikey) less(l ikey) bool {
	if k.ns != l.ns {
		return k.ns < l.ns
	}
	return k.id < l.id
}

// maxChunk is the most keys in a chunk: a move within one costs at most
// that many keys' memmove (24 bytes each), and its array is 1.5 KiB, a
// size class of its own.
const maxChunk = 64

func (ix *index) len() int { return ix.n }

// firstNotLess returns the first i with keys[i] not less than key.
func firstNotLess(keys []ikey, key ikey) int {
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keys[m].less(key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// chunkOf returns the chunk key is in, or would go in.
func (ix *index) chunkOf(key ikey) int {
	return min(firstNotLess(ix.lasts, key), len(ix.chunks)-1) // newer than every key: the last chunk
}

// at returns where key is, or would go, in chunk i.
func (ix *index) at(i int, key ikey) int {
	return firstNotLess(ix.chunks[i], key)
}

// insert adds key, which must not be in the index.
func (ix *index) insert(key ikey) {
	if ix.n == 0 {
		if len(ix.chunks) == 0 {
			ix.chunks, ix.lasts = [][]ikey{make([]ikey, 0, 4)}, []ikey{{}}
		}
		ix.chunks[0], ix.lasts[0], ix.n = append(ix.chunks[0][:0], key), key, 1
		return
	}
	i := ix.chunkOf(key)
	j := ix.at(i, key)
	ix.n++
	if c := ix.chunks[i]; len(c) == maxChunk {
		// A full chunk is split before it grows past maxChunk, which
		// would double its array. Where most keys come newer than every
		// other (what a server adds, a little out of order when tasks
		// finish at once), the last chunk is split where the key goes
		// in its newer half, so that the chunks it leaves behind are
		// mostly full; elsewhere, in halves.
		at := len(c) / 2
		if i == len(ix.chunks)-1 && j > at {
			at = j
		}
		newer := append(make([]ikey, 0, maxChunk), c[at:]...)
		clear(c[at:])
		ix.chunks[i], ix.lasts[i] = c[:at], c[at-1]
		ix.chunks = slices.Insert(ix.chunks, i+1, newer)
		ix.lasts = slices.Insert(ix.lasts, i+1, key) // set below if newer is empty
		if len(newer) > 0 {
			ix.lasts[i+1] = newer[len(newer)-1]
		}
		if j >= at {
			i, j = i+1, j-at
		}
	}
	c := ix.chunks[i]
	if len(c) == cap(c) {
		// Grown here, not by append, whose growth would not stop at
		// maxChunk.
		c = append(make([]ikey, 0, min(max(4, 2*cap(c)), maxChunk)), c...)
	}
	c = slices.Insert(c, j, key)
	ix.chunks[i], ix.lasts[i] = c, c[len(c)-1]
}

// remove deletes key from the index, if it is there.
func (ix *index) remove(key ikey) {
	if ix.n == 0 {
		return
	}
	i := ix.chunkOf(key)
	c := ix.chunks[i]
	j := ix.at(i, key)
	if j == len(c) || c[j] != key {
		return
	}
	c = slices.Delete(c, j, j+1)
	ix.n--
	if len(c) > 0 {
		ix.chunks[i], ix.lasts[i] = c, c[len(c)-1]
		return
	}
	if ix.n == 0 {
		// Emptied: its last chunk is kept for the next insert (a state's
		// index empties and fills again all the time).
		ix.chunks, ix.lasts = ix.chunks[i:i+1], ix.lasts[i:i+1]
		ix.chunks[0] = c
		return
	}
	ix.chunks = slices.Delete(ix.chunks, i, i+1)
	ix.lasts = slices.Delete(ix.lasts, i, i+1)
}

// below returns how many keys are less than (older than) key, and where
// the newest of them is: chunk i, entry j (j is -1 when there is none in
// chunk i, which is then the first chunk with any key at or above key).
func (ix *index) below(key ikey) (count, i, j int) {
	i = firstNotLess(ix.lasts, key)
	if i == len(ix.chunks) {
		i--
		return ix.n, i, len(ix.chunks[i]) - 1
	}
	j = ix.at(i, key)
	count = j
	for _, c := range ix.chunks[:i] {
		count += len(c)
	}
	return count, i, j - 1
}

// newerThan returns how many keys come before key in List order: those
// newer than it.
func (ix *index) newerThan(key ikey) int {
	if ix.n == 0 {
		return 0
	}
	below, i, j := ix.below(key)
	if j+1 < len(ix.chunks[i]) && ix.chunks[i][j+1] == key {
		below++ // key itself is not newer
	}
	return ix.n - below
}

// ascend calls fn for the keys after after in List order (from the first
// when nil), newest first, until fn returns false.
func (ix *index) ascend(after *Cursor, fn func(ikey) bool) {
	if ix.n == 0 {
		return
	}
	i := len(ix.chunks) - 1
	j := len(ix.chunks[i]) - 1
	if after != nil {
		_, i, j = ix.below(keyOf(*after))
	}
	for ; i >= 0; i-- {
		c := ix.chunks[i]
		for ; j >= 0; j-- {
			if !fn(c[j]) {
				return
			}
		}
		if i > 0 {
			j = len(ix.chunks[i-1]) - 1
		}
	}
}
