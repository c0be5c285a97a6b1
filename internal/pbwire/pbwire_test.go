package pbwire

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/prutal"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// The test messages are laid out as Kitex generates them.

type inner struct {
	S string `protobuf:"bytes,1,opt,name=s" json:"s,omitempty"`
}

type isChoice interface{ isChoice() }

type choiceText struct {
	Text string `protobuf:"bytes,1,opt,name=text" json:"text,omitempty"`
}
type choiceRaw struct {
	Raw []byte `protobuf:"bytes,2,opt,name=raw" json:"raw,omitempty"`
}
type choiceNum struct {
	N int32 `protobuf:"varint,3,opt,name=n" json:"n,omitempty"`
}
type choiceFlag struct {
	B bool `protobuf:"varint,4,opt,name=b" json:"b,omitempty"`
}

func (*choiceText) isChoice() {}
func (*choiceRaw) isChoice()  {}
func (*choiceNum) isChoice()  {}
func (*choiceFlag) isChoice() {}

type msg struct {
	Choice isChoice          `protobuf_oneof:"choice"`
	Name   string            `protobuf:"bytes,5,opt,name=name" json:"name,omitempty"`
	Count  int32             `protobuf:"varint,6,opt,name=count" json:"count,omitempty"`
	Opt    *int32            `protobuf:"varint,7,opt,name=opt" json:"opt,omitempty"`
	Flag   *bool             `protobuf:"varint,8,opt,name=flag" json:"flag,omitempty"`
	Tags   []string          `protobuf:"bytes,9,rep,name=tags" json:"tags,omitempty"`
	Inner  *inner            `protobuf:"bytes,10,opt,name=inner" json:"inner,omitempty"`
	Inners []*inner          `protobuf:"bytes,11,rep,name=inners" json:"inners,omitempty"`
	Labels map[string]string `protobuf:"bytes,12,rep,name=labels" json:"labels,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Value  *structpb.Value   `protobuf:"bytes,13,opt,name=value" json:"value,omitempty"`
	Data   []byte            `protobuf:"bytes,14,opt,name=data" json:"data,omitempty"`
	On     bool              `protobuf:"varint,15,opt,name=on" json:"on,omitempty"`
	hidden int
}

// wireField returns one encoded field: a varint for a uint64, else bytes.
func wireField(num protowire.Number, v any) []byte {
	switch v := v.(type) {
	case uint64:
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	case string:
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), v)
	case []byte:
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
	}
	panic("field of unknown kind")
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func ptr[T any](v T) *T { return &v }

func TestMarshal(t *testing.T) {
	long := strings.Repeat("x", 200) // its message needs a two-byte length
	tests := []struct {
		name string
		msg  *msg
		want []byte
	}{
		{"zero message", &msg{}, nil},
		{"plain zero scalars are left out", &msg{Name: "", Count: 0, Data: []byte{}, On: false, hidden: 1}, nil},
		{"plain scalars", &msg{Name: "n", Count: 3, Data: []byte{1}, On: true},
			cat(wireField(5, "n"), wireField(6, uint64(3)), wireField(14, []byte{1}), wireField(15, uint64(1)))},
		{"negative int32 takes ten bytes", &msg{Count: -1}, wireField(6, uint64(1<<64-1))},
		{"oneof empty text", &msg{Choice: &choiceText{}}, wireField(1, "")},
		{"oneof text", &msg{Choice: &choiceText{Text: "hi"}}, wireField(1, "hi")},
		{"oneof empty bytes", &msg{Choice: &choiceRaw{}}, wireField(2, []byte{})},
		{"oneof zero number", &msg{Choice: &choiceNum{}}, wireField(3, uint64(0))},
		{"oneof false", &msg{Choice: &choiceFlag{}}, wireField(4, uint64(0))},
		{"oneof nil member", &msg{Choice: (*choiceText)(nil)}, nil},
		{"optional zero", &msg{Opt: ptr[int32](0), Flag: ptr(false)}, cat(wireField(7, uint64(0)), wireField(8, uint64(0)))},
		{"repeated strings keep empty ones", &msg{Tags: []string{"", "a"}}, cat(wireField(9, ""), wireField(9, "a"))},
		{"empty nested message", &msg{Inner: &inner{}}, wireField(10, []byte{})},
		{"nested message", &msg{Inner: &inner{S: "x"}}, wireField(10, wireField(1, "x"))},
		{"long nested message", &msg{Inner: &inner{S: long}}, wireField(10, wireField(1, long))},
		{"repeated messages", &msg{Inners: []*inner{{S: "a"}, {}, nil}}, cat(wireField(11, wireField(1, "a")), wireField(11, []byte{}), wireField(11, []byte{}))},
		{"map entries keep empty values", &msg{Labels: map[string]string{"k": ""}}, wireField(12, cat(wireField(1, "k"), wireField(2, "")))},
		{"official message with a zero number", &msg{Value: structpb.NewNumberValue(0)},
			wireField(13, protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), 0))},
		{"official message with an empty string", &msg{Value: structpb.NewStringValue("")}, wireField(13, wireField(3, ""))},
		{"official null", &msg{Value: structpb.NewNullValue()}, wireField(13, wireField(1, uint64(0)))},
	}
	var enc Encoder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := enc.Marshal(nil, tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("got  %x\nwant %x", got, tt.want)
			}
			// Appending keeps what was there.
			got, err = enc.Marshal([]byte{0xff}, tt.msg)
			if err != nil || !bytes.Equal(got, append([]byte{0xff}, tt.want...)) {
				t.Errorf("appended: got %x, %v", got, err)
			}
		})
	}
}

// Where prutal is right (no oneof member holding a zero value, no map,
// whose order is free), pbwire writes the same bytes; prutal reads what
// pbwire writes, zero-valued members included.
func TestAgreesWithPrutal(t *testing.T) {
	task := &a2apb.Task{
		Id: "t", ContextId: "c",
		Status: &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_WORKING, Timestamp: timestamppb.New(time.Unix(1700000000, 5))},
		Artifacts: []*a2apb.Artifact{{ArtifactId: "a", Name: "n", Parts: []*a2apb.Part{
			{Content: &a2apb.Part_Text{Text: "x"}, MediaType: "text/plain"},
			{Content: &a2apb.Part_Raw{Raw: []byte{0, 1}}, Filename: "f"},
			{Content: &a2apb.Part_Url{Url: "https://u.test/"}},
		}}},
		History: []*a2apb.Message{{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "q"}}}, ReferenceTaskIds: []string{"r"}}},
	}
	var enc Encoder
	got, err := enc.Marshal(nil, task)
	if err != nil {
		t.Fatal(err)
	}
	want, err := prutal.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("pbwire %x\nprutal %x", got, want)
	}

	task.Artifacts[0].Parts = append(task.Artifacts[0].Parts, &a2apb.Part{Content: &a2apb.Part_Text{}}, &a2apb.Part{Content: &a2apb.Part_Raw{}})
	b, err := enc.Marshal(nil, task)
	if err != nil {
		t.Fatal(err)
	}
	var back a2apb.Task
	if err := prutal.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	parts := back.Artifacts[0].Parts
	if len(parts) != 5 {
		t.Fatalf("%d parts, want 5", len(parts))
	}
	if c, ok := parts[3].Content.(*a2apb.Part_Text); !ok || c.Text != "" {
		t.Errorf("part 3 holds %#v, want empty text", parts[3].Content)
	}
	if c, ok := parts[4].Content.(*a2apb.Part_Raw); !ok || len(c.Raw) != 0 {
		t.Errorf("part 4 holds %#v, want empty raw", parts[4].Content)
	}
}

func TestMarshalRefuses(t *testing.T) {
	type float struct {
		F float32 `protobuf:"fixed32,1,opt,name=f" json:"f,omitempty"`
	}
	type packed struct {
		N []int32 `protobuf:"varint,1,rep,packed,name=n" json:"n,omitempty"`
	}
	tests := []struct {
		name string
		msg  any
		want string
	}{
		{"not a pointer", msg{}, "is not a pointer to a message struct"},
		{"not a struct", new(int), "is not a pointer to a message struct"},
		{"unsupported scalar", &float{F: 1}, "unsupported type float32"},
		{"packed scalars", &packed{N: []int32{1}}, "packed repeated scalars are not supported"},
	}
	var enc Encoder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := enc.Marshal(nil, tt.msg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
	if b, err := enc.Marshal(nil, (*msg)(nil)); err != nil || len(b) != 0 {
		t.Errorf("nil message: %x, %v; want nothing", b, err)
	}
}

// BenchmarkMarshalTask writes a completed echo task with its history and
// metadata, with pbwire and, for comparison, with prutal.
func BenchmarkMarshalTask(b *testing.B) {
	md, _ := structpb.NewStruct(map[string]any{"sentAt": "2026-11-24T01:02:03.456Z", "n": 1.0, "ok": true})
	text := func(s string) *a2apb.Part { return &a2apb.Part{Content: &a2apb.Part_Text{Text: s}} }
	task := &a2apb.Task{
		Id: "0b8f5f4e-7f43-4d0e-9a51-3c1f1c2b8e11", ContextId: "5d0c1c0e-2f6b-4b8e-8a3b-0c9d7e6f5a41",
		Status: &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_COMPLETED, Timestamp: timestamppb.New(time.Unix(1700000000, 5))},
		Artifacts: []*a2apb.Artifact{{ArtifactId: "echo", Name: "echo", Metadata: md,
			Parts: []*a2apb.Part{text("hello, "), text("world"), text("")}}},
		History: []*a2apb.Message{
			{MessageId: "m1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{text("hello, world")}, Metadata: md},
			{MessageId: "m2", Role: a2apb.Role_ROLE_AGENT, Parts: []*a2apb.Part{text("done")}},
		},
	}
	b.Run("pbwire", func(b *testing.B) {
		var enc Encoder
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			if _, err := enc.Marshal(buf[:0], task); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prutal", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			if _, err := prutal.MarshalAppend(buf[:0], task); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The well-known messages pbwire writes itself read back, through the
// official runtime, as what was written, in as many bytes as that runtime
// writes (the order of a Struct's entries is free).
func TestWellKnownAgreesWithOfficial(t *testing.T) {
	nested, err := structpb.NewStruct(map[string]any{
		"zero": 0.0, "no": false, "empty": "", "null": nil, "neg": -2.5, "s": "x", "t": true,
		"list": []any{0.0, false, "", nil, []any{}, map[string]any{}}, "obj": map[string]any{"k": map[string]any{"d": 1e300}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		msg  proto.Message
	}{
		{"struct", nested},
		{"empty struct", &structpb.Struct{}},
		{"struct with a nil value", &structpb.Struct{Fields: map[string]*structpb.Value{"n": nil}}},
		{"zero number", structpb.NewNumberValue(0)},
		{"negative zero", structpb.NewNumberValue(math.Copysign(0, -1))},
		{"empty string", structpb.NewStringValue("")},
		{"false", structpb.NewBoolValue(false)},
		{"null", structpb.NewNullValue()},
		{"value without a kind", &structpb.Value{}},
		{"empty list", structpb.NewListValue(&structpb.ListValue{})},
		{"struct value", structpb.NewStructValue(nested)},
		{"list", &structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(0), structpb.NewStringValue("")}}},
		{"timestamp", timestamppb.New(time.Unix(1700000000, 123))},
		{"timestamp before 1970", timestamppb.New(time.Unix(-5, 7))},
		{"zero timestamp", &timestamppb.Timestamp{}},
		{"empty", &emptypb.Empty{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var enc Encoder
			got, err := enc.Marshal(nil, tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			official, err := proto.Marshal(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(official) {
				t.Errorf("%d bytes %x, the official runtime writes %d %x", len(got), got, len(official), official)
			}
			back := tt.msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(got, back); err != nil {
				t.Fatalf("the official runtime cannot read %x: %v", got, err)
			}
			if !proto.Equal(back, tt.msg) {
				t.Errorf("read back %v, want %v", back, tt.msg)
			}
		})
	}
}

func TestBuffers(t *testing.T) {
	var p Buffers
	for _, n := range []int{10, maxKept + 1, 0} {
		b := p.Get()
		if len(*b) != 0 {
			t.Fatalf("Get returned %d bytes, want none", len(*b))
		}
		*b = append(*b, make([]byte, n)...)
		p.Put(b)
	}
	if b := p.Get(); len(*b) != 0 || cap(*b) == 0 {
		t.Fatalf("Get returned len %d cap %d, want an empty buffer with room", len(*b), cap(*b))
	}
}

func TestEncoded(t *testing.T) {
	m := Encoded{1, 2, 3}
	b := make([]byte, m.Size())
	if n, err := m.MarshalTo(b); n != 3 || err != nil || string(b) != string(m) {
		t.Fatalf("MarshalTo: %d, %v, %x", n, err, b)
	}
	if got, err := m.Marshal([]byte{0}); err != nil || string(got) != "\x00\x01\x02\x03" {
		t.Fatalf("Marshal: %x, %v", got, err)
	}
	if err := m.Unmarshal(nil); err == nil {
		t.Fatal("Unmarshal succeeded")
	}
}
