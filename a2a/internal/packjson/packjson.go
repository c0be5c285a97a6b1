// Package packjson packs JSON documents into fewer bytes, exactly: Unpack
// returns the bytes Pack was given. It is made for holding many small A2A
// documents in memory (finished tasks and their events), whose bytes are
// mostly string literals that repeat: member names, enum values, the task
// and context ids, timestamps. Each such literal becomes a one- or
// two-byte reference to a table that both sides build the same way: the
// caller's known strings (what it keeps beside the packed bytes anyway,
// such as the task id), A2A's member names and enum values, then each
// literal of three bytes or more in the order it first appears.
//
// References are bytes below 0x20, which JSON as encoders write it (no
// whitespace, control characters escaped) never holds; documents that do
// hold one are kept as they are.
package packjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The first byte of a pack says how its documents are held; a uvarint of
// their total length follows, then each document framed by its length.
const (
	formatPacked = 0x00
	formatRaw    = 0x01
)

// References: a byte below ref2 is entry b of the table; ref2 then a byte k
// is entry ref2+k. ref2+1 is never written.
const (
	ref2     = 0x1e
	maxTable = ref2 + 256
	// minRepeat is the shortest literal content remembered for repeating:
	// a shorter one costs no more than its reference.
	minRepeat = 3
)

// words are A2A 1.0's member names (in lower camel case), which stand for
// the name and its colon, and enum values (in upper case), the commonest
// first: with the caller's known strings, the first ref2 of the table have
// one-byte references.
var words = [...]string{
	"id", "contextId", "taskId", "messageId", "status", "state", "timestamp",
	"artifacts", "artifactId", "name", "parts", "text", "history", "role",
	"metadata", "message", "artifact", "lastChunk", "append", "task",
	"statusUpdate", "artifactUpdate", "ROLE_USER", "ROLE_AGENT",
	"TASK_STATE_COMPLETED", "TASK_STATE_WORKING", "TASK_STATE_SUBMITTED",
	"TASK_STATE_FAILED", "description", "TASK_STATE_CANCELED",
	"TASK_STATE_REJECTED", "TASK_STATE_INPUT_REQUIRED",
	"TASK_STATE_AUTH_REQUIRED", "extensions", "referenceTaskIds", "raw", "url",
	"data", "filename", "mediaType",
}

func isName(word string) bool { return word[0] >= 'a' && word[0] <= 'z' }

// nameSlots and valueSlots are open-addressing hashes of the names and of
// the values among words: 1 + the word's index, 0 for an empty slot. They
// are never written after init.
var nameSlots, valueSlots = func() (names, values [64]int8) {
	for i, w := range words {
		slots := &values
		if isName(w) {
			slots = &names
		}
		h := hash([]byte(w))
		for slots[h%uint32(len(slots))] != 0 {
			h++
		}
		slots[h%uint32(len(slots))] = int8(i + 1)
	}
	return names, values
}()

// findWord returns the index of s in slots.
func findWord(slots *[64]int8, s []byte, h uint32) (int, bool) {
	for ; ; h++ {
		switch i := slots[h%uint32(len(slots))] - 1; {
		case i < 0:
			return 0, false
		case words[i] == string(s):
			return int(i), true
		}
	}
}

var errCorrupt = errors.New("packjson: corrupt pack")

// Pack appends to dst the pack of docs, JSON documents, given the known
// strings that Unpack will be given too.
func Pack(dst []byte, known []string, docs ...[]byte) []byte {
	start := len(dst)
	total := 0
	for _, doc := range docs {
		total += len(doc)
	}
	dst = append(dst, formatPacked)
	dst = binary.AppendUvarint(dst, uint64(total))
	var t encTable
	t.known = known
	for _, doc := range docs {
		var ok bool
		if dst, ok = t.pack(dst, doc); !ok {
			return packRaw(dst[:start], total, docs)
		}
	}
	return dst
}

func packRaw(dst []byte, total int, docs [][]byte) []byte {
	dst = append(dst, formatRaw)
	dst = binary.AppendUvarint(dst, uint64(total))
	for _, doc := range docs {
		dst = binary.AppendUvarint(dst, uint64(len(doc)))
		dst = append(dst, doc...)
	}
	return dst
}

// encTable is the table as Pack builds it. Repeats are found by an
// open-addressing hash of their content.
type encTable struct {
	known []string
	// seen are the remembered literals' contents: their offsets and
	// lengths in the pack, where they are written out.
	seen  [maxTable][2]int32
	n     int // how many are remembered
	slots [2 * maxTable]int16
}

// size is the number of entries before the remembered literals.
func (t *encTable) size() int { return len(t.known) + len(words) }

// find returns the entry of a literal's content s that is not a member
// name: a known string, an enum value or a literal remembered.
func (t *encTable) find(pack, s []byte, h uint32) (int, bool) {
	for i, k := range t.known {
		if k == string(s) {
			return i, true
		}
	}
	if i, ok := findWord(&valueSlots, s, h); ok {
		return len(t.known) + i, true
	}
	for ; ; h++ {
		switch i := t.slots[h%uint32(len(t.slots))] - 1; {
		case i < 0:
			return 0, false
		case string(pack[t.seen[i][0]:t.seen[i][0]+t.seen[i][1]]) == string(s):
			return t.size() + int(i), true
		}
	}
}

// remember adds the content of the literal just written to the end of
// pack.
func (t *encTable) remember(pack []byte, n int, h uint32) {
	if n < minRepeat || t.size()+t.n >= maxTable || len(pack) > math.MaxInt32 {
		return
	}
	for t.slots[h%uint32(len(t.slots))] != 0 {
		h++
	}
	t.seen[t.n] = [2]int32{int32(len(pack) - 1 - n), int32(n)}
	t.n++
	t.slots[h%uint32(len(t.slots))] = int16(t.n)
}

// hash mixes a literal's length with its first and last eight bytes:
// the ids, timestamps and names that repeat differ there, and any
// collision only costs a comparison.
func hash(s []byte) uint32 {
	x := uint64(len(s))
	if len(s) >= 8 {
		x ^= binary.LittleEndian.Uint64(s) * 0x9e3779b97f4a7c15
		x ^= binary.LittleEndian.Uint64(s[len(s)-8:]) * 0xc2b2ae3d27d4eb4f
	} else {
		for _, c := range s {
			x = x<<8 | uint64(c)
		}
		x *= 0x9e3779b97f4a7c15
	}
	return uint32(x>>32) ^ uint32(x)
}

// pack appends one document, framed by its length; ok is false if it
// holds a byte below 0x20 or an unterminated string.
func (t *encTable) pack(dst, doc []byte) (_ []byte, ok bool) {
	// The frame's length is written once the packed size is known: a
	// byte is reserved for the common case, more are made room for.
	at := len(dst)
	dst = append(dst, 0)
	first := t.n // the first literal remembered from doc
	for i := 0; i < len(doc); {
		j := plainEnd(doc, i)
		dst = append(dst, doc[i:j]...)
		if i = j; i == len(doc) {
			break
		}
		if doc[i] != '"' {
			return dst, false
		}
		end, ok := stringEnd(doc, i)
		if !ok {
			return dst, false
		}
		s := doc[i+1 : end]
		h := hash(s)
		if end+1 < len(doc) && doc[end+1] == ':' && impliedComma(doc, i) {
			if k, ok := findWord(&nameSlots, s, h); ok {
				if doc[i-1] == ',' {
					dst = dst[:len(dst)-1]
				}
				dst = appendRef(dst, len(t.known)+k)
				i = end + 2
				continue
			}
		}
		if k, ok := t.find(dst, s, h); ok {
			dst = appendRef(dst, k)
		} else {
			dst = append(dst, doc[i:end+1]...)
			t.remember(dst, len(s), h)
		}
		i = end + 1
	}
	n := len(dst) - at - 1
	var frame [binary.MaxVarintLen64]byte
	w := binary.PutUvarint(frame[:], uint64(n))
	if w > 1 {
		dst = append(dst, frame[:w-1]...)
		copy(dst[at+w:], dst[at+1:at+1+n])
		for i := first; i < t.n; i++ {
			t.seen[i][0] += int32(w - 1)
		}
	}
	copy(dst[at:], frame[:w])
	return dst, true
}

// impliedComma reports whether a member name at doc[i] can be written as
// a name's reference: Unpack writes a comma before one unless it follows
// an opening brace, so the name must follow a brace, or a comma (left out)
// that does not.
func impliedComma(doc []byte, i int) bool {
	return i >= 1 && doc[i-1] == '{' || i >= 2 && doc[i-1] == ',' && doc[i-2] != '{'
}

// plainEnd returns the index of the first quote or control byte in doc
// from i, or its length.
func plainEnd(doc []byte, i int) int {
	for ; i < len(doc); i++ {
		if c := doc[i]; c < 0x20 || c == '"' {
			return i
		}
	}
	return i
}

// stringEnd returns the index of the quote that ends the string literal
// opening at doc[i]. What the literal holds is copied as it is, so a
// control byte in it does no harm.
func stringEnd(doc []byte, i int) (int, bool) {
	j := i + 1
	// Most literals are short: a loop costs less than IndexByte's calls
	// until they are not.
	for end := min(len(doc), j+32); j < end; j++ {
		switch doc[j] {
		case '"':
			return j, true
		case '\\':
			return escapedEnd(doc, j)
		}
	}
	q := bytes.IndexByte(doc[j:], '"')
	if q < 0 {
		return 0, false
	}
	if b := bytes.IndexByte(doc[j:j+q], '\\'); b >= 0 {
		return escapedEnd(doc, j+b) // the quote found may be escaped
	}
	return j + q, true
}

// escapedEnd is stringEnd from the backslash at doc[j] on.
func escapedEnd(doc []byte, j int) (int, bool) {
	for ; j < len(doc); j++ {
		switch doc[j] {
		case '"':
			return j, true
		case '\\':
			j++
		}
	}
	return 0, false
}

func appendRef(dst []byte, k int) []byte {
	if k < ref2 {
		return append(dst, byte(k))
	}
	return append(dst, ref2, byte(k-ref2))
}

// Unpack returns the documents of pack, given the known strings Pack was
// given. They share one new buffer.
func Unpack(pack []byte, known []string) ([][]byte, error) {
	if len(pack) == 0 {
		return nil, errCorrupt
	}
	format, rest := pack[0], pack[1:]
	if format != formatPacked && format != formatRaw {
		return nil, fmt.Errorf("%w: format %#x", errCorrupt, format)
	}
	total, w := binary.Uvarint(rest)
	if w <= 0 {
		return nil, errCorrupt
	}
	rest = rest[w:]
	// The header's length is taken for the size of the output only as
	// far as it is plausible, so that a damaged one cannot make a huge
	// allocation.
	out := make([]byte, 0, min(total, 64*uint64(len(pack))))
	var ends []int
	t := decTable{known: known}
	for len(rest) > 0 {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return nil, errCorrupt
		}
		doc := rest[w : w+int(n)]
		rest = rest[w+int(n):]
		var err error
		if format == formatRaw {
			out = append(out, doc...)
		} else if out, err = t.unpack(out, doc); err != nil {
			return nil, err
		}
		ends = append(ends, len(out))
	}
	docs := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		docs[i] = out[start:end:end]
		start = end
	}
	return docs, nil
}

// decTable is the table as Unpack builds it: remembered literals are
// places in the output.
type decTable struct {
	known []string
	seen  [maxTable][2]int // offset and length of content in the output
	n     int
}

func (t *decTable) unpack(out, doc []byte) ([]byte, error) {
	size := len(t.known) + len(words)
	start := len(out)
	for i := 0; i < len(doc); {
		j := plainEnd(doc, i)
		out = append(out, doc[i:j]...)
		if i = j; i == len(doc) {
			break
		}
		c := doc[i]
		if c == '"' {
			end, ok := stringEnd(doc, i)
			if !ok {
				return out, errCorrupt
			}
			if s := doc[i+1 : end]; len(s) >= minRepeat && size+t.n < maxTable {
				t.seen[t.n] = [2]int{len(out) + 1, len(s)}
				t.n++
			}
			out = append(out, doc[i:end+1]...)
			i = end + 1
			continue
		}
		// A reference.
		k := int(c)
		i++
		if c == ref2 {
			if i == len(doc) {
				return out, errCorrupt
			}
			k = ref2 + int(doc[i])
			i++
		} else if c > ref2 {
			return out, fmt.Errorf("%w: byte %#x", errCorrupt, c)
		}
		if k >= len(t.known) && k < size && isName(words[k-len(t.known)]) {
			if len(out) == start {
				return out, fmt.Errorf("%w: a member name opens a document", errCorrupt)
			}
			if out[len(out)-1] != '{' {
				out = append(out, ',')
			}
			out = append(out, '"')
			out = append(out, words[k-len(t.known)]...)
			out = append(out, '"', ':')
			continue
		}
		out = append(out, '"')
		switch {
		case k < len(t.known):
			out = append(out, t.known[k]...)
		case k < size:
			out = append(out, words[k-len(t.known)]...)
		case k-size < t.n:
			s := t.seen[k-size]
			out = append(out, out[s[0]:s[0]+s[1]]...)
		default:
			return out, fmt.Errorf("%w: reference %d past the table", errCorrupt, k)
		}
		out = append(out, '"')
	}
	return out, nil
}
