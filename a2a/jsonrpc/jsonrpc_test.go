package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		code   a2a.ErrorCode // 0 = success
		id     string        // raw id expected on the result
		method string
	}{
		{"ok", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`, 0, "1", "GetTask"},
		{"string id", ` {"jsonrpc":"2.0","id":"a","method":"m"}`, 0, `"a"`, "m"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"m"}`, 0, "", "m"},
		{"no id", `{"jsonrpc":"2.0","method":"m"}`, 0, "", "m"},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, 0, "1", "m"},
		{"empty", ``, a2a.CodeParseError, "", ""},
		{"garbage", `{"jsonrpc":`, a2a.CodeParseError, "", ""},
		{"not json", `hello`, a2a.CodeParseError, "", ""},
		{"string", `"hello"`, a2a.CodeInvalidRequest, "", ""},
		{"number", `42`, a2a.CodeInvalidRequest, "", ""},
		{"empty batch", `[]`, a2a.CodeInvalidRequest, "", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, a2a.CodeInvalidRequest, "", ""},
		{"no version", `{"id":1,"method":"m"}`, a2a.CodeInvalidRequest, "1", ""},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"m"}`, a2a.CodeInvalidRequest, "1", ""},
		{"numeric version", `{"jsonrpc":2.0,"id":1,"method":"m"}`, a2a.CodeInvalidRequest, "1", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"m"}`, a2a.CodeInvalidRequest, "", ""},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"m"}`, a2a.CodeInvalidRequest, "", ""},
		{"id not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"m\"}", a2a.CodeInvalidRequest, "", ""},
		{"no method", `{"jsonrpc":"2.0","id":1}`, a2a.CodeInvalidRequest, "1", ""},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5}`, a2a.CodeInvalidRequest, "1", ""},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, a2a.CodeInvalidRequest, "1", ""},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`, a2a.CodeInvalidParams, "1", "m"},
		{"string params", `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, a2a.CodeInvalidParams, "1", "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeRequest([]byte(tt.body))
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
			} else if err == nil || err.Code != tt.code {
				t.Fatalf("error = %v, want code %d", err, tt.code)
			}
			if string(req.ID) != tt.id {
				t.Fatalf("id = %s, want %s", req.ID, tt.id)
			}
			if req.Method != tt.method {
				t.Fatalf("method = %q, want %q", req.Method, tt.method)
			}
		})
	}
}

func TestMethods(t *testing.T) {
	for op := OpSendMessage; op < numOps; op++ {
		for _, v := range []string{a2a.Version, a2a.Version03} {
			got, ver, ok := ParseMethod(op.Method(v))
			if !ok || got != op || ver != v {
				t.Errorf("%s/%s: ParseMethod = %v %s %v", op, v, got, ver, ok)
			}
		}
	}
	if _, _, ok := ParseMethod("message/sendx"); ok {
		t.Fatal("unknown method parsed")
	}
	if !OpSubscribeToTask.Streaming() || OpGetTask.Streaming() {
		t.Fatal("Streaming wrong")
	}
}

func TestDecodeParamsNamesField(t *testing.T) {
	var v a2a.SendMessageRequest
	err := DecodeParams(json.RawMessage(`{"message":{"messageId":"m","role":"ROLE_USER","parts":5}}`), &v)
	if err == nil || err.Code != a2a.CodeInvalidParams || !strings.Contains(err.Message, "params.message.parts") {
		t.Fatalf("err = %v", err)
	}
	err = DecodeParams(json.RawMessage(`{"message":{"messageId":"m","role":"user","parts":[]}}`), &v)
	if err == nil || !strings.Contains(err.Message, "ROLE_USER") {
		t.Fatalf("err = %v", err)
	}
}

func TestAppendResponses(t *testing.T) {
	b, err := AppendResult(nil, json.RawMessage(`"x"`), map[string]string{"a": "<b>"})
	if err != nil || string(b) != `{"jsonrpc":"2.0","id":"x","result":{"a":"<b>"}}` {
		t.Fatalf("%s %v", b, err)
	}
	e := a2a.Errorf(a2a.CodeTaskNotFound, "task %q not found", "t1")
	b = AppendError(nil, nil, e, a2a.Version)
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if string(r.ID) != "null" || r.Error.Code != -32001 || !strings.Contains(string(r.Error.Data), `"reason":"TASK_NOT_FOUND"`) || !strings.Contains(string(r.Error.Data), errorInfoType) {
		t.Fatalf("1.0 error = %s", b)
	}
	got := r.Error.Err()
	if !errors.Is(got, a2a.ErrTaskNotFound) || got.Message != `task "t1" not found` {
		t.Fatalf("Err() = %#v", got)
	}
	b = AppendError(nil, json.RawMessage("7"), e, a2a.Version03)
	if !strings.Contains(string(b), `"data":{"reason":"TASK_NOT_FOUND"}`) || !strings.Contains(string(b), `"id":7`) {
		t.Fatalf("0.3 error = %s", b)
	}
}

// An error's metadata is its ErrorInfo's, on the way out and back in.
func TestErrorInfoMetadata(t *testing.T) {
	e := a2a.Errorf(a2a.CodeTaskGenerationMismatch, "mismatch")
	e.Metadata = map[string]string{"taskId": "t", "expectedGeneration": "3", "currentGeneration": "5"}
	b := AppendError(nil, json.RawMessage("1"), e, a2a.Version)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"mismatch","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",` +
		`"domain":"a2a-protocol.org","metadata":{"currentGeneration":"5","expectedGeneration":"3","taskId":"t"},"reason":"TASK_GENERATION_MISMATCH"}]}}`
	if string(b) != want {
		t.Fatalf("error =\n%s\nwant\n%s", b, want)
	}
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	got := r.Error.Err()
	if !errors.Is(got, a2a.ErrTaskGenerationMismatch) || got.Metadata["currentGeneration"] != "5" || len(got.Metadata) != 3 {
		t.Fatalf("Err() = %#v", got)
	}
	// The metadata of an ErrorInfo naming another code, or another
	// domain's, is not the error's.
	for _, data := range []string{
		`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"TASK_NOT_FOUND","metadata":{"a":"b"}}]`,
		`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"example.com","reason":"TASK_GENERATION_MISMATCH","metadata":{"a":"b"}}]`,
	} {
		o := ErrorObject{Code: -32010, Message: "m", Data: json.RawMessage(data)}
		if got := o.Err(); got.Metadata != nil {
			t.Errorf("%s: metadata %v", data, got.Metadata)
		}
	}
}

// FuzzDecodeRequest checks that no body crashes the decoder, that every
// failure carries one of the envelope error codes, and that a success has a
// method and an object (or no) params.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{"id":"t"}}`,
		`[]`, `"hello"`, `{"jsonrpc":"2.0","id":{},"method":"m"}`, `{`, ``, `{"jsonrpc":"2.0","method":"m","params":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRequest(body)
		if err != nil {
			switch err.Code {
			case a2a.CodeParseError, a2a.CodeInvalidRequest, a2a.CodeInvalidParams:
			default:
				t.Fatalf("unexpected code %d for %q", err.Code, body)
			}
			if err.Message == "" {
				t.Fatal("error without message")
			}
			return
		}
		if req.Method == "" {
			t.Fatalf("success without method for %q", body)
		}
		if req.Params != nil && req.Params[0] != '{' {
			t.Fatalf("non-object params %q", req.Params)
		}
		if req.ID != nil && !json.Valid(req.ID) {
			t.Fatalf("invalid id %q", req.ID)
		}
		var out []byte
		out = AppendError(out, req.ID, a2a.Errorf(a2a.CodeInternal, "x"), a2a.Version)
		if !json.Valid(out) {
			t.Fatalf("reply is not JSON: %s", out)
		}
	})
}

// FuzzScanEnvelope checks the envelope scanner against a decode into a map,
// whose keys match exactly and where a repeated key's last value wins.
func FuzzScanEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":"}"}]}}`,
		` { "id" : "x\"y" , "Id":2, "method":"a","method":"b","params":null } `,
		`{"\u006dethod":"esc","p":[[[]]],"q":"\\","jsonrpc":true}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.TrimLeft(b, " \t\r\n")
		if !json.Valid(b) || len(b) == 0 || b[0] != '{' {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("valid object did not decode: %v", err)
		}
		env := scanEnvelope(b)
		for key, got := range map[string][]byte{"jsonrpc": env.JSONRPC, "method": env.Method, "id": env.ID, "params": env.Params} {
			if want, ok := m[key]; !ok && got != nil || ok && !bytes.Equal(got, want) {
				t.Fatalf("%s: scanned %q, map has %q (present %v) in %s", key, got, want, ok, b)
			}
		}
	})
}

func TestAppendRequest(t *testing.T) {
	type request struct { // the request object as encoding/json writes it
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}
	hl := 3
	for _, params := range []any{
		nil,
		&a2a.SendMessageRequest{Tenant: "t", Message: a2a.NewTextMessage(a2a.RoleUser, "hi \"there\""),
			Configuration: &a2a.SendMessageConfiguration{HistoryLength: &hl, AcceptedOutputModes: []string{"text/plain"}},
			Metadata:      map[string]any{"k": []any{1.0, "v"}}},
		&a2a.SendMessageRequest{},
		&a2a.GetTaskRequest{ID: "t"},
	} {
		got, err := AppendRequest(nil, "7", "SendMessage", params)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(request{"2.0", "7", "SendMessage", params})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%T:\n got %s\nwant %s", params, got, want)
		}
	}
}

// FuzzDecodeResponse checks DecodeResponse against encoding/json.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t"}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"x","data":[{"reason":"R"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":null,"error":null}`, `{"Result":1}`, `{"id":1,"id":2}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := DecodeResponse(b)
		var want Response
		werr := json.Unmarshal(b, &want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/json error %v", b, gerr, werr)
		}
		if gerr != nil {
			return
		}
		if got.JSONRPC != want.JSONRPC || !bytes.Equal(got.ID, want.ID) || !bytes.Equal(got.Result, want.Result) ||
			(got.ID == nil) != (want.ID == nil) || (got.Result == nil) != (want.Result == nil) || (got.Error == nil) != (want.Error == nil) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
		if got.Error != nil && (got.Error.Code != want.Error.Code || got.Error.Message != want.Error.Message || !bytes.Equal(got.Error.Data, want.Error.Data)) {
			t.Fatalf("%q: error object %+v, want %+v", b, got.Error, want.Error)
		}
	})
}
