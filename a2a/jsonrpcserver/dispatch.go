package jsonrpcserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// emptyResult is the 1.0 reply of DeleteTaskPushNotificationConfig
// (google.protobuf.Empty); 0.3 replies null.
var emptyResult = json.RawMessage("{}")

// call decodes the params of a unary operation in the wire's version, calls
// the handler and returns the result in the same version.
func (s *Server) call(ctx context.Context, op jsonrpc.Op, version string, params json.RawMessage) (any, error) {
	v03 := version == a2a.Version03
	h := s.h
	switch op {
	case jsonrpc.OpSendMessage:
		req, err := decodeSend(version, params)
		if err != nil {
			return nil, err
		}
		ev, err := h.SendMessage(ctx, req)
		if err != nil {
			return nil, err
		}
		if v03 {
			return a2av03.FromEvent(ev), nil
		}
		return a2a.Wrap(ev), nil

	case jsonrpc.OpGetTask:
		var req a2a.GetTaskRequest
		if v03 {
			var p a2av03.TaskQueryParams
			if err := jsonrpc.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			req = a2a.GetTaskRequest{ID: p.ID, HistoryLength: p.HistoryLength}
		} else if err := jsonrpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
		t, err := h.GetTask(ctx, &req)
		if err != nil {
			return nil, err
		}
		if v03 {
			return a2av03.FromTask(t), nil
		}
		return t, nil

	case jsonrpc.OpListTasks:
		var req *a2a.ListTasksRequest
		if v03 {
			var p a2av03.ListTasksParams
			if err := jsonrpc.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			r, err := p.ToListTasksRequest()
			if err != nil {
				return nil, a2a.Errorf(a2a.CodeInvalidParams, "params.%v", err)
			}
			req = r
		} else {
			req = new(a2a.ListTasksRequest)
			if err := jsonrpc.DecodeParams(params, req); err != nil {
				return nil, err
			}
		}
		resp, err := h.ListTasks(ctx, req)
		if err != nil {
			return nil, err
		}
		if v03 {
			return a2av03.FromListTasksResponse(resp), nil
		}
		return resp, nil

	case jsonrpc.OpCancelTask:
		var req a2a.CancelTaskRequest
		if v03 {
			var p a2av03.TaskIDParams
			if err := jsonrpc.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			req = a2a.CancelTaskRequest{ID: p.ID, Metadata: p.Metadata}
		} else if err := jsonrpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
		t, err := h.CancelTask(ctx, &req)
		if err != nil {
			return nil, err
		}
		if v03 {
			return a2av03.FromTask(t), nil
		}
		return t, nil

	case jsonrpc.OpCreatePushConfig:
		var req *a2a.TaskPushNotificationConfig
		if v03 {
			var p a2av03.TaskPushNotificationConfig
			if err := jsonrpc.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			req = p.PushNotificationConfig.ToPushConfig(p.TaskID)
		} else {
			req = new(a2a.TaskPushNotificationConfig)
			if err := jsonrpc.DecodeParams(params, req); err != nil {
				return nil, err
			}
		}
		c, err := h.CreateTaskPushNotificationConfig(ctx, req)
		if err != nil {
			return nil, err
		}
		if v03 {
			return a2av03.FromPushConfig(c), nil
		}
		return c, nil

	case jsonrpc.OpGetPushConfig:
		var req a2a.GetTaskPushNotificationConfigRequest
		if v03 {
			var p a2av03.PushConfigParams
			if err := jsonrpc.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			req = a2a.GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
		} else if err := jsonrpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
		c, err := h.GetTaskPushNotificationConfig(ctx, &req)
		if err != nil {
			return nil, err
		}
		if v03 {
			return a2av03.FromPushConfig(c), nil
		}
		return c, nil

	case jsonrpc.OpListPushConfigs:
		var req a2a.ListTaskPushNotificationConfigsRequest
		if v03 {
			var p a2av03.TaskIDParams
			if err := jsonrpc.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			req = a2a.ListTaskPushNotificationConfigsRequest{TaskID: p.ID}
		} else if err := jsonrpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
		resp, err := h.ListTaskPushNotificationConfigs(ctx, &req)
		if err != nil {
			return nil, err
		}
		if v03 {
			out := make([]*a2av03.TaskPushNotificationConfig, len(resp.Configs))
			for i := range resp.Configs {
				out[i] = a2av03.FromPushConfig(&resp.Configs[i])
			}
			return out, nil
		}
		return resp, nil

	case jsonrpc.OpDeletePushConfig:
		var req a2a.DeleteTaskPushNotificationConfigRequest
		if v03 {
			var p a2av03.PushConfigParams
			if err := jsonrpc.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			req = a2a.DeleteTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}
		} else if err := jsonrpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
		if err := h.DeleteTaskPushNotificationConfig(ctx, &req); err != nil {
			return nil, err
		}
		if v03 {
			return nil, nil
		}
		return emptyResult, nil

	case jsonrpc.OpGetExtendedAgentCard:
		card, err := h.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
		if err != nil {
			return nil, err
		}
		if v03 {
			b, err := a2av03.CardJSON(card)
			if err != nil {
				return nil, fmt.Errorf("encode extended card: %w", err)
			}
			return json.RawMessage(b), nil
		}
		return card, nil
	}
	return nil, a2a.Errorf(a2a.CodeMethodNotFound, "method %s is not served here", op)
}

// decodeSend decodes SendMessage / message/send params.
func decodeSend(version string, params json.RawMessage) (*a2a.SendMessageRequest, error) {
	if version == a2a.Version03 {
		var p a2av03.MessageSendParams
		if err := jsonrpc.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		req, err := p.ToSendMessageRequest()
		if err != nil {
			return nil, a2a.Errorf(a2a.CodeInvalidParams, "params.%v", err)
		}
		return req, nil
	}
	req := new(a2a.SendMessageRequest)
	if err := jsonrpc.DecodeParams(params, req); err != nil {
		return nil, err
	}
	return req, nil
}
