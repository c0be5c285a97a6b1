package jsonrpc_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

func TestProtoFieldNames(t *testing.T) {
	for _, c := range []struct {
		in, want string
		code     int // 0: no error
	}{
		{`{"taskId":"t","id":"c"}`, `{"taskId":"t","id":"c"}`, 0},
		{`{"task_id":"t","id":"c"}`, `{"taskId":"t","id":"c"}`, 0},
		{`{"page_size":2,"page_token":"x","status_timestamp_after":"z"}`, `{"pageSize":2,"pageToken":"x","statusTimestampAfter":"z"}`, 0},
		// Below the top level, and names that are not proto field names,
		// stay as they are.
		{`{"metadata":{"my_key":1},"message":{"message_id":"m"}}`, `{"metadata":{"my_key":1},"message":{"message_id":"m"}}`, 0},
		{`{"_x":1,"y_":2,"Task_Id":3}`, `{"_x":1,"y_":2,"Task_Id":3}`, 0},
		{`[1,"a_b"]`, `[1,"a_b"]`, 0},
		{`{"task_id":"t","taskId":"t"}`, ``, -32602},
	} {
		got, err := jsonrpc.ProtoFieldNames(json.RawMessage(c.in))
		if c.code != 0 {
			if err == nil || int(err.Code) != c.code {
				t.Errorf("%s: error %v, want code %d", c.in, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(c.want), &w) != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}
