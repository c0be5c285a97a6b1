package jsonrpcserver

import (
	"encoding/json"

	"github.com/a2amesh/a2amesh/a2a"
)

// wire10 is A2A 1.0's JSON-RPC wire: params are the 1.0 request objects
// as they are, results the 1.0 objects.
type wire10 struct{}

// emptyResult is 1.0's DeleteTaskPushNotificationConfig result
// (google.protobuf.Empty).
var emptyResult = json.RawMessage("{}")

func (wire10) sendMessage(p json.RawMessage) (*a2a.SendMessageRequest, error) {
	return decodeInto[a2a.SendMessageRequest](p)
}

func (wire10) getTask(p json.RawMessage) (*a2a.GetTaskRequest, error) {
	return decodeInto[a2a.GetTaskRequest](p)
}

func (wire10) listTasks(p json.RawMessage) (*a2a.ListTasksRequest, error) {
	return decodeInto[a2a.ListTasksRequest](p)
}

func (wire10) cancelTask(p json.RawMessage) (*a2a.CancelTaskRequest, error) {
	return decodeInto[a2a.CancelTaskRequest](p)
}

func (wire10) subscribeToTask(p json.RawMessage) (*a2a.SubscribeToTaskRequest, error) {
	return decodeInto[a2a.SubscribeToTaskRequest](p)
}

func (wire10) createPushConfig(p json.RawMessage) (*a2a.TaskPushNotificationConfig, error) {
	return decodeInto[a2a.TaskPushNotificationConfig](p)
}

func (wire10) getPushConfig(p json.RawMessage) (*a2a.GetTaskPushNotificationConfigRequest, error) {
	return decodeInto[a2a.GetTaskPushNotificationConfigRequest](p)
}

func (wire10) listPushConfigs(p json.RawMessage) (*a2a.ListTaskPushNotificationConfigsRequest, error) {
	return decodeInto[a2a.ListTaskPushNotificationConfigsRequest](p)
}

func (wire10) deletePushConfig(p json.RawMessage) (*a2a.DeleteTaskPushNotificationConfigRequest, error) {
	return decodeInto[a2a.DeleteTaskPushNotificationConfigRequest](p)
}

// getExtendedCard ignores the params: the Handler has one extended card.
func (wire10) getExtendedCard(json.RawMessage) (*a2a.GetExtendedAgentCardRequest, error) {
	return &a2a.GetExtendedAgentCardRequest{}, nil
}

func (wire10) event(ev a2a.Event) any { return a2a.Wrap(ev) }

func (wire10) task(t *a2a.Task) any { return t }

func (wire10) tasks(r *a2a.ListTasksResponse) any { return r }

func (wire10) pushConfig(c *a2a.TaskPushNotificationConfig) any { return c }

func (wire10) pushConfigs(r *a2a.ListTaskPushNotificationConfigsResponse) any { return r }

func (wire10) deleted() any { return emptyResult }

func (wire10) card(c *a2a.AgentCard) (any, error) { return c, nil }
