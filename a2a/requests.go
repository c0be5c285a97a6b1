package a2a

import "time"

// SendMessageRequest is the input of SendMessage and SendStreamingMessage.
type SendMessageRequest struct {
	Tenant        string                    `json:"tenant,omitempty"`
	Message       *Message                  `json:"message"`
	Configuration *SendMessageConfiguration `json:"configuration,omitempty"`
	Metadata      map[string]any            `json:"metadata,omitempty"`
}

// SendMessageConfiguration tunes a send.
type SendMessageConfiguration struct {
	// AcceptedOutputModes lists the media types the client accepts.
	AcceptedOutputModes []string `json:"acceptedOutputModes,omitempty"`
	// TaskPushNotificationConfig registers a webhook for the task's
	// events. Its TaskID is filled in by the server.
	TaskPushNotificationConfig *TaskPushNotificationConfig `json:"taskPushNotificationConfig,omitempty"`
	// HistoryLength caps the history returned: nil means all, 0 none.
	HistoryLength *int `json:"historyLength,omitempty"`
	// ReturnImmediately makes SendMessage return as soon as the task
	// exists instead of waiting for it to settle.
	ReturnImmediately bool `json:"returnImmediately,omitempty"`
	// IfGenerationMatch makes a message on an existing task conditional:
	// the server refuses it with CodeTaskGenerationMismatch unless the
	// task's generation is still this one when the message is taken (see
	// GenerationExtension, which must be active). A message that starts
	// a new task ignores it.
	IfGenerationMatch *Generation `json:"ifGenerationMatch,omitempty"`
}

// GetTaskRequest is the input of GetTask.
type GetTaskRequest struct {
	Tenant        string `json:"tenant,omitempty"`
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength,omitempty"`
	// CurrentGeneration makes GetTask wait until the task's generation is
	// above it, or GenerationWaitMax has passed, before it answers (see
	// GenerationExtension, which must be active): a long poll. A task
	// already past it, or in a terminal state, is answered at once.
	CurrentGeneration *Generation `json:"currentGeneration,omitempty"`
}

// ListTasksRequest is the input of ListTasks. Zero fields do not filter.
type ListTasksRequest struct {
	Tenant    string    `json:"tenant,omitempty"`
	ContextID string    `json:"contextId,omitempty"`
	Status    TaskState `json:"status,omitempty"`
	// PageSize is 1 to 100; nil means 50.
	PageSize  *int   `json:"pageSize,omitempty"`
	PageToken string `json:"pageToken,omitempty"`
	// HistoryLength caps each task's history: nil means all, 0 none.
	HistoryLength *int `json:"historyLength,omitempty"`
	// StatusTimestampAfter keeps tasks whose status time is at or after it.
	StatusTimestampAfter *time.Time `json:"statusTimestampAfter,omitempty"`
	// IncludeArtifacts returns artifacts, which are omitted by default.
	IncludeArtifacts bool `json:"includeArtifacts,omitempty"`
}

// ListTasksResponse is one page of ListTasks, newest status first.
type ListTasksResponse struct {
	Tasks []*Task `json:"tasks"`
	// NextPageToken is empty on the last page.
	NextPageToken string `json:"nextPageToken"`
	PageSize      int    `json:"pageSize"`
	// TotalSize counts all matching tasks, across pages.
	TotalSize int `json:"totalSize"`
}

// CancelTaskRequest is the input of CancelTask.
type CancelTaskRequest struct {
	Tenant   string         `json:"tenant,omitempty"`
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// SubscribeToTaskRequest is the input of SubscribeToTask.
type SubscribeToTaskRequest struct {
	Tenant string `json:"tenant,omitempty"`
	ID     string `json:"id"`
}

// TaskPushNotificationConfig is a webhook registered for a task's events.
type TaskPushNotificationConfig struct {
	Tenant string `json:"tenant,omitempty"`
	// ID tells several webhooks of one task apart; the server assigns one
	// when it is empty.
	ID     string `json:"id,omitempty"`
	TaskID string `json:"taskId,omitempty"`
	URL    string `json:"url"`
	// Token is echoed to the webhook so it can check the sender.
	Token          string              `json:"token,omitempty"`
	Authentication *AuthenticationInfo `json:"authentication,omitempty"`
}

// AuthenticationInfo is how the agent authenticates to a webhook: it sends
// "Authorization: <Scheme> <Credentials>".
type AuthenticationInfo struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials,omitempty"`
}

// GetTaskPushNotificationConfigRequest is the input of
// GetTaskPushNotificationConfig.
type GetTaskPushNotificationConfigRequest struct {
	Tenant string `json:"tenant,omitempty"`
	TaskID string `json:"taskId"`
	ID     string `json:"id"`
}

// ListTaskPushNotificationConfigsRequest is the input of
// ListTaskPushNotificationConfigs.
type ListTaskPushNotificationConfigsRequest struct {
	Tenant    string `json:"tenant,omitempty"`
	TaskID    string `json:"taskId"`
	PageSize  int    `json:"pageSize,omitempty"`
	PageToken string `json:"pageToken,omitempty"`
}

// ListTaskPushNotificationConfigsResponse is one page of a task's webhooks.
type ListTaskPushNotificationConfigsResponse struct {
	Configs       []TaskPushNotificationConfig `json:"configs"`
	NextPageToken string                       `json:"nextPageToken,omitempty"`
}

// DeleteTaskPushNotificationConfigRequest is the input of
// DeleteTaskPushNotificationConfig.
type DeleteTaskPushNotificationConfigRequest struct {
	Tenant string `json:"tenant,omitempty"`
	TaskID string `json:"taskId"`
	ID     string `json:"id"`
}

// GetExtendedAgentCardRequest is the input of GetExtendedAgentCard.
type GetExtendedAgentCardRequest struct {
	Tenant string `json:"tenant,omitempty"`
}
