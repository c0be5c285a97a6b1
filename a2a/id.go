package a2a

import "github.com/google/uuid"

// NewID returns a new random identifier for a task, context, message or
// artifact. It is a UUIDv7, so identifiers sort by creation time.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does; a v4 id
		// from the same source would fail too, so there is nothing better.
		panic("a2a: cannot generate an id: " + err.Error())
	}
	return id.String()
}
