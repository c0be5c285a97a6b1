package restserver

import (
	"bytes"
	"mime"
	"strconv"
	"strings"
)

// The media types of the binding's JSON: its own (specification 1.0.1
// 11.1) and plain JSON, which A2A 1.0.0 named and every client reads.
const (
	mediaA2A  = "application/a2a+json"
	mediaJSON = "application/json"
)

// responseType chooses the media type of a JSON answer, its bytes the
// same either way. The client's Accept decides when it names either type:
// application/a2a+json when it prefers it or likes it as much (@a2a-js/sdk
// asks for "application/a2a+json, application/json"), application/json
// when it names only that (a2a-go v2.4.0 does, and reads an error's body
// only when it comes as application/json). An Accept that names neither
// (none, */*, text/event-stream on a stream's error) gets what the
// request's body was sent as, and application/json for a request without
// one or with another JSON type.
func responseType(accept, contentType []byte) string {
	if bytes.Contains(accept, []byte("json")) {
		qA2A, qJSON := acceptQ(string(accept))
		switch {
		case qA2A > 0 && qA2A >= qJSON:
			return mediaA2A
		case qJSON > 0:
			return mediaJSON
		}
	}
	if mt, _, err := mime.ParseMediaType(string(contentType)); err == nil && mt == mediaA2A {
		return mediaA2A
	}
	return mediaJSON
}

// acceptQ returns the quality an Accept header gives application/a2a+json
// and application/json by name: 0 where it does not name one, or refuses
// it (q=0).
func acceptQ(accept string) (qA2A, qJSON float64) {
	for r := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(r)
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 {
				q = 0
			}
		}
		switch mt {
		case mediaA2A:
			qA2A = q
		case mediaJSON:
			qJSON = q
		}
	}
	return qA2A, qJSON
}
