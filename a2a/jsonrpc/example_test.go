package jsonrpc_test

import (
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// A server decodes the envelope, finds the operation and protocol version
// from the method name, decodes the params, and answers with the request's
// id.
func ExampleDecodeRequest() {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{
		"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`)

	req, rpcErr := jsonrpc.DecodeRequest(body)
	if rpcErr != nil {
		log.Fatal(rpcErr)
	}
	op, version, ok := jsonrpc.ParseMethod(req.Method)
	fmt.Println(op, version, ok)

	var params a2a.SendMessageRequest
	if rpcErr := jsonrpc.DecodeParams(req.Params, &params); rpcErr != nil {
		log.Fatal(rpcErr)
	}
	fmt.Println(params.Message.Text())

	reply := &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("hi")}}
	out, err := jsonrpc.AppendResult(nil, req.ID, a2a.Wrap(reply))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// SendMessage 1.0 true
	// hello
	// {"jsonrpc":"2.0","id":7,"result":{"message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}}
}

// Errors come back as *a2a.Error with the code JSON-RPC prescribes and a
// message naming the offending field. AppendError answers with the
// request's id, the code, the message and, for 1.0, a
// google.rpc.ErrorInfo detail naming the reason.
func ExampleAppendError() {
	body := []byte(`{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":5}}`)
	req, rpcErr := jsonrpc.DecodeRequest(body)
	if rpcErr == nil {
		var params a2a.GetTaskRequest
		rpcErr = jsonrpc.DecodeParams(req.Params, &params)
	}
	out := jsonrpc.AppendError(nil, req.ID, rpcErr, a2a.Version)
	fmt.Println(string(out))
	// Output:
	// {"jsonrpc":"2.0","id":"r1","error":{"code":-32602,"message":"params.id: want a string, got a JSON number","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"INVALID_PARAMS"}]}}
}

// A client builds the request with AppendRequest and reads the answer's
// result or error from the response envelope.
func ExampleDecodeResponse() {
	req, err := jsonrpc.AppendRequest(nil, "1", jsonrpc.OpGetTask.Method(a2a.Version), &a2a.GetTaskRequest{ID: "t1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(req))

	resp, err := jsonrpc.DecodeResponse([]byte(`{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"no task \"t1\""}}`))
	if err != nil {
		log.Fatal(err)
	}
	if resp.Error != nil {
		e := resp.Error.Err()
		fmt.Println(e.Code.Reason(), e)
	}
	// Output:
	// {"jsonrpc":"2.0","id":"1","method":"GetTask","params":{"id":"t1"}}
	// TASK_NOT_FOUND a2a: no task "t1"
}
