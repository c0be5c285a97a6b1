package jsonrpcserver

import (
	"encoding/json"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
)

// wire03 is A2A 0.3's JSON-RPC wire: 0.3's params objects and results
// (kind discriminators, lower-case states), converted to and from the 1.0
// model by package a2av03. 0.3 has no tenants.
type wire03 struct{}

func (wire03) sendMessage(p json.RawMessage) (*a2a.SendMessageRequest, error) {
	return decodeAs(p, func(m *a2av03.MessageSendParams) (*a2a.SendMessageRequest, error) {
		req, err := m.ToSendMessageRequest()
		if err != nil {
			return nil, a2a.Errorf(a2a.CodeInvalidParams, "params.%v", err)
		}
		return req, nil
	})
}

func (wire03) getTask(p json.RawMessage) (*a2a.GetTaskRequest, error) {
	return decodeAs(p, func(q *a2av03.TaskQueryParams) (*a2a.GetTaskRequest, error) {
		return &a2a.GetTaskRequest{ID: q.ID, HistoryLength: q.HistoryLength}, nil
	})
}

// listTasks reads tasks/list, which 0.3 does not define, with the
// snake_case params a2a-go's 0.3 line sends.
func (wire03) listTasks(p json.RawMessage) (*a2a.ListTasksRequest, error) {
	return decodeAs(p, func(q *a2av03.ListTasksParams) (*a2a.ListTasksRequest, error) {
		req, err := q.ToListTasksRequest()
		if err != nil {
			return nil, a2a.Errorf(a2a.CodeInvalidParams, "params.%v", err)
		}
		return req, nil
	})
}

func (wire03) cancelTask(p json.RawMessage) (*a2a.CancelTaskRequest, error) {
	return decodeAs(p, func(q *a2av03.TaskIDParams) (*a2a.CancelTaskRequest, error) {
		return &a2a.CancelTaskRequest{ID: q.ID, Metadata: q.Metadata}, nil
	})
}

func (wire03) subscribeToTask(p json.RawMessage) (*a2a.SubscribeToTaskRequest, error) {
	return decodeAs(p, func(q *a2av03.TaskIDParams) (*a2a.SubscribeToTaskRequest, error) {
		return &a2a.SubscribeToTaskRequest{ID: q.ID}, nil
	})
}

func (wire03) createPushConfig(p json.RawMessage) (*a2a.TaskPushNotificationConfig, error) {
	return decodeAs(p, func(q *a2av03.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
		return q.PushNotificationConfig.ToPushConfig(q.TaskID), nil
	})
}

func (wire03) getPushConfig(p json.RawMessage) (*a2a.GetTaskPushNotificationConfigRequest, error) {
	return decodeAs(p, func(q *a2av03.PushConfigParams) (*a2a.GetTaskPushNotificationConfigRequest, error) {
		return &a2a.GetTaskPushNotificationConfigRequest{TaskID: q.ID, ID: q.PushNotificationConfigID}, nil
	})
}

func (wire03) listPushConfigs(p json.RawMessage) (*a2a.ListTaskPushNotificationConfigsRequest, error) {
	return decodeAs(p, func(q *a2av03.TaskIDParams) (*a2a.ListTaskPushNotificationConfigsRequest, error) {
		return &a2a.ListTaskPushNotificationConfigsRequest{TaskID: q.ID}, nil
	})
}

func (wire03) deletePushConfig(p json.RawMessage) (*a2a.DeleteTaskPushNotificationConfigRequest, error) {
	return decodeAs(p, func(q *a2av03.PushConfigParams) (*a2a.DeleteTaskPushNotificationConfigRequest, error) {
		return &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: q.ID, ID: q.PushNotificationConfigID}, nil
	})
}

// getExtendedCard: agent/getAuthenticatedExtendedCard takes no params.
func (wire03) getExtendedCard(json.RawMessage) (*a2a.GetExtendedAgentCardRequest, error) {
	return &a2a.GetExtendedAgentCardRequest{}, nil
}

func (wire03) event(ev a2a.Event) any { return a2av03.FromEvent(ev) }

func (wire03) task(t *a2a.Task) any { return a2av03.FromTask(t) }

func (wire03) tasks(r *a2a.ListTasksResponse) any { return a2av03.FromListTasksResponse(r) }

func (wire03) pushConfig(c *a2a.TaskPushNotificationConfig) any { return a2av03.FromPushConfig(c) }

// pushConfigs answers 0.3's list with a bare array.
func (wire03) pushConfigs(r *a2a.ListTaskPushNotificationConfigsResponse) any {
	out := make([]*a2av03.TaskPushNotificationConfig, len(r.Configs))
	for i := range r.Configs {
		out[i] = a2av03.FromPushConfig(&r.Configs[i])
	}
	return out
}

// deleted: 0.3 answers a deletion with null.
func (wire03) deleted() any { return nil }

func (wire03) card(c *a2a.AgentCard) (any, error) {
	b, err := a2av03.CardJSON(c)
	if err != nil {
		return nil, fmt.Errorf("encode extended card: %w", err)
	}
	return json.RawMessage(b), nil
}
