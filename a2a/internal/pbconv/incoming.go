package pbconv

import (
	"errors"

	"github.com/cloudwego/prutal"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// Messages on their way in through Kitex's gRPC codec, which reads a
// message by calling its Unmarshal: each is read by the direct decoding,
// or, where that declines, by prutal into its a2apb form, as the generated
// code reads it, and converted when asked for. A malformed message fails
// Unmarshal, within Kitex's RecvMsg, as it fails prutal; one the
// conversion refuses fails the accessor. Each may be read into again.

// errOutgoing is Marshal's error: these messages are only received.
var errOutgoing = errors.New("pbconv: an incoming message cannot be sent")

// IncomingEvent is a stream item (StreamResponse).
type IncomingEvent struct {
	ev  a2a.Event // nil: read into pb
	pb  a2apb.StreamResponse
	ids idCache // the stream's identifiers, when it reads a stream's items
}

// Unmarshal reads b.
func (m *IncomingEvent) Unmarshal(b []byte) error {
	var ok bool
	if m.ev, ok = decodeEvent(b, &m.ids); ok {
		return nil
	}
	m.ev, m.pb = nil, a2apb.StreamResponse{}
	return prutal.Unmarshal(b, &m.pb)
}

// Marshal is never called.
func (*IncomingEvent) Marshal([]byte) ([]byte, error) { return nil, errOutgoing }

// Event returns the event read, as EventFromPB returns it.
func (m *IncomingEvent) Event() (a2a.Event, error) {
	if m.ev != nil {
		return m.ev, nil
	}
	return EventFromPB(&m.pb)
}

// IncomingSendResponse is SendMessage's answer (SendMessageResponse).
type IncomingSendResponse struct {
	ev a2a.Event // nil: read into pb
	pb a2apb.SendMessageResponse
}

// Unmarshal reads b.
func (m *IncomingSendResponse) Unmarshal(b []byte) error {
	var ok bool
	if m.ev, ok = DecodeSendResponse(b); ok {
		return nil
	}
	m.ev, m.pb = nil, a2apb.SendMessageResponse{}
	return prutal.Unmarshal(b, &m.pb)
}

// Marshal is never called.
func (*IncomingSendResponse) Marshal([]byte) ([]byte, error) { return nil, errOutgoing }

// Event returns the task or message read, as SendResponseFromPB returns
// it.
func (m *IncomingSendResponse) Event() (a2a.Event, error) {
	if m.ev != nil {
		return m.ev, nil
	}
	return SendResponseFromPB(&m.pb)
}

// IncomingSendRequest is SendMessage's and SendStreamingMessage's request
// (SendMessageRequest).
type IncomingSendRequest struct {
	r  *a2a.SendMessageRequest // nil: read into pb
	pb a2apb.SendMessageRequest
}

// Unmarshal reads b.
func (m *IncomingSendRequest) Unmarshal(b []byte) error {
	var ok bool
	if m.r, ok = DecodeSendRequest(b); ok {
		return nil
	}
	m.r, m.pb = nil, a2apb.SendMessageRequest{}
	return prutal.Unmarshal(b, &m.pb)
}

// Marshal is never called.
func (*IncomingSendRequest) Marshal([]byte) ([]byte, error) { return nil, errOutgoing }

// Request returns the request read, as SendRequestFromPB returns it.
func (m *IncomingSendRequest) Request() (*a2a.SendMessageRequest, error) {
	if m.r != nil {
		return m.r, nil
	}
	return SendRequestFromPB(&m.pb)
}
